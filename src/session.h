/* session: how a sampling session starts and ends, shared by the profiler
 * and --top.
 *
 * session_start blocks SIGCHLD and the stop signals (SIGINT, SIGTERM, SIGHUP,
 * SIGQUIT, and EXTRA_SIGNAL if not 0) and opens a signalfd for them before
 * the target is touched, so a Ctrl-C during a slow attach ends the run
 * cleanly; attaches to or launches the target (not started yet: the caller
 * calls target_start); makes the stackmap and the sampler, and feeds the
 * sampler every target event before the caller's ON_EVENT sees it; and makes
 * die() detach first (then ON_DIE). It returns 0, or the exit status to
 * return with everything already released and the message printed.
 * session_end releases what is left (the target must be detached) and
 * restores the signal mask. */
#ifndef CSAMPLER_SESSION_H
#define CSAMPLER_SESSION_H
#include <signal.h>
#include <stddef.h>

#include "options.h"
#include "sampler.h"
#include "stackmap.h"
#include "target.h"

struct session {
	const struct options *opt;
	struct target *target;
	struct stackmap *map;        /* the caller may swap it (sampler_set_stackmap) */
	struct sampler *sampler;
	int sigfd;
	sigset_t oldmask;
	void (*on_event)(void *ctx, const struct target_event *ev);
	void (*on_die)(void *ctx);
	void *ctx;
};

int session_start(struct session *s, const struct options *o, size_t max_stacks,
		  int extra_signal, void (*on_event)(void *ctx, const struct target_event *ev),
		  void (*on_die)(void *ctx), void *ctx);
void session_end(struct session *s);

#endif
