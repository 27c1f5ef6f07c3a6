/* backend: how the samples of a target's threads are taken, behind one
 * interface. Two kinds: ptrace rounds (sampler.h: the default, needs no
 * privilege; it stops the running threads) and the kernel's perf events
 * (perf_sampler.h: root; it never stops them). The kind is resolved once
 * (backend_resolve, --backend=auto), and everything above the backends
 * drives the one chosen through these calls and asks its capabilities
 * (backend_caps), never which kind it is. Both count into the recorder
 * (recorder.h), which owns the thread keys and the registry of the threads
 * followed; a backend keeps only its own state of each, by its slot. */
#ifndef CSAMPLER_BACKEND_H
#define CSAMPLER_BACKEND_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum backend_kind {
	BACKEND_PTRACE = 0,             /* interrupt the running threads (sampler.h) */
	BACKEND_PERF,                   /* the kernel's cpu-clock events (perf_sampler.h) */
	BACKEND_AUTO,                   /* perf where permitted, else ptrace: resolved
	                                 * by backend_resolve before sampling */
};

/* What a kind can do; the refusals of options and requests read these. */
struct backend_caps {
	const char *word;               /* --backend=WORD */
	const char *name;               /* the start line's name */
	const char *option;             /* the option that picks it */
	bool idle;                      /* samples threads that wait (--idle, idle=1) */
	bool dump;                      /* may be combined with --dump */
	bool per_sample_attach;         /* may be combined with --attach-mode=per-sample */
	bool own_ticks;                 /* each tick of the loop is a sampling round, so
	                                 * the ticks taken are the rate achieved; else
	                                 * the kernel samples at the rate asked and a
	                                 * tick reads what it wrote */
	bool ends_with_sampling;        /* its samples end when sampling ends: the
	                                 * session closes it before the detach */
	bool reads_exits;               /* reads each thread's CPU at its exit stop
	                                 * (on-CPU, attached throughout: the
	                                 * target's exit events), so its accounts
	                                 * are whole (recorder_set_account_whole) */
	const char *idle_refusal;       /* why not, when !idle (a phrase) */
};

/* KIND's capabilities (BACKEND_AUTO: none is resolved: NULL). */
const struct backend_caps *backend_caps(enum backend_kind kind);
/* The kind --backend=WORD names ("auto" too); false for none. */
bool backend_kind_from_word(const char *word, enum backend_kind *kind);

/* What the options need of a backend, for BACKEND_AUTO's choice. */
struct backend_needs {
	bool idle, dump, per_sample_attach;
};
/* KIND, or for BACKEND_AUTO perf events where the needs allow them and this
 * csampler may use them (perf_sampler_permitted), else ptrace. */
enum backend_kind backend_resolve(enum backend_kind kind, const struct backend_needs *needs);

struct backend_config {
	unsigned rate;                  /* Hz */
	bool idle;
	unsigned max_depth;
	size_t stack_window;
	bool window_grows;              /* (ptrace) session_config's */
	const pid_t *tids;              /* -t: only these threads (NULL: all) */
	size_t ntids;
	bool launched;                  /* csampler started the program: its CPU
	                                 * counts from its start */
	bool kernel;                    /* the kernel's frames above the user stack
	                                 * (session_config's) */
	int verbose;
};

/* Counters of a run's sampling: those the summary reads, which every kind
 * fills that can, and the kind's own (its counters struct, sampler.h's
 * sampler_stats or perf_sampler.h's perf_sampler_stats, copied), which only
 * the kind's -v line reads. Every word is a count, so the sessions of a run
 * add up word by word. */
#define BACKEND_OWN_WORDS 29
struct backend_stats {
	union {
		struct {
			uint64_t ticks;         /* sampling rounds (a kind with own_ticks),
			                         * else reads of what the kernel sampled */
			uint64_t threads_seen;
			uint64_t lost;          /* samples the kernel could not write */
			uint64_t waited_ns;     /* the threads were runnable, given no CPU,
			                         * while sampled */
			uint64_t switches;      /* times the threads got a CPU, less those
			                         * csampler's own stops made */
			/* a backend that stops threads: its samples stopped at a
			 * system call's exit and in user code, and the kernel's
			 * account of the threads' time in user code and in the
			 * kernel over the same reads (clock ticks); 0 for others */
			uint64_t stops_call, stops_user, user_ticks, kernel_ticks;
			/* of those stops, the ones of threads the tick took a CPU
			 * from (csampler's own, or a holder's): each stopped where
			 * it was at the tick */
			uint64_t stops_taken;
			/* stops dropped at the exit of a wait the thread went
			 * into after the tick read it running (it slept and was
			 * woken before the interrupt reached it) */
			uint64_t stops_woken;
			/* the switch into the threads whose task clocks were
			 * read: the span the kernel charges them from being
			 * picked to being on a CPU, where no sample lands (the
			 * target's own switches), and their CPU over the same
			 * reads; 0 where not measured; of the span, the part put
			 * where the threads arrived (stackmap_add_span) */
			uint64_t switch_in_ns, switch_run_ns, switch_placed_ns;
			/* a backend that stops threads: its ticks taken at
			 * real-time priority (csampler takes its CPU, holders
			 * the others: each stop comes where its thread was) */
			uint64_t ticks_realtime;
			uint64_t own[BACKEND_OWN_WORDS];
		};
		uint64_t words[15 + BACKEND_OWN_WORDS];
	};
};
_Static_assert(sizeof(struct backend_stats) == sizeof(((struct backend_stats *)0)->words),
	       "every counter of backend_stats is one of its words");

/* Add MORE's counters to SUM's (the sessions of one run). */
void backend_stats_add(struct backend_stats *sum, const struct backend_stats *more);

struct target;
struct target_event;
struct recorder;
struct recorder_stats;
struct backend;

/* A backend of KIND (resolved) sampling T's threads into REC (both the
 * caller's; REC outlives it). NULL when it cannot be set up: the reason
 * said on stderr in one line, *STATUS the exit status. */
struct backend *backend_new(enum backend_kind kind, struct target *t, struct recorder *rec,
			    const struct backend_config *cfg, int *status);
void backend_free(struct backend *b);
const struct backend_caps *backend_caps_of(const struct backend *b);

/* A target event (forward target's callback here). */
void backend_on_event(struct backend *b, const struct target_event *ev);
/* The tick due at TICK_NS (CLOCK_MONOTONIC); the next at NEXT_TICK_NS (0:
 * none). 0, or -1 on a fatal error. */
int backend_tick(struct backend *b, uint64_t tick_ns, uint64_t next_tick_ns);
/* The ticks a second B needs at sampling RATE: RATE for a kind whose ticks
 * are its sampling rounds (own_ticks); for one whose ticks only read what
 * the kernel sampled, what its reads need, at most RATE. */
unsigned backend_tick_rate(const struct backend *b, unsigned rate);
/* Ticks skipped because a tick overran. */
void backend_note_missed(struct backend *b, uint64_t missed);
/* The last tick was taken: give back what the ticks held (the ptrace
 * backend's CPU holders, and the pinning of the calling thread), before
 * the sampling thread leaves real-time priority. */
void backend_end_ticks(struct backend *b);
/* Sampling is over: what is pending is counted, the threads' files or
 * events closed. No tick after this. */
void backend_close_threads(struct backend *b);
void backend_get_stats(const struct backend *b, struct backend_stats *out);

/* The -v line of a run sampled by KIND: its counters, RS's and UNWIND_STOPS
 * (the unwind stops, already worded), TAKEN periods. */
void backend_print_diagnostics(enum backend_kind kind, const struct backend_stats *st,
			       const struct recorder_stats *rs, const char *unwind_stops,
			       uint64_t taken);

#endif
