/* nodump: a process that turns its dumpable flag off, then idles, so that
 * attaching to it needs CAP_SYS_PTRACE even for its own user; with "busy",
 * it computes for SECONDS instead, then exits 0 (a traced program whose
 * memory its own user then cannot read).
 * usage: nodump [busy SECONDS]
 * Prints "ready PID"; idles until killed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void nodump_spin(double seconds)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		for (int i = 0; i < 100000; i++)
			sink = sink * 31 + (unsigned long)i;
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9 < seconds);
}

int main(int argc, char **argv)
{
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
		perror("prctl");
		return 1;
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (argc > 2 && strcmp(argv[1], "busy") == 0) {
		nodump_spin(atof(argv[2]));
		return 0;
	}
	for (;;)
		pause();
}
