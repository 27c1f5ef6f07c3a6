/* recurse: a deep stack of known depth.
 *
 * main calls recurse(DEPTH); each recurse frame holds a small buffer, calls
 * itself with depth - 1 and then works on the result (no tail call), until
 * depth 1 calls bottom_spin, which burns CPU until the time is up. So nearly
 * every sample is main;recurse x DEPTH;bottom_spin. Built -O2
 * -fomit-frame-pointer: only DWARF CFI unwinds it.
 *
 * usage: recurse [DEPTH] [SECONDS]   (default: 300 frames, run until killed)
 * Prints "ready PID" on stdout once running. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))

static double end_time;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

NOINLINE unsigned long long bottom_spin(unsigned long long x)
{
	do {
		for (unsigned i = 0; i < 1000000u; i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			__asm__ volatile("" : "+r"(x));
		}
	} while (end_time == 0 || now() < end_time);
	return x;
}

NOINLINE unsigned long long recurse(int depth, unsigned long long x)
{
	volatile unsigned char pad[48];
	for (unsigned i = 0; i < sizeof pad; i++)
		pad[i] = (unsigned char)(x + i);
	unsigned long long r = depth > 1 ? recurse(depth - 1, x + pad[depth % sizeof pad])
					 : bottom_spin(x);
	__asm__ volatile("" : "+r"(r));
	return r ^ pad[0];
}

int main(int argc, char **argv)
{
	int depth = argc > 1 ? atoi(argv[1]) : 300;
	double seconds = argc > 2 ? atof(argv[2]) : 0;
	if (depth < 1 || depth > 100000)
		depth = 300;
	end_time = seconds > 0 ? now() + seconds : 0;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	unsigned long long r = recurse(depth, 7);
	return (int)(r & 1) * 0;
}
