/* inline: a CPU-bound chain outer -> mid -> inner where mid and inner are
 * always_inline, so every sample is in outer's code and only DWARF's inline
 * records name mid and inner. The source lines the test checks are marked
 * with LINE-* comments (the test finds them with grep -n).
 *
 * usage: inline [SECONDS]   (default: run until killed)
 * Prints "ready PID" on stdout once running. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))
#define ALWAYS_INLINE static inline __attribute__((always_inline))

ALWAYS_INLINE unsigned long long inner(unsigned long long x)
{
	for (unsigned i = 0; i < 300000u; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull; /* LINE-INNER */
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

ALWAYS_INLINE unsigned long long mid(unsigned long long x)
{
	unsigned long long r = inner(x + 3); /* LINE-MID */
	__asm__ volatile("" : "+r"(r));
	return r ^ 0x55;
}

NOINLINE unsigned long long outer(unsigned long long x)
{
	unsigned long long r = mid(x + 7); /* LINE-OUTER */
	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	unsigned long long acc = 1;
	for (;;) {
		acc = outer(acc);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (seconds > 0 && (double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 >= seconds)
			break;
	}
	return (int)(acc & 1) * 0;
}
