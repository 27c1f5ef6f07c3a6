/* session: how a sampling session starts, runs and ends, shared by the
 * profiler and --top.
 *
 * A session has two threads: the caller, and the tracer thread (tracer.h)
 * that makes every ptrace call and whose exit lets the target go.
 *   1. session_open, in the caller: blocks SIGCHLD and the stop signals
 *      (SIGINT, SIGTERM, SIGHUP, SIGQUIT, and EXTRA_SIGNAL if not 0) and
 *      opens a signalfd for them before the target is touched, so the tracer
 *      thread inherits the mask, a Ctrl-C during a slow attach ends the run
 *      cleanly, and no stop signal acts on the caller while it writes;
 *   2. session_attach, in the tracer thread: attaches to or launches the
 *      target (not started yet: the caller calls target_start); makes the
 *      stackmap, the recorder and the backend, and feeds the backend every target event
 *      before ON_EVENT sees it; makes die() run ON_DIE (die's exit lets the
 *      target go as the tracer thread's does). It returns 0, or the exit
 *      status to return, the message printed and the target let go;
 *   3. session_detach, in the tracer thread, which then returns: it closes
 *      the backend's threads once (a backend whose samples end with
 *      sampling, perf events, before the target is let go: what its rings
 *      hold is counted there; the other after);
 *   4. session_end, in the caller after tracer_run: releases what is left
 *      and restores the signal mask.
 * session_open and session_attach return 0 or a CS_EXIT_* status. */
#ifndef CSAMPLER_SESSION_H
#define CSAMPLER_SESSION_H
#include <signal.h>
#include <stddef.h>

#include "recorder.h"
#include "backend.h"
#include "stackmap.h"
#include "target.h"

#define SESSION_MAX_TIDS 64

/* What a session takes: derived from the options in one place
 * (options_session_config); its pointers are the caller's. */
struct session_config {
	pid_t pid;                      /* attach to it, unless COMMAND */
	char **command;                 /* launch it; NULL: attach to PID */
	bool children;                  /* follow the processes it starts */
	enum target_seize_mode seize_mode;
	bool profile_to_stdout;         /* an output is standard output: a launched
	                                 * program's own goes to standard error */
	enum backend_kind backend;      /* resolved: not BACKEND_AUTO */
	unsigned rate;                  /* Hz */
	bool idle;                      /* --idle: blocked threads too */
	unsigned max_depth;
	bool python;                    /* CPython's frames read (--no-python: not) */
	bool kernel;                    /* the kernel's frames where the backend has
	                                 * them (--no-kernel: not) */
	size_t stack_window;            /* bytes */
	bool window_grows;              /* from stack_window to unwind_window_limit's */
	const pid_t *tids;              /* -t: only these threads (NULL: all) */
	size_t ntids;                   /* at most SESSION_MAX_TIDS */
	int rt_priority;                /* the clock's SCHED_FIFO priority; 0: none */
	double duration;                /* seconds; 0: no deadline */
	bool quiet;
	int verbose;
	void (*tell)(const struct recorder_notice *n); /* the recorder's notices */
};

struct session {
	struct session_config cfg;
	struct target *target;
	struct stackmap *map;        /* the caller may swap it (recorder_set_stackmap) */
	struct recorder *recorder;   /* processes, thread keys, what was counted;
	                              * set before session_attach, the caller's
	                              * (kept across sessions: --serve): the session
	                              * then makes no stackmap, and counts into the
	                              * recorder's sinks */
	bool owns_recorder;          /* made by session_attach: session_end frees it */
	pid_t reattach_pid;          /* not 0: session_attach attaches to it (the process
	                              * sampled before a suspension), not to cfg's */
	struct target *launched;     /* the launched program's first target, let go
	                              * by session_release_target: its exit status
	                              * is still ours to wait for */
	struct backend *backend;     /* takes the samples, recording through recorder */
	bool chosen_gone[SESSION_MAX_TIDS]; /* -t: which of cfg.tids have ended */
	size_t chosen_left;          /* -t: how many have not; the loop ends at 0 */
	uint64_t ticks_end_ns;       /* when session_run's loop ended (CLOCK_MONOTONIC):
	                              * the end of the time sampled (leaving real-time
	                              * priority after it took up to 0.5 s beside busy
	                              * programs) */
	int sigfd;
	sigset_t oldmask;
	void (*on_event)(void *ctx, const struct target_event *ev);
	void (*on_die)(void *ctx);
	void *ctx;
};

/* The stop signals, in SET: SIGINT, SIGTERM, SIGHUP, SIGQUIT. Whoever
 * ends on them (the session loop, --serve's main thread) takes this set. */
void session_stop_signals(sigset_t *set);
/* The signals held for S since its loop ended are taken and dropped: one
 * that came while the outputs were written (it cut short a wait on a FIFO
 * nobody reads: outfile) has been acted on, and must not kill csampler when
 * session_end gives the signals back. */
void session_drop_signals(struct session *s);
/* The recorder's config for sampling as C says (a recorder kept across
 * sessions, --serve's, is made by it too). */
void session_recorder_config(const struct session_config *c, struct recorder_config *out);
/* CFG is copied (its pointers are kept). */
int session_open(struct session *s, const struct session_config *cfg, int extra_signal);
/* The exit status (CS_EXIT_*) for a target_error: the one place they meet. */
int session_exit_status(int target_error);
int session_attach(struct session *s, size_t max_stacks,
		   void (*on_event)(void *ctx, const struct target_event *ev),
		   void (*on_die)(void *ctx), void *ctx);
void session_detach(struct session *s);
/* After tracer_run returned from a session_detach: drop the target and the
 * backend, keep the recorder, the stackmap and the signals, and set up
 * the next session_attach to attach to the same process again (a
 * recording suspended by Ctrl-Z lets the target go, then resumes). */
void session_release_target(struct session *s);
/* Launch mode, sampling over: the program's exit status (waited for when
 * it still runs, as target_wait_exit). */
int session_program_status(struct session *s);
void session_end(struct session *s);

/* The sampling loop, in the tracer thread between session_attach (and
 * target_start) and session_detach: one tick clock of cfg.rate Hz from
 * START_NS (SCHED_FIFO as cfg.rt_priority asks; its refusal said unless
 * QUIET_CLOCK or cfg.quiet), the session's signals, the target's events,
 * an optional extra descriptor, and the deadline cfg.duration after
 * START_NS. Each hook may be NULL. */
struct session_hooks {
	void *ctx;
	/* A stop signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT): true ends the loop
	 * (NULL: any stop signal ends it). */
	bool (*on_stop_signal)(void *ctx, int signo);
	/* session_open's extra signal (SIGWINCH for --top, SIGTSTP for a
	 * recording): true ends the loop (SESSION_END_STOPPED). */
	bool (*on_extra_signal)(void *ctx, int signo);
	/* EXTRA_FD polled readable or hung up (REVENTS): true ends the loop. */
	int extra_fd;                   /* -1: none */
	bool (*on_extra_fd)(void *ctx, short revents);
	/* Called at START_NS + k seconds (k >= 1), or at the first wake after:
	 * 0, or -1 to end the loop with an error. NULL: no timer. */
	int (*on_second)(void *ctx, uint64_t now_ns);
	bool quiet_clock;               /* say nothing when SCHED_FIFO is refused */
};

enum session_end {
	SESSION_END_GONE,               /* every traced process exited */
	SESSION_END_DURATION,           /* cfg.duration elapsed */
	SESSION_END_STOPPED,            /* a stop signal or the extra fd ended it */
	SESSION_END_ERROR,              /* the clock, poll or a tick failed (said) */
};

enum session_end session_run(struct session *s, uint64_t start_ns,
			     const struct session_hooks *h);

#endif
