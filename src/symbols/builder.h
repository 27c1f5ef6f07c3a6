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
 * its config (-t, --serve's tid=) only theirs are kept. It makes no
 * ptrace call: a recording is built after its session let the target go,
 * and a server can build one per window. */
#ifndef CSAMPLER_BUILDER_H
#define CSAMPLER_BUILDER_H
#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "profile.h"
#include "recorder.h"
#include "stackmap.h"
#include "symcache.h"
#include "timeline.h"

#define BUILD_LABEL_KEY_MAX 64

/* --thread-group: threads whose name matches RE are one thread, NAME. */
struct thread_group {
	regex_t re;                     /* POSIX ERE, anchored to the whole name */
	const char *name;
};

/* --label KEY=VALUE: on every sample of every profile. */
struct run_label {
	char key[BUILD_LABEL_KEY_MAX + 1]; /* [a-zA-Z_][a-zA-Z0-9_]*, not one of ours */
	const char *value;              /* argv's; any bytes but NUL (writers escape) */
};

/* What a build takes of the run's settings: derived from the options in
 * one place (options_build_config); a server's request changes its copy. */
struct build_config {
	unsigned rate;                  /* Hz: a sample stands for 1/rate s */
	bool idle;                      /* wall-clock time, not CPU */
	unsigned max_depth;
	bool no_inline, addresses;      /* symbolization */
	bool quiet;
	int verbose;
	const pid_t *tids;              /* only these threads' samples (NULL: all) */
	size_t ntids;
	const struct thread_group *groups;
	size_t ngroups;
	const struct run_label *labels;
	size_t nlabels;
	const char *command_line;       /* the program's (builder_command_line), or
	                                 * NULL: its first thread's process name */
};

/* The command line of the program sampled: ARGV joined (launch mode), else
 * process PID's own (/proc/PID/cmdline), read once when sampling starts; NULL
 * if neither. The caller frees it. */
char *builder_command_line(char *const *argv, pid_t pid);

struct build_input {
	const struct build_config *cfg;
	const struct recorder *recorder; /* the processes and thread keys */
	struct stackmap *map;           /* the counts, walked when there is no timeline */
	struct timeline *timeline;      /* or NULL */
	pid_t main_pid;                 /* its program is mapping[0] */
	uint64_t start_ns;              /* CLOCK_MONOTONIC: the timeline's origin */
	uint64_t start_realtime_ns, duration_ns;
	struct symcache *symbols;       /* kept across builds (the processes seen
	                                 * since are added), or NULL: one of its own */
	/* Called every BUILD_PROGRESS_EVERY stacks with the samples built so
	 * far and the total (0 when not known), or NULL. */
	void (*on_progress)(void *ctx, uint64_t done, uint64_t total);
	void *progress_ctx;
};
#define BUILD_PROGRESS_EVERY 64

/* The profile of IN, or NULL (said). The caller frees it (profile_free). */
struct profile *builder_build(const struct build_input *in);

#endif
