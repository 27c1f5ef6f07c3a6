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

/* the CPU each phase had (its thread's clock), printed at the end: on a busy
 * machine a phase of 600 ms gets less than 600 ms of CPU */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
static uint64_t cpu_one, cpu_two, cpu_late;

static void *late(void *arg)
{
	(void)arg;
	struct timespec wake = { .tv_sec = (time_t)((start_ns + 300000000u) / 1000000000u),
				 .tv_nsec = (long)((start_ns + 300000000u) % 1000000000u) };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wake, NULL) != 0)
		;
	uint64_t c0 = thread_cpu_ns();
	sink = late_work();
	cpu_late = thread_cpu_ns() - c0;
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
	uint64_t c0 = thread_cpu_ns();
	sink = phase_one();
	uint64_t c1 = thread_cpu_ns();
	sink = phase_two();
	cpu_one = c1 - c0;
	cpu_two = thread_cpu_ns() - c1;
	pthread_join(t, NULL);
	printf("cpu phase_one %llu\ncpu phase_two %llu\ncpu late_work %llu\ndone\n",
	       (unsigned long long)cpu_one, (unsigned long long)cpu_two, (unsigned long long)cpu_late);
	return 0;
}
