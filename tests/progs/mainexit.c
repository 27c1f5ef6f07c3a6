/* mainexit: the main thread starts a worker that computes, then calls
 * pthread_exit: the process lives on with a zombie main thread, which stays
 * listed in /proc/PID/task and cannot be traced.
 *
 * usage: mainexit
 * Prints "ready PID" once the worker runs; runs until killed. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static pthread_barrier_t started;

__attribute__((noinline, noclone)) static void *worker(void *arg)
{
	volatile unsigned long long x = 1;

	pthread_barrier_wait(&started);
	for (;;)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return arg;
}

int main(void)
{
	pthread_t t;

	pthread_barrier_init(&started, NULL, 2);
	if (pthread_create(&t, NULL, worker, NULL) != 0) {
		perror("pthread_create");
		return 1;
	}
	pthread_barrier_wait(&started);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	pthread_exit(NULL);
}
