/* dump: --dump, one consistent snapshot of every thread, printed like pstack.
 *
 * Threads blocked in the kernel are copied where they wait, without a stop
 * (their user stack cannot change while they wait; none sees EINTR); the
 * running ones are stopped together, their registers and stack windows
 * copied, and resumed, before anything is unwound or symbolized. Then per
 * thread: name, tid, state (and the syscall or wchan it is blocked in), and
 * its frames with function, inline marks, file:line and module. Returns a
 * CS_EXIT_* status. */
#ifndef CSAMPLER_DUMP_H
#define CSAMPLER_DUMP_H
#include <stddef.h>
#include <stdio.h>

#include <stdbool.h>
#include <sys/types.h>

/* What a dump takes: derived from the options in one place
 * (options_dump_config), or set by --serve for a request. */
struct dump_config {
	pid_t pid;                      /* the process: attached to, never launched */
	unsigned max_depth;
	size_t stack_window;            /* bytes copied of each stopped thread's stack */
	bool no_inline, addresses;      /* symbolization: as a profile's */
	bool python;                    /* CPython's frames read (--no-python: not) */
	bool kernel;                    /* a blocked thread's kernel frames, from
	                                 * /proc/TID/stack (root; --no-kernel: not) */
	bool children;                  /* --children: its descendants too (dump_tree) */
	int verbose;
};

int dump_run(const struct dump_config *cfg, FILE *out);
/* --dump --children: the process, then each of its descendants (children
 * first, found in one scan of /proc, at most DUMP_TREE_MAX), one dump_run
 * each under its own "Process" heading, a blank line between: one
 * snapshot per process, taken in turn. A descendant gone before its turn
 * is passed over. The first's status, or the first other failure's. */
#define DUMP_TREE_MAX 256
int dump_tree(const struct dump_config *cfg, FILE *out);


#endif
