/* manystacks: a CPU-bound target whose samples are almost all unique stacks
 * over about 10k distinct return addresses.
 *
 * usage: manystacks SECONDS [THREADS]   (SECONDS 0: run until killed)
 *
 * Ten layers of 32 functions each. Every function picks one of 32 call
 * sites from a pseudo-random value, each site calling a different function
 * of the next layer (the last layer calls the leaf from 32 sites), so there
 * are 10 x 32 x 32 = 10240 distinct call sites and 32^10 possible stacks:
 * nearly every sample is a new stack. Prints "ready PID" once running and
 * "done CHECKSUM" at the end. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))

static volatile int stop_flag;

NOINLINE static unsigned long leaf(unsigned long x, unsigned long k)
{
	for (unsigned i = 0; i < 2000u; i++) {
		x = x * 6364136223846793005ul + k;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

static inline unsigned long mix(unsigned long x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdul;
	x ^= x >> 29;
	return x;
}

/* Two enumerators of 0..31 (a macro cannot expand itself). */
#define ENUM_A(M, a, b)                                                             \
	M(a, b, 0) M(a, b, 1) M(a, b, 2) M(a, b, 3) M(a, b, 4) M(a, b, 5) M(a, b, 6)  \
	M(a, b, 7) M(a, b, 8) M(a, b, 9) M(a, b, 10) M(a, b, 11) M(a, b, 12)          \
	M(a, b, 13) M(a, b, 14) M(a, b, 15) M(a, b, 16) M(a, b, 17) M(a, b, 18)       \
	M(a, b, 19) M(a, b, 20) M(a, b, 21) M(a, b, 22) M(a, b, 23) M(a, b, 24)       \
	M(a, b, 25) M(a, b, 26) M(a, b, 27) M(a, b, 28) M(a, b, 29) M(a, b, 30)       \
	M(a, b, 31)
#define ENUM_B(M, a)                                                                \
	M(a, 0) M(a, 1) M(a, 2) M(a, 3) M(a, 4) M(a, 5) M(a, 6) M(a, 7) M(a, 8)       \
	M(a, 9) M(a, 10) M(a, 11) M(a, 12) M(a, 13) M(a, 14) M(a, 15) M(a, 16)        \
	M(a, 17) M(a, 18) M(a, 19) M(a, 20) M(a, 21) M(a, 22) M(a, 23) M(a, 24)       \
	M(a, 25) M(a, 26) M(a, 27) M(a, 28) M(a, 29) M(a, 30) M(a, 31)

/* A call site of layer D calling function I of layer NEXT. */
#define SITE(next, i)                                                               \
	case i:                                                                     \
		r = f##next##_##i(x >> 5) + i;                                      \
		break;
#define LEAF_SITE(unused, i)                                                        \
	case i:                                                                     \
		r = leaf(x, 2 * i + 1) + i;                                         \
		break;
#define FUNC(d, next, i)                                                            \
	NOINLINE static unsigned long f##d##_##i(unsigned long x)                   \
	{                                                                           \
		unsigned long r = 0;                                                \
		x = mix(x + (i) + 32 * (d));                                        \
		switch (x & 31) { ENUM_B(SITE, next) }                              \
		__asm__ volatile("" : "+r"(r));                                     \
		return r ^ (i);                                                     \
	}
#define LAST(d, unused, i)                                                          \
	NOINLINE static unsigned long f##d##_##i(unsigned long x)                   \
	{                                                                           \
		unsigned long r = 0;                                                \
		x = mix(x + (i) + 32 * (d));                                        \
		switch (x & 31) { ENUM_B(LEAF_SITE, 0) }                            \
		__asm__ volatile("" : "+r"(r));                                     \
		return r ^ (i);                                                     \
	}

ENUM_A(LAST, 9, 0)
ENUM_A(FUNC, 8, 9)
ENUM_A(FUNC, 7, 8)
ENUM_A(FUNC, 6, 7)
ENUM_A(FUNC, 5, 6)
ENUM_A(FUNC, 4, 5)
ENUM_A(FUNC, 3, 4)
ENUM_A(FUNC, 2, 3)
ENUM_A(FUNC, 1, 2)
ENUM_A(FUNC, 0, 1)

NOINLINE static unsigned long root(unsigned long x)
{
	unsigned long r = 0;
	x = mix(x);
	switch (x & 31) { ENUM_B(SITE, 0) }
	__asm__ volatile("" : "+r"(r));
	return r;
}

static void *worker(void *arg)
{
	unsigned long x = (unsigned long)arg, sum = 0;
	while (!stop_flag) {
		sum += root(x);
		x = x * 2862933555777941757ul + 3037000493ul;
	}
	return (void *)sum;
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: manystacks SECONDS [THREADS]\n");
		return 2;
	}
	double seconds = atof(argv[1]);
	int nthreads = argc > 2 ? atoi(argv[2]) : 1;
	if (nthreads < 1 || nthreads > 64)
		return 2;
	pthread_t tids[64];
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&tids[i], NULL, worker, (void *)(unsigned long)(i + 1)) != 0)
			return 1;
	if (seconds > 0) {
		struct timespec ts = { (time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9) };
		while (nanosleep(&ts, &ts) != 0)
			;
		stop_flag = 1;
	} else {
		for (;;)
			pause();
	}
	unsigned long sum = 0;
	for (int i = 0; i < nthreads; i++) {
		void *r;
		pthread_join(tids[i], &r);
		sum += (unsigned long)r;
	}
	printf("done %lx\n", sum);
	return 0;
}
