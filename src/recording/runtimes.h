/* runtimes: the runtimes csampler reads (runtime.h), one table each, by
 * kind; and where their state lives in a process's unwinder (unwind.h's
 * calls loop over them). Adding one: its kind in runtime.h, its table
 * here. */
#ifndef CSAMPLER_RUNTIMES_H
#define CSAMPLER_RUNTIMES_H
#include "runtime.h"

/* Kind K's table, NULL for none (a value read from a profile or a stack:
 * K may be anything). */
const struct runtime_ops *runtime_ops_of(unsigned kind);

#endif
