/* backend: the kinds behind one table of rows (see backend.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_internal.h"
#include "error.h"

struct backend {
	enum backend_kind kind;
	const struct backend_ops *ops;
	void *impl;
};

/* The kinds: a row each, defined in its own file (backend_internal.h). */
static const struct backend_ops *(*const kinds[])(void) = {
	[BACKEND_PTRACE] = backend_ptrace_ops,
	[BACKEND_PERF] = backend_perf_ops,
};
#define NKINDS (sizeof kinds / sizeof kinds[0])

/* KIND's row, or NULL (BACKEND_AUTO: none). */
static const struct backend_ops *kind_ops(enum backend_kind kind)
{
	return (size_t)kind < NKINDS && kinds[kind] ? kinds[kind]() : NULL;
}

const struct backend_caps *backend_caps(enum backend_kind kind)
{
	const struct backend_ops *ops = kind_ops(kind);
	return ops ? &ops->caps : NULL;
}

bool backend_kind_from_word(const char *word, enum backend_kind *kind)
{
	if (strcmp(word, "auto") == 0) {
		*kind = BACKEND_AUTO;
		return true;
	}
	for (size_t i = 0; i < NKINDS; i++) {
		const struct backend_ops *ops = kind_ops((enum backend_kind)i);
		if (ops && strcmp(word, ops->caps.word) == 0) {
			*kind = (enum backend_kind)i;
			return true;
		}
	}
	return false;
}

/* --backend=auto's choice, most wanted first: the kernel's samples do not
 * stop the target */
static const enum backend_kind auto_order[] = { BACKEND_PERF, BACKEND_PTRACE };

enum backend_kind backend_resolve(enum backend_kind kind, const struct backend_needs *needs)
{
	if (kind != BACKEND_AUTO)
		return kind;
	size_t last = sizeof auto_order / sizeof auto_order[0] - 1;
	for (size_t i = 0; i < last; i++) {
		const struct backend_ops *ops = kind_ops(auto_order[i]);
		const struct backend_caps *c = &ops->caps;
		bool fits = (!needs->idle || c->idle) && (!needs->dump || c->dump) &&
			    (!needs->per_sample_attach || c->per_sample_attach);
		if (fits && (!ops->permitted || ops->permitted()))
			return auto_order[i];
	}
	return auto_order[last];   /* (needs nothing: it does all) */
}

void backend_stats_add(struct backend_stats *sum, const struct backend_stats *more)
{
	/* (every word is a count: the common ones and the kind's own) */
	for (size_t i = 0; i < sizeof sum->words / sizeof sum->words[0]; i++)
		sum->words[i] += more->words[i];
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
	b->ops = kind_ops(kind);
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
	return &b->ops->caps;
}

void backend_on_event(struct backend *b, const struct target_event *ev)
{
	b->ops->on_event(b->impl, ev);
}

int backend_tick(struct backend *b, uint64_t tick_ns, uint64_t next_tick_ns)
{
	return b->ops->tick(b->impl, tick_ns, next_tick_ns);
}

unsigned backend_tick_rate(const struct backend *b, unsigned rate)
{
	/* (a kind with own_ticks has no read_rate) */
	unsigned r = b->ops->read_rate ? b->ops->read_rate(b->impl) : 0;
	return r && r < rate ? r : rate;
}

void backend_note_missed(struct backend *b, uint64_t missed)
{
	b->ops->note_missed(b->impl, missed);
}

void backend_end_ticks(struct backend *b)
{
	if (b && b->ops->end_ticks)
		b->ops->end_ticks(b->impl);
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
	const struct backend_ops *ops = kind_ops(kind);
	if (ops)
		ops->print_diagnostics(st, rs, unwind_stops, taken);
}
