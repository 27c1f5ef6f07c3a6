/* busy: N threads that only compute (default 8), named "busy-1".."busy-N",
 * each in thread_busy -> busy_leaf. With more threads than CPUs most of them
 * wait for a CPU at any moment, which is what sampler_oversubscribed needs.
 *
 * usage: busy [N]    (1..64)
 * Prints "ready PID" once every thread runs; runs until killed. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))
#define MAX_THREADS 64

static pthread_barrier_t started;

NOINLINE static void busy_leaf(void)
{
	unsigned long long x = 1;
	for (;;) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
}

NOINLINE static void *thread_busy(void *arg)
{
	char name[16];
	snprintf(name, sizeof name, "busy-%d", (int)(long)arg);
	pthread_setname_np(pthread_self(), name);
	pthread_barrier_wait(&started);
	busy_leaf();
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 8;
	pthread_t tids[MAX_THREADS];

	if (n < 1 || n > MAX_THREADS) {
		fprintf(stderr, "usage: busy [N]   (1..%d)\n", MAX_THREADS);
		return 2;
	}
	pthread_barrier_init(&started, NULL, (unsigned)n + 1);
	for (long i = 0; i < n; i++)
		if (pthread_create(&tids[i], NULL, thread_busy, (void *)(i + 1)) != 0) {
			perror("pthread_create");
			return 1;
		}
	pthread_barrier_wait(&started);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (long i = 0; i < n; i++)
		pthread_join(tids[i], NULL);
	return 0;
}
