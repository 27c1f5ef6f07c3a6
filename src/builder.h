/* builder: a recording -> a symbolized profile (collect, then report).
 *
 * It walks the stackmap (its spill merged back) or, when a timeline was
 * recorded, the timeline in time order (one profile sample per sample
 * taken, with its time), symbolizes each (pid, address) once through one
 * symcache (symcache.h), and builds the profile the writers see (profile.h),
 * keeping pprof's conventions: the main program's mapping is added first
 * (mapping[0] is "the program"), a caller's location address is the return
 * address - 1 (addr_lookup_pc), a mapping's has_* flags say what its
 * locations got (set at the end: a mapping that claims nothing is looked up
 * again by pprof). --thread-group merges matching threads; with tids in
 * the options (-t, --serve's tid=) only theirs are kept. It makes no
 * ptrace call: a recording is built after its session let the target go,
 * and a server can build one per window. */
#ifndef CSAMPLER_BUILDER_H
#define CSAMPLER_BUILDER_H
#include <stdint.h>
#include <sys/types.h>

#include "options.h"
#include "profile.h"
#include "recorder.h"
#include "stackmap.h"
#include "symcache.h"
#include "timeline.h"

struct build_input {
	const struct options *opt;      /* symbolization, thread groups, depth, rate, idle */
	const struct recorder *recorder; /* the processes and thread keys */
	struct stackmap *map;           /* the counts, walked when there is no timeline */
	struct timeline *timeline;      /* or NULL */
	pid_t main_pid;                 /* its program is mapping[0] */
	uint64_t start_ns;              /* CLOCK_MONOTONIC: the timeline's origin */
	uint64_t start_realtime_ns, duration_ns;
	struct symcache *symbols;       /* kept across builds (the processes seen
	                                 * since are added), or NULL: one of its own */
};

/* The profile of IN, or NULL (said). The caller frees it (profile_free). */
struct profile *builder_build(const struct build_input *in);

#endif
