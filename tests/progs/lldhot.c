/* lldhot: a CPU-bound chain linked by lld as a PIE.
 *
 * lld places the text PT_LOAD at a file offset that is not page aligned
 * (p_offset % 4096 != 0, unlike GNU ld), which breaks unwinders that assume
 * the mapping offset equals p_offset. Chain: main -> lld_outer -> lld_middle
 * -> lld_inner -> lld_leaf, no tail calls, -O2 -fomit-frame-pointer.
 *
 * usage: lldhot [SECONDS]   (default: run until killed)
 * Prints "ready PID" on stdout once running. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))

static volatile unsigned long long sink;

NOINLINE unsigned long long lld_leaf(unsigned long long x)
{
	for (unsigned i = 0; i < 400000u; i++) {
		x = x * 6364136223846793005ull + 29;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

#define LINK(name, next, k)                                                   \
	NOINLINE unsigned long long name(unsigned long long x)               \
	{                                                                     \
		unsigned long long r = next(x + (k));                         \
		__asm__ volatile("" : "+r"(r));                               \
		return r ^ (k);                                               \
	}

LINK(lld_inner, lld_leaf, 3)
LINK(lld_middle, lld_inner, 2)
LINK(lld_outer, lld_middle, 1)

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0;
	double end = seconds > 0 ? now() + seconds : 0;
	unsigned long long x = 5;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (end == 0 || now() < end)
		x = lld_outer(x);
	sink = x;
	return 0;
}
