/* convert: -i FILE, a pprof profile recorded before (csampler's, Go's,
 * pprof-rs's) written again in any format: read (pprof_read), its threads
 * grouped as --thread-group says, --label's labels added, then each output
 * written as a recording's are. Nothing is sampled. */
#ifndef CSAMPLER_CONVERT_H
#define CSAMPLER_CONVERT_H

#include "options.h"

/* The exit status: 0, CS_EXIT_INPUT (the file cannot be read or is not a
 * profile; said), or an output's error (said). */
int convert_run(const struct options *o);

#endif
