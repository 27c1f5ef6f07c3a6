/* execer: a multi-threaded program whose second thread calls execve.
 *
 * usage: execer [SECONDS]      (default 1)
 * Phase 1: main spins in before_exec while a second thread sleeps SECONDS,
 * then execs this program again ("execer --after SECONDS"): the exec'ing
 * thread is not the leader, so its tid changes under a tracer.
 * Phase 2: spins in after_exec for SECONDS, prints "after PID" and exits 0.
 * Prints "ready PID" in phase 1. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double seconds = 1;
static char *self_path;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static unsigned long before_exec(unsigned long x)
{
	for (unsigned i = 0; i < 100000u; i++) {
		x = x * 6364136223846793005ul + 3;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

__attribute__((noinline)) static unsigned long after_exec(unsigned long x)
{
	for (unsigned i = 0; i < 100000u; i++) {
		x = x * 6364136223846793005ul + 5;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

static void *exec_thread(void *arg)
{
	(void)arg;
	struct timespec ts = { (time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9) };
	nanosleep(&ts, NULL);
	char secs[32];
	snprintf(secs, sizeof secs, "%g", seconds);
	char *argv[] = { (char *)"execer", (char *)"--after", secs, NULL };
	execv(self_path, argv);
	perror("execv");
	exit(1);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 2 && strcmp(argv[1], "--after") == 0) {
		seconds = atof(argv[2]);
		double end = now() + seconds;
		unsigned long x = 1;
		while (now() < end)
			x = after_exec(x);
		printf("after %d %lu\n", (int)getpid(), x & 1);
		return 0;
	}
	if (argc > 1)
		seconds = atof(argv[1]);
	self_path = realpath("/proc/self/exe", NULL);
	if (!self_path)
		return 1;
	printf("ready %d\n", (int)getpid());
	pthread_t t;
	pthread_create(&t, NULL, exec_thread, NULL);
	unsigned long x = 1;
	for (;;)
		x = before_exec(x);
}
