/* renamers: threads made one after another, each of which names itself at
 * once and computes, for judging a profiler on threads it first sees under
 * the name they were born with.
 *
 * usage: renamers THREADS MS
 * Prints "ready PID", then makes THREADS threads in turn; each names itself
 * "worker" and computes MS ms of its own CPU (CLOCK_THREAD_CPUTIME_ID) in
 * worker_work, and the main thread joins it before making the next. At the
 * end it prints the kernel's account:
 *   workers NS     (the workers' CPU, each read as it ends)
 *   process NS     (CLOCK_PROCESS_CPUTIME_ID, every thread's, at the end) */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static __attribute__((noinline)) uint64_t worker_work(uint64_t ns)
{
	uint64_t x = 1, start = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) - start < ns)
		for (int i = 0; i < 2000; i++) {
			x = x * 6364136223846793005u + 1442695040888963407u;
			__asm__ volatile("" : "+r"(x));
		}
	return x;
}

static void *worker(void *arg)
{
	pthread_setname_np(pthread_self(), "worker");
	uint64_t x = worker_work(*(const uint64_t *)arg);
	__asm__ volatile("" : "+r"(x));
	return (void *)(uintptr_t)clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: renamers THREADS MS\n");
		return 2;
	}
	int n = atoi(argv[1]);
	uint64_t ns = (uint64_t)atoi(argv[2]) * 1000000u, workers = 0;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (int i = 0; i < n; i++) {
		pthread_t th;
		void *cpu;
		if (pthread_create(&th, NULL, worker, &ns) || pthread_join(th, &cpu))
			return 1;
		workers += (uint64_t)(uintptr_t)cpu;
	}
	printf("workers %llu\nprocess %llu\n", (unsigned long long)workers,
	       (unsigned long long)clock_ns(CLOCK_PROCESS_CPUTIME_ID));
	return 0;
}
