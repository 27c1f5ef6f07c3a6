/* backend: the two kinds behind one table of calls (see backend.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "error.h"
#include "perf_sampler.h"
#include "recorder.h"
#include "sampler.h"

struct backend_ops {
	void *(*create)(struct target *t, struct recorder *rec, const struct backend_config *cfg,
			int *status);
	void (*destroy)(void *impl);
	void (*on_event)(void *impl, const struct target_event *ev);
	int (*tick)(void *impl, uint64_t tick_ns, uint64_t next_tick_ns);
	void (*note_missed)(void *impl, uint64_t missed);
	void (*close_threads)(void *impl);
	void (*get_stats)(const void *impl, struct backend_stats *out);
	void (*print_diagnostics)(const struct backend_stats *st, const struct recorder_stats *rs,
				  const char *unwind_stops, uint64_t taken);
};

struct backend {
	enum backend_kind kind;
	const struct backend_ops *ops;
	void *impl;
};

/* ---- ptrace: sampler.h ---------------------------------------------------- */

static void *ptrace_create(struct target *t, struct recorder *rec, const struct backend_config *c,
			   int *status)
{
	struct sampler_config sc = {
		.rate = c->rate, .idle = c->idle, .max_depth = c->max_depth,
		.stack_window = c->window_grows ? unwind_window_limit(c->stack_window)
						: c->stack_window,
		.verbose = c->verbose, .tids = c->tids, .ntids = c->ntids, .launched = c->launched,
	};
	struct sampler *s = sampler_new(t, rec, &sc);
	if (!s) {
		warn_errno("cannot set up sampling");
		*status = CS_EXIT_SYSTEM;
	}
	return s;
}

static void ptrace_destroy(void *impl) { sampler_free(impl); }
static void ptrace_on_event(void *impl, const struct target_event *ev) { sampler_on_event(impl, ev); }
static int ptrace_tick(void *impl, uint64_t tick_ns, uint64_t next_tick_ns)
{
	return sampler_tick(impl, tick_ns, next_tick_ns);
}
static void ptrace_note_missed(void *impl, uint64_t missed) { sampler_note_missed(impl, missed); }
static void ptrace_close_threads(void *impl) { sampler_close_threads(impl); }
static void ptrace_get_stats(const void *impl, struct backend_stats *out)
{
	struct sampler_stats ss;
	sampler_get_stats(impl, &ss);
	*out = (struct backend_stats){
		.ticks = ss.ticks, .ticks_missed = ss.ticks_missed, .threads_seen = ss.threads_seen,
		.not_captured = ss.not_captured, .in_place = ss.in_place, .fd_short = ss.fd_short,
		.late = ss.late, .dropped_waking = ss.dropped_waking, .switches = ss.switches,
		.waited_ns = ss.waited_ns,
		.dropped_queued = ss.dropped_queued,
	};
}

static void ptrace_print_diagnostics(const struct backend_stats *st, const struct recorder_stats *rs,
				     const char *unwind_stops, uint64_t taken)
{
	char grown[64] = "";
	if (rs->window_widest)
		snprintf(grown, sizeof grown, ", stack window grown to %zu KiB",
			 rs->window_widest / 1024);
	fprintf(stderr,
		"csampler: %llu samples, %llu threads seen, %llu ticks missed, "
		"unwind stops: %s, %llu truncated, %llu sampled late, %llu dropped at wake-ups, "
		"%llu dropped waiting for a CPU, %llu switches, %.2f s waited for a CPU, "
		"pause p50 %.1f us p99 %.1f us%s, "
		"thread keys %llu held of %llu made, %llu periods taken\n",
		(unsigned long long)rs->samples, (unsigned long long)st->threads_seen,
		(unsigned long long)st->ticks_missed, unwind_stops,
		(unsigned long long)rs->truncated, (unsigned long long)st->late,
		(unsigned long long)st->dropped_waking, (unsigned long long)st->dropped_queued,
		(unsigned long long)st->switches, (double)st->waited_ns / 1e9,
		(double)rs->pause_p50_ns / 1e3,
		(double)rs->pause_p99_ns / 1e3, grown, (unsigned long long)rs->keys_held,
		(unsigned long long)rs->keys_made, (unsigned long long)taken);
}

static const struct backend_ops ptrace_ops = {
	.create = ptrace_create, .destroy = ptrace_destroy, .on_event = ptrace_on_event,
	.tick = ptrace_tick, .note_missed = ptrace_note_missed,
	.close_threads = ptrace_close_threads,
	.get_stats = ptrace_get_stats, .print_diagnostics = ptrace_print_diagnostics,
};

/* ---- perf events: perf_sampler.h ------------------------------------------ */

static void *perf_create(struct target *t, struct recorder *rec, const struct backend_config *c,
			 int *status)
{
	struct perf_sampler_config pc = {
		.rate = c->rate, .stack_window = c->stack_window, .verbose = c->verbose,
		.tids = c->tids, .ntids = c->ntids,
	};
	return perf_sampler_new(t, rec, &pc, status);   /* (a failure is said) */
}

static void perf_destroy(void *impl) { perf_sampler_free(impl); }
static void perf_on_event(void *impl, const struct target_event *ev)
{
	perf_sampler_on_event(impl, ev);
}
/* A tick reads what the kernel sampled. */
static int perf_tick(void *impl, uint64_t tick_ns, uint64_t next_tick_ns)
{
	(void)tick_ns, (void)next_tick_ns;
	return perf_sampler_drain(impl);
}
/* The kernel samples whether csampler ticks or not. */
static void perf_note_missed(void *impl, uint64_t missed) { (void)impl, (void)missed; }
static void perf_close_threads(void *impl) { perf_sampler_close_threads(impl); }
static void perf_get_stats(const void *impl, struct backend_stats *out)
{
	struct perf_sampler_stats ps;
	perf_sampler_get_stats(impl, &ps);
	*out = (struct backend_stats){
		.ticks = ps.drains, .threads_seen = ps.threads_seen, .lost = ps.lost,
		.no_user_regs = ps.no_user_regs, .own_threads = ps.own_threads,
		.own_refused = ps.own_refused,
	};
}

static void perf_print_diagnostics(const struct backend_stats *st, const struct recorder_stats *rs,
				   const char *unwind_stops, uint64_t taken)
{
	fprintf(stderr,
		"csampler: %llu samples, %llu threads seen, %llu on clocks of their own "
		"(%llu refused), %llu lost (rings full), %llu "
		"without user registers, unwind stops: %s, %llu truncated, %llu whole by the "
		"kernel's frame pointers, thread keys %llu held of %llu made, %llu periods taken\n",
		(unsigned long long)rs->samples, (unsigned long long)st->threads_seen,
		(unsigned long long)st->own_threads, (unsigned long long)st->own_refused,
		(unsigned long long)st->lost, (unsigned long long)st->no_user_regs,
		unwind_stops, (unsigned long long)rs->truncated,
		(unsigned long long)rs->fp_continued,
		(unsigned long long)rs->keys_held, (unsigned long long)rs->keys_made,
		(unsigned long long)taken);
}

static const struct backend_ops perf_ops = {
	.create = perf_create, .destroy = perf_destroy, .on_event = perf_on_event,
	.tick = perf_tick, .note_missed = perf_note_missed,
	.close_threads = perf_close_threads,
	.get_stats = perf_get_stats, .print_diagnostics = perf_print_diagnostics,
};

/* ---- the table ------------------------------------------------------------ */

static const struct {
	struct backend_caps caps;
	const struct backend_ops *ops;
} kinds[] = {
	[BACKEND_PTRACE] = {
		.caps = { .word = "ptrace", .name = "ptrace", .option = "--backend=ptrace", .idle = true,
			  .dump = true, .per_sample_attach = true, .own_ticks = true },
		.ops = &ptrace_ops,
	},
	[BACKEND_PERF] = {
		.caps = { .word = "perf", .name = "perf events", .option = "--backend=perf",
			  .ends_with_sampling = true,
			  .idle_refusal = "the kernel samples threads while they run on a CPU only" },
		.ops = &perf_ops,
	},
};

const struct backend_caps *backend_caps(enum backend_kind kind)
{
	/* (a kind without a row, BACKEND_AUTO, has none) */
	return (size_t)kind < sizeof kinds / sizeof kinds[0] && kinds[kind].ops ? &kinds[kind].caps
										   : NULL;
}

bool backend_kind_from_word(const char *word, enum backend_kind *kind)
{
	if (strcmp(word, "auto") == 0) {
		*kind = BACKEND_AUTO;
		return true;
	}
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if (kinds[i].ops && strcmp(word, kinds[i].caps.word) == 0) {
			*kind = (enum backend_kind)i;
			return true;
		}
	return false;
}

enum backend_kind backend_resolve(enum backend_kind kind, const struct backend_needs *needs)
{
	if (kind != BACKEND_AUTO)
		return kind;
	const struct backend_caps *perf = &kinds[BACKEND_PERF].caps;
	bool fits = (!needs->idle || perf->idle) && (!needs->dump || perf->dump) &&
		    (!needs->per_sample_attach || perf->per_sample_attach);
	return fits && perf_sampler_permitted() ? BACKEND_PERF : BACKEND_PTRACE;
}

void backend_stats_add(struct backend_stats *sum, const struct backend_stats *more)
{
	sum->ticks += more->ticks;
	sum->ticks_missed += more->ticks_missed;
	sum->threads_seen += more->threads_seen;
	sum->not_captured += more->not_captured;
	sum->in_place += more->in_place;
	sum->fd_short += more->fd_short;
	sum->late += more->late;
	sum->dropped_waking += more->dropped_waking;
	sum->switches += more->switches;
	sum->waited_ns += more->waited_ns;
	sum->dropped_queued += more->dropped_queued;
	sum->lost += more->lost;
	sum->no_user_regs += more->no_user_regs;
	sum->own_threads += more->own_threads;
	sum->own_refused += more->own_refused;
}

struct backend *backend_new(enum backend_kind kind, struct target *t, struct recorder *rec,
			    const struct backend_config *cfg, int *status)
{
	*status = CS_EXIT_SYSTEM;
	if (!backend_caps(kind))
		return NULL;
	struct backend *b = calloc(1, sizeof *b);
	if (!b) {
		warn_errno("cannot set up sampling");
		return NULL;
	}
	b->kind = kind;
	b->ops = kinds[kind].ops;
	b->impl = b->ops->create(t, rec, cfg, status);
	if (!b->impl) {
		free(b);
		return NULL;
	}
	*status = 0;
	return b;
}

void backend_free(struct backend *b)
{
	if (!b)
		return;
	b->ops->destroy(b->impl);
	free(b);
}

const struct backend_caps *backend_caps_of(const struct backend *b)
{
	return &kinds[b->kind].caps;
}

void backend_on_event(struct backend *b, const struct target_event *ev)
{
	b->ops->on_event(b->impl, ev);
}

int backend_tick(struct backend *b, uint64_t tick_ns, uint64_t next_tick_ns)
{
	return b->ops->tick(b->impl, tick_ns, next_tick_ns);
}

void backend_note_missed(struct backend *b, uint64_t missed)
{
	b->ops->note_missed(b->impl, missed);
}

void backend_close_threads(struct backend *b)
{
	b->ops->close_threads(b->impl);
}

void backend_get_stats(const struct backend *b, struct backend_stats *out)
{
	b->ops->get_stats(b->impl, out);
}

void backend_print_diagnostics(enum backend_kind kind, const struct backend_stats *st,
			       const struct recorder_stats *rs, const char *unwind_stops,
			       uint64_t taken)
{
	if (backend_caps(kind))
		kinds[kind].ops->print_diagnostics(st, rs, unwind_stops, taken);
}
