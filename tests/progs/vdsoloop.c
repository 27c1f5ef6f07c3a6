/* vdsoloop: spends its time calling clock_gettime, which the vdso serves
 * without a system call, so samples land in [vdso] code.
 *
 * usage: vdsoloop [SECONDS]   (default: run until killed)
 * Prints "ready PID" on stdout once running. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	unsigned long long sum = 0;
	for (;;) {
		for (int i = 0; i < 1000; i++) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			sum += (unsigned long long)t.tv_nsec;
		}
		if (seconds > 0 && (double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 >= seconds)
			break;
	}
	return (int)(sum & 1) * 0;
}
