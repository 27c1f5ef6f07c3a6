/* backend_internal: what a kind of backend gives backend.c, its row of
 * the table (backend.c's kinds[]). Each kind has its own file that
 * defines its row: backend_ptrace.c (sampler.h), backend_perf.c
 * (perf_sampler.h). A row holds the kind's capabilities and its calls;
 * its get_stats fills the counters every kind has and copies its own
 * counters (a struct of uint64_t counts) into the stats' own words, which
 * only its print_diagnostics reads back. */
#ifndef CSAMPLER_BACKEND_INTERNAL_H
#define CSAMPLER_BACKEND_INTERNAL_H
#include "backend.h"

struct backend_ops {
	struct backend_caps caps;
	/* whether this csampler may use it (NULL: always) */
	bool (*permitted)(void);
	/* the kind's sampler, or NULL: the reason said, *STATUS set */
	void *(*create)(struct target *t, struct recorder *rec, const struct backend_config *cfg,
			int *status);
	void (*destroy)(void *impl);
	void (*on_event)(void *impl, const struct target_event *ev);
	int (*tick)(void *impl, uint64_t tick_ns, uint64_t next_tick_ns);
	/* without own_ticks: the ticks a second its reads need (NULL: the
	 * sampling rate) */
	unsigned (*read_rate)(const void *impl);
	void (*note_missed)(void *impl, uint64_t missed);
	/* the ticks are over (NULL: nothing to do) */
	void (*end_ticks)(void *impl);
	void (*close_threads)(void *impl);
	void (*get_stats)(const void *impl, struct backend_stats *out);
	void (*print_diagnostics)(const struct backend_stats *st, const struct recorder_stats *rs,
				  const char *unwind_stops, uint64_t taken);
};

/* The rows (each in its kind's file). */
const struct backend_ops *backend_ptrace_ops(void);
const struct backend_ops *backend_perf_ops(void);

#endif
