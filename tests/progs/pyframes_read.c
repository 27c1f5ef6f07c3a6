/* pyframes_read PID RUNTIME TID...: each thread TID's Python frames, as
 * csampler's pyframes room reads them from process PID's memory (RUNTIME:
 * the address of its _PyRuntime, hex), innermost first, one line each:
 * "frame TID QUALNAME|FILE|LINE" (then "cut TID" if the chain was cut,
 * or "none TID" without a thread state). For tests: the reads are
 * process_vm_readv (root, or the process's user with ptrace allowed).
 * pyframes_read --layout DEBUGFILE: the 3.11 layout read from DEBUGFILE's
 * DWARF (pydwarf) against csampler's table, one line per field:
 * "FIELD DWARF TABLE", then "same" or "differ". */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/uio.h>

#include <elfutils/libdw.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "pydwarf.h"
#include "pyframes.h"

/* --layout: the fields of a py_layout, in order (all size_t after the
 * version). */
static int compare_layouts(const char *file)
{
	int fd = open(file, O_RDONLY);
	Dwarf *dw = fd >= 0 ? dwarf_begin(fd, DWARF_C_READ) : NULL;
	struct py_layout d;
	if (!dw || !pydwarf_layout(dw, 3, 11, &d)) {
		printf("no layout in %s\n", file);
		return 1;
	}
	const struct py_layout *t = pyframes_layout(3, 11);
	const size_t *a = &d.runtime_interpreters_head, *b = &t->runtime_interpreters_head;
	size_t n = (sizeof d - offsetof(struct py_layout, runtime_interpreters_head)) / sizeof(size_t);
	bool same = true;
	for (size_t i = 0; i < n; i++) {
		printf("field%zu %zu %zu\n", i, a[i], b[i]);
		same &= a[i] == b[i];
	}
	printf("%s\n", same ? "same" : "differ");
	dwarf_end(dw);
	close(fd);
	return 0;
}

static int read_target(void *ctx, uint64_t addr, void *buf, size_t len)
{
	pid_t pid = *(pid_t *)ctx;
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--layout") == 0)
		return compare_layouts(argv[2]);
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
