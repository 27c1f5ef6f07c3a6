/* phases: a known timeline, for checking the timeline outputs.
 *
 * usage: phases
 *
 * Prints "ready PID" and waits for a line on stdin (or its end), so the
 * profiler is attached before anything happens; then, timed from that line:
 *   main thread ("phases")  phase_one() spins until 600 ms,
 *                           phase_two() spins until 1200 ms, then joins;
 *   thread "late"           sleeps until 300 ms, late_work() spins until
 *                           900 ms, then the thread exits.
 * Prints "done" and exits after the join. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static uint64_t start_ns;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Spin until UNTIL_MS after the start. */
static __attribute__((noinline)) unsigned long spin_until(uint64_t until_ms, unsigned long h)
{
	while (now_ns() < start_ns + until_ms * 1000000u)
		for (int i = 0; i < 1000; i++)
			h = h * 6364136223846793005ul + 1442695040888963407ul;
	return h;
}

static __attribute__((noinline)) unsigned long phase_one(void)
{
	unsigned long h = spin_until(600, 1);
	__asm__ volatile("" : "+r"(h));  /* no tail call: stay on the stack */
	return h + 1;
}

static __attribute__((noinline)) unsigned long phase_two(void)
{
	unsigned long h = spin_until(1200, 2);
	__asm__ volatile("" : "+r"(h));  /* no tail call: stay on the stack */
	return h + 1;
}

static __attribute__((noinline)) unsigned long late_work(void)
{
	unsigned long h = spin_until(900, 3);
	__asm__ volatile("" : "+r"(h));  /* no tail call: stay on the stack */
	return h + 1;
}

static volatile unsigned long sink;

static void *late(void *arg)
{
	(void)arg;
	struct timespec wake = { .tv_sec = (time_t)((start_ns + 300000000u) / 1000000000u),
				 .tv_nsec = (long)((start_ns + 300000000u) % 1000000000u) };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wake, NULL) != 0)
		;
	sink = late_work();
	return NULL;
}

int main(void)
{
	char line[64];
	pthread_t t;

	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (!fgets(line, sizeof line, stdin))
		line[0] = '\0';
	start_ns = now_ns();
	if (pthread_create(&t, NULL, late, NULL) != 0)
		return 1;
	pthread_setname_np(t, "late");
	sink = phase_one();
	sink = phase_two();
	pthread_join(t, NULL);
	printf("done\n");
	return 0;
}
