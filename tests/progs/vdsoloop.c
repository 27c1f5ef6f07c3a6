/* vdsoloop: spends its time calling clock_gettime, which the vdso serves
 * without a system call, so samples land in [vdso] code.
 *
 * usage: vdsoloop [SECONDS [thread]]   (SECONDS 0: run until killed)
 * With "thread", a thread made with pthread_create loops instead (main
 * waits in pthread_join), on CLOCK_THREAD_CPUTIME_ID, which the vdso
 * serves through its system-call fallback: samples stop in the vdso's
 * syscall, in a thread whose stack was mapped after csampler read the
 * mappings (launched).
 * Prints "ready PID" on stdout once running. */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double seconds;
static clockid_t clock_id = CLOCK_MONOTONIC;

__attribute__((noinline)) static void *vdso_loop(void *arg)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	unsigned long long sum = 0;
	for (;;) {
		for (int i = 0; i < 1000; i++) {
			clock_gettime(clock_id, &t);
			sum += (unsigned long long)t.tv_nsec;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (seconds > 0 && (double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 >= seconds)
			break;
	}
	return (void *)(unsigned long)(sum & 1);
}

int main(int argc, char **argv)
{
	seconds = argc > 1 ? atof(argv[1]) : 0;
	bool thread = argc > 2 && strcmp(argv[2], "thread") == 0;
	pthread_t th;
	if (thread) {
		clock_id = CLOCK_THREAD_CPUTIME_ID;
		if (pthread_create(&th, NULL, vdso_loop, NULL) != 0)
			return 2;
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (thread)
		pthread_join(th, NULL);
	else
		vdso_loop(NULL);
	return 0;
}
