/* profiler: one profiling run end to end: start or attach to the target, run
 * the clock and the sampler until the duration elapses, a stop signal
 * arrives, or the target exits; detach; then the builder makes the profile
 * from the recording (builder.h: collect, then report) and every output is
 * written. Returns the process exit status (see error.h; in launch mode
 * the program's status unless csampler itself failed). */
#ifndef CSAMPLER_PROFILER_H
#define CSAMPLER_PROFILER_H
#include "options.h"

int profiler_run(const struct options *o);

#endif
