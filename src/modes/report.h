/* report: what a recording tells its user on standard error (nothing with
 * --quiet, but warnings): the start line, the recorder's notices as they
 * happen (a CPython it cannot read, a process that refuses its memory, a
 * spill file that cannot be written), the summary after sampling (the
 * diagnostics only with -v), a warning when the sampling rate fell far
 * below the one asked, a hint when the profile is empty, and one line per
 * file written saying how to view it. No ptrace, no target memory: it
 * reads its config, the backend's and the recorder's counters and, for the
 * empty-profile hint, /proc (procfs). */
#ifndef CSAMPLER_REPORT_H
#define CSAMPLER_REPORT_H
#include <stdint.h>
#include <sys/types.h>

#include "backend.h"
#include "recorder.h"
#include "write.h"

/* What the report says of the run: derived from the options in one place
 * (options_report_config); its pointers are the caller's. */
struct report_config {
	char **command;                 /* a launched program, or NULL */
	const pid_t *tids;              /* -t's threads (NULL: all) */
	size_t ntids;
	enum backend_kind backend;      /* resolved */
	unsigned rate;                  /* Hz */
	double duration;                /* seconds; 0: until it exits */
	bool idle, children, quiet;
	int verbose;
	unsigned max_depth;             /* named in the advice on cut stacks */
	size_t stack_window;            /* bytes: likewise */
};

/* Sampling starts: "sampling process PID at RATE Hz for TIME" (or until it
 * exits; "Ctrl-C to stop" without -d). */
void report_start(const struct report_config *o, pid_t pid);
/* Sampling is over after SECONDS: the summary, the rate warning, the hint.
 * RS's samples and truncated are what the outputs show (each thread's CPU
 * the kernel's account of it); TAKEN the periods the samples counted (-v
 * prints both; its unwind counters are of the samples taken). EXITED: a
 * launched program's exit status when it ended while sampled, else -1. */
void report_summary(const struct report_config *o, pid_t pid, const struct backend_stats *st,
		    const struct recorder_stats *rs, uint64_t taken, double seconds, int exited);
/* When more than STOPS_REPORT_PERCENT% of P's samples are truncated: the
 * (at most 3) places where most of them stop, each with why in words a
 * user can act on ("41% of stacks stop in crypto/sha256.block (prog): no
 * unwind information there ..."), without -v. WIDEST: the widest a stack
 * window grew to (recorder_stats.window_widest). */
#define STOPS_REPORT_PERCENT 5
void report_stops(const struct report_config *o, const struct profile *p, size_t widest);
/* PATH (not "-") was written in format F from P (its total in its words:
 * samples, or -i's bytes...); HINT: also how to view it (the first of
 * --interval's files only). */
void report_written(const struct report_config *o, const char *path, enum output_format f,
		    const struct profile *p, bool hint);
/* What the recorder tells as it happens (recorder_config's teller): one
 * line on stderr each, even with --quiet (they are warnings). */
void report_notice(const struct recorder_notice *n);

#endif
