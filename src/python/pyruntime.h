/* pyruntime: CPython behind runtime.h's table (pyruntime_ops): pystack
 * finds, checks and reads the interpreter, pynames names its frames; this
 * room says how, in the words the table asks for. */
#ifndef CSAMPLER_PYRUNTIME_H
#define CSAMPLER_PYRUNTIME_H
#include "runtime.h"

/* runtime_found.status of CPython: enum pystack_status; .source: enum
 * pystack_layout_source. */
extern const struct runtime_ops pyruntime_ops;

#endif
