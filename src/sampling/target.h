/* target: the ptrace life of the profiled processes. The only room that calls
 * ptrace() for process control and waitpid().
 *
 * Contract: every thread of every traced process is SEIZEd (never EXITKILL);
 * every signal the target receives is re-injected exactly once; group-stops
 * are kept with PTRACE_LISTEN so SIGSTOP/SIGCONT/Ctrl-Z behave as without us.
 * Every call on a target is made from one thread, the session's tracer thread
 * (tracer.h), and the tracees are let go when that thread exits: each ends
 * untraced, running (or in its group-stop), with pending signals passed on,
 * and no thread blocked in a system call is woken (no EINTR). Only threads
 * read as running are ever interrupted; one that blocked in between has a
 * call that our interrupt ended with a bare EINTR restarted. Threads that vanish
 * (ESRCH) are dropped silently. Events the other rooms care about (new process,
 * exec, exit) are reported through the callback, from target_poll or from
 * within target_stop_threads. All errors a user can cause are printed once by
 * target_attach/target_launch, which return a target_error (session_exit_status
 * maps it to csampler's exit status, in one place). */
#ifndef CSAMPLER_TARGET_H
#define CSAMPLER_TARGET_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

struct target;

enum target_event_kind {
	TARGET_EV_PROCESS_NEW,   /* a process is traced (the first one, or a --children fork) */
	TARGET_EV_EXEC,          /* pid executed a new program: its mappings changed */
	TARGET_EV_PROCESS_EXIT,  /* the last thread of pid is gone */
	TARGET_EV_THREAD_NEW,    /* tid of pid is traced */
	TARGET_EV_THREAD_EXIT,   /* tid of pid is gone */
	TARGET_EV_THREAD_EXITING, /* tid of pid is stopped on its way out
	                          * (cfg.exit_events): its /proc files still
	                          * tell its last CPU time; it is resumed on
	                          * return (its THREAD_EXIT follows) */
};

struct target_event {
	enum target_event_kind kind;
	pid_t pid;               /* thread group id */
	pid_t tid;               /* thread (== pid for process events) */
};

/* Why target_attach or target_launch failed (0: it did not). */
enum target_error {
	TARGET_OK = 0,
	TARGET_ERR_FAILED,          /* anything not below */
	TARGET_ERR_NO_PROCESS,      /* no such process, or it exited while attaching */
	TARGET_ERR_BAD_TARGET,      /* a zombie, a kernel thread, csampler itself or an
	                             * ancestor; a directory given as the program */
	TARGET_ERR_PERMISSION,      /* the kernel refused ptrace (diagnosis printed) */
	TARGET_ERR_TRACED,          /* another tracer has it */
	TARGET_ERR_RESOURCE,        /* memory, descriptors, processes */
	TARGET_ERR_NOT_EXEC,        /* launch: found, not executable */
	TARGET_ERR_NOT_FOUND,       /* launch: no such command */
};

typedef void (*target_event_fn)(void *ctx, const struct target_event *ev);

enum target_seize_mode {
	TARGET_SEIZE_PERSISTENT, /* stay attached for the whole run */
	TARGET_SEIZE_PER_SAMPLE, /* seize before each sample, detach after */
};

struct target_config {
	bool children;                  /* follow fork/vfork/clone children */
	enum target_seize_mode mode;
	target_event_fn on_event;       /* may be NULL */
	void *ctx;
	int verbose;
	int stdout_fd;                  /* launch: the program's standard output is a
	                                 * copy of this descriptor; -1: csampler's */
	bool exit_events;               /* persistent mode: stop each thread at its
	                                 * exit (PTRACE_O_TRACEEXIT) and tell
	                                 * TARGET_EV_THREAD_EXITING (a thread killed
	                                 * by SIGKILL does not stop) */
};

struct target_thread {
	pid_t pid, tid;
};

/* Before attaching: with threads TIDS (-t), *PID (0: not given) becomes
 * their process, and each must be a thread of it (else one line said and
 * TARGET_ERR_NO_PROCESS or TARGET_ERR_BAD_TARGET); without, a *PID that is
 * a thread but not its process is said (unless QUIET), and its process is
 * sampled. 0 or a target_error. */
int target_resolve_threads(pid_t *pid, const pid_t *tids, size_t ntids, bool quiet);
/* Attach to every thread of PID. On failure prints one line naming the cause
 * and the fix and returns a target_error; on success returns 0. */
int target_attach(struct target **out, pid_t pid, const struct target_config *cfg);

/* Fork and trace ARGV (argv[0] looked up in PATH). The child is traced before
 * execvp, inherits stdio (stdout replaced by cfg->stdout_fd if not -1) and the
 * environment; it stops before exec until
 * target_start is called. Command not found / not executable: message as a
 * shell prints it, returns TARGET_ERR_NOT_FOUND / TARGET_ERR_NOT_EXEC. */
int target_launch(struct target **out, char *const argv[], const struct target_config *cfg);
/* Let a launched program run (exec it). No-op after attach. */
int target_start(struct target *t);

/* Handle every pending event (waitpid WNOHANG, all children) and return how
 * many were handled, or -1 on an unexpected error. Never blocks. */
int target_poll(struct target *t);
/* As target_poll, for a caller that has not taken SIGCHLD (after a sampling
 * tick). Persistent mode looks only if SIGCHLD is pending, or a report may
 * hide behind one taken before (merged signals; a full pass over every
 * tracee is then due, at most every 20 us x tracees): a waitpid over every
 * tracee is not free. Per-sample mode always looks. Call it after every
 * tick: it bounds how long a merged report waits. */
int target_poll_pending(struct target *t);
/* The caller took a SIGCHLD from SENDER (its si_pid / ssi_pid) from its
 * signalfd: the next target_poll looks for that thread's report first. */
void target_note_sigchld(struct target *t, pid_t sender);

/* True when no traced process is left (all exited or were detached). */
bool target_done(const struct target *t);
/* The main process's status as a shell reports it (exit code, or
 * 128+signal) once its death was reported to us (in attach mode too: a
 * tracer is told); -1 before. */
int target_exit_status(const struct target *t);
/* Launch mode, after sampling stopped early (and detached): wait for the
 * program to end; its exit status (128 + signal when killed), or
 * target_exit_status when it was reaped already. */
int target_wait_exit(struct target *t);

/* The live threads, in a stable order; valid until the next call into target. */
size_t target_threads(const struct target *t, const struct target_thread **out);
/* The main pid (the attached or launched process). */
pid_t target_main_pid(const struct target *t);

/* Stop the given threads together (PTRACE_INTERRUPT each, then wait for each
 * interrupt-stop, up to TARGET_STOP_TIMEOUT_NS, servicing other events
 * meanwhile). stopped[i] tells whether tids[i] is now in an interrupt-stop
 * we own. Returns the number stopped. */
#define TARGET_STOP_TIMEOUT_NS (20 * 1000000LL)
size_t target_stop_threads(struct target *t, const pid_t *tids, size_t n, bool *stopped);
/* The sampling round: interrupt the N threads TIDS together, and as soon as
 * each one is in a stop we own call FN(CTX, index in tids, tid, its
 * registers, or NULL when they could not be read) — FN may read the
 * thread's memory — then resume that
 * thread at once, so no thread waits stopped for a slower one. While one of
 * the first NSPIN threads has not stopped, it polls for the stops for up to
 * SPIN_NS before it sleeps until one comes (polling saves the wake-up
 * latency; it costs a CPU that may have other work; the others are waited
 * for asleep). A thread that has not stopped within TIMEOUT_NS was not on a
 * CPU (it waits for one): its stop comes later, to the late-sample hook.
 * SENT(CTX), if given, is called once the interrupts are sent, before any
 * wait (csampler still holds its CPU). NOT_SENT(CTX, index, tid), if
 * given, is called for each thread not interrupted whose stop will not
 * come to the late-sample hook either: gone, not to be stopped now, or
 * owing a stop that is no sample's (a new thread's first, reported after
 * the clone that made it known): none is due for this round. Returns how
 * many threads FN was called for. */
typedef void (*target_sample_fn)(void *ctx, size_t index, pid_t tid,
				 const struct user_regs_struct *regs);
struct target_round {
	const pid_t *tids;
	size_t n, nspin;
	long long spin_ns, timeout_ns;
	target_sample_fn fn;
	void (*sent)(void *ctx);
	void (*not_sent)(void *ctx, size_t index, pid_t tid);
	void *ctx;
};
size_t target_sample_threads(struct target *t, const struct target_round *round);
/* A round waits SAMPLE_TIMEOUT (2 ms) for each stop; a thread slower than
 * that was waiting for a CPU, and its interrupt-stop comes when it gets one.
 * Then FN(CTX, tid, its registers or NULL) is called while it is stopped,
 * the thread is resumed, and DONE(CTX) is called. A signal-delivery-stop or
 * a group-stop that takes that stop's place calls FN with NULL and DONE: no
 * sample is due. FN NULL: it is only
 * resumed. The hook may run inside any call that handles target events. */
typedef void (*target_late_fn)(void *ctx, pid_t tid, const struct user_regs_struct *regs);
void target_set_late_sample(struct target *t, target_late_fn fn, void (*done)(void *ctx),
			    void *ctx);
/* Registers of a thread stopped by target_stop_threads. 0, or -1 with errno. */
int target_get_regs(struct target *t, pid_t tid, struct user_regs_struct *regs);
/* Resume the threads marked stopped[i]. */
void target_resume_threads(struct target *t, const pid_t *tids, size_t n, const bool *stopped);

/* Whether TID may be stopped now: not a thread that has child processes
 * and whose child's end queued a SIGCHLD for us (it is let go, since a
 * SIGCHLD that comes while it is stopped wakes another thread, which may
 * then return EINTR; target_restart.c): sample it without a stop. */
bool target_thread_stoppable(struct target *t, pid_t tid);
/* TID's /proc entry is gone (the caller could not open it). If it ended as
 * our tracee, handle that report now; if it is no tracee of ours any more
 * (its end was never reported), forget it, with its thread (and process)
 * exit events. */
void target_thread_gone(struct target *t, pid_t tid);

/* Stop being a tracer: take the stops still owed for our interrupts and
 * resume each the usual way (a call our interrupt ended with EINTR is
 * restarted; at most 100 ms), then forget every tracee (and let a launched
 * program that was never started exit). The kernel detaches them when the
 * tracer thread exits, which the caller does next. Safe to call more than
 * once and from the die() hook. */
void target_detach(struct target *t);
void target_free(struct target *t);

#endif
