/* hot: a CPU-bound fixture with a known profile.
 *
 * Three leaf functions share the CPU 50/30/20 (leaf_a/leaf_b/leaf_c). Each is
 * reached through its own chain of 10 distinct functions (a1..a10 -> leaf_a),
 * all noinline and noclone; every call is followed by work on its result so no
 * call is a tail call, and each function adds its own constant so identical
 * code folding cannot merge them. Built -O2 -fomit-frame-pointer: only DWARF
 * CFI unwinds it.
 *
 * usage: hot [SECONDS] [THREADS]   (default: run until killed, 1 thread)
 * Prints "ready PID" on stdout once running. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))

/* One unit of work: a fixed number of dependent multiply-adds (~25 us), so a
 * round (10 units) is much shorter than a sampling period and the shares do
 * not alias with the sampling clock. */
#define SPIN(seed, salt)                                                     \
	do {                                                                  \
		for (unsigned i_ = 0; i_ < 20000u; i_++) {                    \
			seed = seed * 6364136223846793005ull + (salt);        \
			__asm__ volatile("" : "+r"(seed));                    \
		}                                                             \
	} while (0)

NOINLINE unsigned long long leaf_a(unsigned long long x) { SPIN(x, 11); return x; }
NOINLINE unsigned long long leaf_b(unsigned long long x) { SPIN(x, 13); return x; }
NOINLINE unsigned long long leaf_c(unsigned long long x) { SPIN(x, 17); return x; }

/* A chain link: calls NEXT, then mixes in its own constant (no tail call). */
#define LINK(name, next, k)                                                   \
	NOINLINE unsigned long long name(unsigned long long x)               \
	{                                                                     \
		unsigned long long r = next(x + (k));                         \
		__asm__ volatile("" : "+r"(r));                               \
		return r ^ (k);                                               \
	}

#define CHAIN(p, K)                                                           \
	LINK(p##10, leaf_##p, K + 10) LINK(p##9, p##10, K + 9)                \
	LINK(p##8, p##9, K + 8) LINK(p##7, p##8, K + 7)                       \
	LINK(p##6, p##7, K + 6) LINK(p##5, p##6, K + 5)                       \
	LINK(p##4, p##5, K + 4) LINK(p##3, p##4, K + 3)                       \
	LINK(p##2, p##3, K + 2) LINK(p##1, p##2, K + 1)

CHAIN(a, 100)
CHAIN(b, 200)
CHAIN(c, 300)

static volatile unsigned long long sink;
static double run_seconds;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One round: 5 units in chain a, 3 in b, 2 in c -> 50/30/20, in an order
 * shuffled every round, so that no sampling clock can lock onto the phase of
 * the round and over-count one chain. */
NOINLINE void work_round(unsigned long long *x)
{
	static __thread unsigned rng = 2463534242u;
	char order[10] = { 'a', 'a', 'a', 'a', 'a', 'b', 'b', 'b', 'c', 'c' };
	for (int i = 9; i > 0; i--) {
		rng ^= rng << 13; rng ^= rng >> 17; rng ^= rng << 5;  /* xorshift32 */
		int j = (int)(rng % (unsigned)(i + 1));
		char t = order[i]; order[i] = order[j]; order[j] = t;
	}
	for (int i = 0; i < 10; i++)
		*x = order[i] == 'a' ? a1(*x) : order[i] == 'b' ? b1(*x) : c1(*x);
}

static void *worker(void *arg)
{
	unsigned long long x = (unsigned long long)(size_t)arg;
	double end = run_seconds > 0 ? now() + run_seconds : 0;
	while (end == 0 || now() < end)
		work_round(&x);
	sink = x;
	return NULL;
}

int main(int argc, char **argv)
{
	int nthreads = argc > 2 ? atoi(argv[2]) : 1;
	run_seconds = argc > 1 ? atof(argv[1]) : 0;
	if (nthreads < 1 || nthreads > 256)
		nthreads = 1;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	pthread_t t[256];
	for (int i = 1; i < nthreads; i++)
		pthread_create(&t[i], NULL, worker, (void *)(size_t)(i + 1));
	worker((void *)(size_t)1);
	for (int i = 1; i < nthreads; i++)
		pthread_join(t[i], NULL);
	/* the CPU the process used, for tests that judge sample counts against
	 * it rather than against wall time (a busy machine gives less) */
	struct timespec cpu;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
	printf("cpu %lld\n", (long long)cpu.tv_sec * 1000000000LL + cpu.tv_nsec);
	return 0;
}
