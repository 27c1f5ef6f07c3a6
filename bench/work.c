/* work: a fixed amount of CPU-bound work shared by N threads, timed by itself.
 *
 * usage: work UNITS [THREADS]     (THREADS default 1)
 *
 * UNITS units of work (one unit: a fixed number of dependent multiply-adds
 * at the bottom of a 12-deep call chain) are handed out from a shared atomic
 * counter to THREADS threads, so the total work is the same for any thread
 * count and wall time measures how much CPU the target got. Prints
 * "ready PID" on stdout when the threads start and
 * "elapsed SECONDS cpu SECONDS checksum X" when the last unit is done.
 * Built -O2 -fomit-frame-pointer (and a -fno-omit-frame-pointer variant for
 * perf -g). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))

static atomic_long next_unit;
static long total_units;

NOINLINE static unsigned long spin(unsigned long x)
{
	for (unsigned i = 0; i < 50000u; i++) {
		x = x * 6364136223846793005ul + 1442695040888963407ul;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

/* A chain link: calls NEXT, then works on its result (no tail call); each
 * adds its own constant so identical code folding cannot merge them. */
#define LINK(name, next, k)                                                   \
	NOINLINE static unsigned long name(unsigned long x)                   \
	{                                                                     \
		unsigned long r = next(x + (k));                              \
		__asm__ volatile("" : "+r"(r));                               \
		return r ^ (k);                                               \
	}

LINK(level10, spin, 10)
LINK(level9, level10, 9)
LINK(level8, level9, 8)
LINK(level7, level8, 7)
LINK(level6, level7, 6)
LINK(level5, level6, 5)
LINK(level4, level5, 4)
LINK(level3, level4, 3)
LINK(level2, level3, 2)
LINK(level1, level2, 1)

NOINLINE static unsigned long do_unit(unsigned long x)
{
	unsigned long r = level1(x);
	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

static void *worker(void *arg)
{
	unsigned long x = (unsigned long)arg;
	while (atomic_fetch_add_explicit(&next_unit, 1, memory_order_relaxed) < total_units)
		x = do_unit(x);
	return (void *)x;
}

static double clock_s(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: work UNITS [THREADS]\n");
		return 1;
	}
	total_units = atol(argv[1]);
	int nthreads = argc > 2 ? atoi(argv[2]) : 1;
	if (total_units < 1 || nthreads < 1 || nthreads > 1024) {
		fprintf(stderr, "work: bad arguments\n");
		return 1;
	}
	pthread_t *tids = calloc((size_t)nthreads, sizeof *tids);
	if (!tids)
		return 1;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	for (int i = 1; i < nthreads; i++)
		if (pthread_create(&tids[i], NULL, worker, (void *)(unsigned long)(i + 1)) != 0) {
			fprintf(stderr, "work: pthread_create failed\n");
			return 1;
		}
	unsigned long sum = (unsigned long)worker((void *)1ul);
	for (int i = 1; i < nthreads; i++) {
		void *r;
		pthread_join(tids[i], &r);
		sum += (unsigned long)r;
	}
	double t1 = clock_s(CLOCK_MONOTONIC), c1 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	printf("elapsed %.6f cpu %.6f checksum %lx\n", t1 - t0, c1 - c0, sum);
	free(tids);
	return 0;
}
