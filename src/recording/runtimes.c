/* runtimes: see runtimes.h. */
#include "config.h"

#include "gostack.h"
#include "pyruntime.h"
#include "runtimes.h"

static const struct runtime_ops *const runtime_tables[RUNTIME_KINDS] = {
	[RUNTIME_PYTHON] = &pyruntime_ops,
	[RUNTIME_GO] = &gostack_ops,
};

const struct runtime_ops *runtime_ops_of(unsigned kind)
{
	return kind < RUNTIME_KINDS ? runtime_tables[kind] : NULL;
}
