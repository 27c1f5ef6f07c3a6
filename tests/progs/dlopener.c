/* dlopener: loads libplugin.so (next to this binary) with dlopen, spends
 * SECONDS of CPU in its plugin_spin, unloads it with dlclose, says
 * "unloaded", then spins in its own after_unload for SECONDS more. Samples
 * taken in the library must still symbolize after it is gone.
 *
 * usage: dlopener SECONDS
 * Prints "ready PID" on stdout once running. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

NOINLINE unsigned long long after_unload(unsigned long long x)
{
	for (unsigned i = 0; i < 300000u; i++) {
		x = x * 2862933555777941757ull + 3037000493ull;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 2;
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof path - 32);
	if (n <= 0)
		return 2;
	path[n] = '\0';
	char *slash = strrchr(path, '/');
	strcpy(slash != NULL ? slash + 1 : path, "libplugin.so");
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 2;
	}
	unsigned long long (*spin)(unsigned long long) =
		(unsigned long long (*)(unsigned long long))dlsym(h, "plugin_spin");
	if (spin == NULL)
		return 2;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	unsigned long long acc = 1;
	double t0 = now();
	while (now() - t0 < seconds)
		acc = spin(acc);
	dlclose(h);
	printf("unloaded\n");
	fflush(stdout);
	t0 = now();
	while (now() - t0 < seconds)
		acc = after_unload(acc);
	return (int)(acc & 1) * 0;
}
