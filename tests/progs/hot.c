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
 * Prints "ready PID" on stdout once running. With HOT_WAIT_TRACED=1 in the
 * environment it first sleeps until a tracer attaches (TracerPid, read every
 * millisecond), prints "traced CPU_NS", the CPU it used until then, and runs
 * SECONDS from there: a test's window from the attach on is exactly its CPU
 * after that line, however late the attach came. */
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

/* Each leaf starts a 64-byte line, so the three loops sit alike in the
 * instruction fetch: unaligned, leaf_a's loop crossed a 32-byte boundary
 * where leaf_b's did not, and its units ran 3% slower (CLOCK_THREAD_CPUTIME_ID
 * around each unit gave 50.8/29.5/19.7, perf record -p 51/29.4/19.6). */
#define LEAF __attribute__((aligned(64))) NOINLINE
LEAF unsigned long long leaf_a(unsigned long long x) { SPIN(x, 11); return x; }
LEAF unsigned long long leaf_b(unsigned long long x) { SPIN(x, 13); return x; }
LEAF unsigned long long leaf_c(unsigned long long x) { SPIN(x, 17); return x; }

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

static long long process_cpu_ns(void)
{
	struct timespec cpu;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
	return (long long)cpu.tv_sec * 1000000000LL + cpu.tv_nsec;
}

/* HOT_WAIT_TRACED: sleep until /proc/self/status names a tracer. */
static void wait_traced(void)
{
	const struct timespec ms = { 0, 1000000 };
	for (;;) {
		char buf[4096];
		FILE *f = fopen("/proc/self/status", "r");
		long tracer = 0;
		while (f && fgets(buf, sizeof buf, f))
			if (sscanf(buf, "TracerPid: %ld", &tracer) == 1)
				break;
		if (f)
			fclose(f);
		if (tracer > 0)
			break;
		nanosleep(&ms, NULL);
	}
	printf("traced %lld\n", process_cpu_ns());
	fflush(stdout);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One round: 5 units in chain a, 3 in b, 2 in c -> 50/30/20, in an order
 * shuffled every round, so that no sampling clock can lock onto the phase of
 * the round and over-count one chain. The shuffle's generator (splitmix64)
 * is seeded by the process, its thread and the time, so runs differ. (With
 * the leaves unaligned and xorshift32 from one fixed seed, perf record -p
 * gave leaf_a 53.7 and 54.2% in 2,470 samples, and a CI run of csampler 53.1;
 * with both changed, 12 runs of perf -p beside a busy loop gave 49.4/30.2/20.4,
 * leaf_a's spread 0.8 points where its count allows 1.0.) */
NOINLINE void work_round(unsigned long long *x)
{
	static __thread unsigned long long rng;
	char order[10] = { 'a', 'a', 'a', 'a', 'a', 'b', 'b', 'b', 'c', 'c' };
	if (rng == 0)
		rng = ((unsigned long long)getpid() << 32) ^ (unsigned long long)(now() * 1e9) ^ *x;
	for (int i = 9; i > 0; i--) {
		unsigned long long z = (rng += 0x9e3779b97f4a7c15ull);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		z ^= z >> 31;
		int j = (int)((z >> 32) % (unsigned)(i + 1));
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
	const char *wait = getenv("HOT_WAIT_TRACED");
	if (wait && *wait == '1')
		wait_traced();
	pthread_t t[256];
	for (int i = 1; i < nthreads; i++)
		pthread_create(&t[i], NULL, worker, (void *)(size_t)(i + 1));
	worker((void *)(size_t)1);
	for (int i = 1; i < nthreads; i++)
		pthread_join(t[i], NULL);
	/* the CPU the process used, for tests that judge sample counts against
	 * it rather than against wall time (a busy machine gives less) */
	printf("cpu %lld\n", process_cpu_ns());
	return 0;
}
