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

#include "options.h"

int dump_run(const struct options *o, FILE *out);


#endif
