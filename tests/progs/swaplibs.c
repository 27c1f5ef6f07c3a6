/* swaplibs: loads libalpha.so, runs its alpha_hot, unloads it, then the
 * same with libbravo.so, in turn for SECONDS (both next to this binary;
 * each loads where the other was, the same code under other names at
 * other offsets: swaplib.c), and
 * measures the CPU each spent (CLOCK_THREAD_CPUTIME_ID around the calls).
 *
 * usage: swaplibs SECONDS
 * Prints "ready PID" first, then at the end
 *   rounds N same-address yes|no cpu-alpha NS cpu-bravo NS
 * (same-address: every load of either was at one base address) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long ns(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 2;
	char dir[PATH_MAX], path[2][PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
	if (n <= 0)
		return 2;
	dir[n] = '\0';
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	snprintf(path[0], sizeof path[0], "%s/libalpha.so", dir);
	snprintf(path[1], sizeof path[1], "%s/libbravo.so", dir);
	const char *fn[2] = { "alpha_hot", "bravo_hot" };
	unsigned long where[2] = { 0, 0 };
	long long cpu[2] = { 0, 0 };
	bool same = true;
	unsigned long long x = 1;
	unsigned rounds = 0;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	long long end = ns(CLOCK_MONOTONIC) + (long long)(seconds * 1e9);
	while (ns(CLOCK_MONOTONIC) < end) {
		for (int i = 0; i < 2; i++) {
			void *h = dlopen(path[i], RTLD_NOW | RTLD_LOCAL);
			if (!h) {
				fprintf(stderr, "swaplibs: %s\n", dlerror());
				return 2;
			}
			unsigned long long (*hot)(unsigned long long, unsigned) =
				(unsigned long long (*)(unsigned long long, unsigned))dlsym(h, fn[i]);
			if (!hot)
				return 2;
			Dl_info info;
			if (!dladdr((void *)hot, &info))
				return 2;
			if (where[i] && where[i] != (unsigned long)info.dli_fbase)
				same = false;
			where[i] = (unsigned long)info.dli_fbase;
			long long t0 = ns(CLOCK_THREAD_CPUTIME_ID);
			x = hot(x, 40);
			cpu[i] += ns(CLOCK_THREAD_CPUTIME_ID) - t0;
			dlclose(h);
		}
		rounds++;
	}
	printf("rounds %u same-address %s cpu-alpha %lld cpu-bravo %lld\n", rounds,
	       same && where[0] == where[1] ? "yes" : "no", cpu[0], cpu[1]);
	return (int)(x & 0);
}
