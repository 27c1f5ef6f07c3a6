/* pyframes_read PID RUNTIME TID...: each thread TID's Python frames, as
 * csampler's pyframes room reads them from process PID's memory (RUNTIME:
 * the address of its _PyRuntime, hex), innermost first, one line each:
 * "frame TID QUALNAME|FILE|LINE" (then "cut TID" if the chain was cut,
 * or "none TID" without a thread state). For tests: the reads are
 * process_vm_readv (root, or the process's user with ptrace allowed). */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/uio.h>

#include "pyframes.h"

static int read_target(void *ctx, uint64_t addr, void *buf, size_t len)
{
	pid_t pid = *(pid_t *)ctx;
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: pyframes_read PID RUNTIME TID...\n");
		return 2;
	}
	pid_t pid = (pid_t)atoi(argv[1]);
	uint64_t runtime = strtoull(argv[2], NULL, 16);
	const struct py_layout *l = pyframes_layout(3, 11);
	for (int i = 3; i < argc; i++) {
		pid_t tid = (pid_t)atoi(argv[i]);
		struct py_frame frames[128];
		bool cut;
		int n = pyframes_thread(l, read_target, &pid, runtime, tid, frames, 128, &cut);
		if (n < 0) {
			printf("none %d\n", (int)tid);
			continue;
		}
		for (int k = 0; k < n; k++) {
			struct py_code c;
			int line;
			if (pyframes_code(l, read_target, &pid, frames[k].code, frames[k].unit, &c,
					  &line) < 0)
				printf("frame %d ?|?|0\n", (int)tid);
			else
				printf("frame %d %s|%s|%d\n", (int)tid, c.qualname, c.filename, line);
		}
		if (cut)
			printf("cut %d\n", (int)tid);
	}
	return 0;
}
