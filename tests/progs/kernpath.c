/* kernpath: one thread whose CPU is mostly the kernel's, in two known
 * paths, for the kernel frames of --backend=perf: pipe_pump() writes 64 KiB
 * into a pipe and reads it back (the kernel's pipe_write and pipe_read),
 * dir_scan() reads a directory's entries with getdents64 (iterate_dir).
 * Runs for argv[1] seconds (default 10), then prints "done N", N the
 * rounds of 40 pumps it made (its throughput, for an overhead A/B). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static char block[65536];

static __attribute__((noinline)) void pipe_pump(int rd, int wr)
{
	for (size_t at = 0; at < sizeof block;) {
		ssize_t n = write(wr, block + at, sizeof block - at);
		if (n <= 0)
			exit(1);
		for (ssize_t got = 0; got < n;) {
			ssize_t r = read(rd, block, (size_t)(n - got));
			if (r <= 0)
				exit(1);
			got += r;
		}
		at += (size_t)n;
	}
}

static __attribute__((noinline)) void dir_scan(int dir)
{
	char buf[32768];
	lseek(dir, 0, SEEK_SET);
	while (syscall(SYS_getdents64, dir, buf, sizeof buf) > 0)
		;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 10;
	int p[2];
	if (pipe(p) < 0 || fcntl(p[1], F_SETPIPE_SZ, (int)sizeof block) < 0)
		return 1;
	int dir = open("/usr/bin", O_RDONLY | O_DIRECTORY);
	if (dir < 0)
		return 1;
	struct timespec t0, t;
	unsigned long rounds = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	printf("ready\n");
	fflush(stdout);
	do {
		/* (a directory's read costs some 40 pumps: about half each) */
		for (int i = 0; i < 40; i++) {
			pipe_pump(p[0], p[1]);
			if (i == 0)
				dir_scan(dir);
		}
		rounds++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
	printf("done %lu\n", rounds);
	return 0;
}
