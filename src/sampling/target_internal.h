/* target_internal: what target's files share (not an interface:
 * target.h is). target.c keeps the table of rows (one per traced thread)
 * and the sampling rounds' stops and resumes; target_events.c waits for
 * ptrace reports and acts on each (new threads and processes, exec, exits,
 * signal re-injection, group-stop); target_restart.c runs again a call our
 * interrupt or a stray signal ended with EINTR; target_forks.c lets go the
 * threads that fork (loose); target_reap.c decides when
 * the ends of --children processes are reaped; target_attach.c begins
 * tracing (the checks and messages of attach, the launch handshake). The
 * functions below are documented where they are defined; tg_ marks them as
 * target's own. */
#ifndef CSAMPLER_TARGET_INTERNAL_H
#define CSAMPLER_TARGET_INTERNAL_H
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "target.h"
#include "tidmap.h"

#define NS_PER_SEC 1000000000LL
/* How long a sampling round polls for stops before it sleeps. */
#define SPIN_NS (50 * 1000LL)
/* target_detach: how long it waits for the stops owed for its interrupts */
#define SETTLE_TIMEOUT_NS (100 * 1000000LL)
/* How long target_start waits for the launched program's execve. */
#define START_TIMEOUT_NS (30 * NS_PER_SEC)
/* Reports handled by one target_poll before it yields back to the caller. */
#define POLL_MAX_REPORTS 4096
/* Passes over /proc/PID/task while attaching (entries per pass: PROCFS_SCAN_MAX). */
#define ATTACH_MAX_PASSES 1000
/* Threads named by SIGCHLDs, looked for before a full pass (next_report). */
#define HINTS 16
/* --children: a process's threads are stopped to reap its children's
 * ends at most this often (target_reap.c). */
#define HELD_REAP_INTERVAL_NS (5 * 1000000LL)
/* ... and for at most this long (a thread slower to stop is let be). */
#define HELD_REAP_TIMEOUT_NS (2 * 1000000LL)
/* Remembered tids whose clone event must be ignored when it arrives late. */
#define GHOSTS 64
/* The threads of a process looked at when one took a stray signal or had
 * a child (a process of more is not: reading each thread would cost more
 * than the stop it saves). */
#define STRAY_CATCH_MAX 256
/* Children held at their first stop until their parent thread is let go
 * (target_forks.c). */
#define PARKED_MAX 64
/* How far up the parent chain we look for our own ancestors. */
#define ANCESTRY_MAX 4096
#define CAP_SYS_PTRACE_BIT 19
#define PF_KTHREAD_FLAG 0x00200000UL

enum row_state { RS_RUNNING, RS_GROUP_STOP, RS_COLLECT, RS_HELD };

struct row {
	enum row_state state;
	bool traced;          /* we are its tracer right now */
	bool intr_out;        /* interrupted (or newly attached), no stop seen yet */
	bool sample_out;      /* a sampling round gave up waiting for its interrupt-stop */
	bool clone_seen;      /* its parent's clone event was handled (or it was seized) */
	unsigned long long restart_ip; /* a call restarted at that ip, not re-entered yet */
	unsigned scan_gen;    /* per-sample mode: last /proc scan that listed it */
	bool loose;           /* persistent mode: a thread whose child's SIGCHLD came
	                       * for us, untraced between its stops, and not stopped
	                       * while it has children (target_restart.c) */
	bool loosen;          /* to be loose from its next stop */
	long long children_seen_ns; /* loose: when it was last seen with children */
	long long stoppable_read_ns; /* tg_row_stoppable's last read of its children */
	bool stoppable;       /* what that read said */
	bool forks;           /* --children: made a process we trace (tg_reap_at_detach) */
	bool fork_watch_off;  /* seized without PTRACE_O_TRACEFORK: alone in its process */
	bool options_owed;    /* auto-attached: given our options at its next stop */
};

/* A child seized with its parent thread's fork, held at its first stop. */
struct parked_child {
	pid_t child, parent;  /* the child's tid, its parent thread's */
	long long since_ns;
};

struct target {
	struct target_config cfg;
	pid_t main_pid;
	bool launched, started, detached;
	int exit_status;              /* launch mode, once the program is reaped */
	int go_fd, err_fd;            /* launch handshake pipes until target_start */
	char *cmd_name;               /* launch: argv[0], for messages */
	unsigned long options;        /* PTRACE_O_* for persistent seizing */

	struct row *rows;
	struct target_thread *pub;    /* parallel to rows */
	size_t nrows, cap;
	struct tidmap index;          /* tid -> row */
	size_t ncollect;              /* rows in RS_COLLECT */
	size_t nheld;                 /* rows in RS_HELD */
	bool reap_owed;               /* --children: an end may wait unreaped (tg_wait_tracee) */
	bool reaping;                 /* --children: a reap with threads held is under way */
	bool hold_owed;               /* tg_hold_threads waits for owed stops too */
	long long next_held_reap_ns;  /* --children: the next reap under a stop, not before */
	pid_t sigchld_unwoken;        /* --children: a process whose SIGCHLD woke no thread */
	unsigned long long held_reaps; /* reaps made with a process's threads stopped */
	unsigned scan_gen;
	int stat_fd;                  /* per-sample attach: /proc/PID/stat of the main process */

	pid_t ghosts[GHOSTS];
	unsigned ghost_next;
	sigset_t sigchld;
	pid_t hints[HINTS];           /* threads a SIGCHLD taken named (next_report) */
	pid_t *expect;                /* threads that owe us a stop (tg_expect_stop) */
	size_t nexpect, expect_cap;
	size_t nhints;
	bool hints_lost;              /* more SIGCHLD than hints, or one naming nobody */
	bool maybe_hidden;            /* a SIGCHLD was taken since the last full pass */
	bool in_full_pass;            /* a waitpid(-1) pass is under way */
	long long next_full_ns;       /* the next full pass is due then */
	unsigned long long restarted;  /* calls tg_restart_interrupted_call restarted */
	unsigned long long stray_caught; /* threads tg_catch_stray_wakers interrupted */
	bool any_loose;               /* a row may be loose, or to be (tg_check_loose) */
	unsigned long long loosened;  /* times a row was let go for its children */
	long long next_loose_check_ns; /* tg_check_loose's next look */
	struct parked_child parked[PARKED_MAX]; /* target_forks.c */
	size_t nparked;
	unsigned long long fork_loosened; /* of those, at a fork event */
	struct user_regs_struct regs;  /* of thread regs_tid (0: none), read at its stop */
	pid_t regs_tid;

	/* target_set_late_sample */
	target_late_fn late_fn;
	void (*late_done)(void *ctx);
	void *late_ctx;
};

/* ---- target.c -------------------------------------------------------------- */

/* Interrupt and hold the threads TIDS (stopped[k]: held), waiting at most
 * TIMEOUT_NS for their stops, and with OWED for the stops still owed for
 * earlier interrupts too; target_resume_threads lets them go. */
size_t tg_hold_threads(struct target *t, const pid_t *tids, size_t n, bool *stopped,
		       long long timeout_ns, bool owed);

bool tg_elf_is_32bit(const char *path);
void tg_emit(struct target *t, enum target_event_kind kind, pid_t pid, pid_t tid);
void tg_ghost_add(struct target *t, pid_t tid);
bool tg_ghost_take(struct target *t, pid_t tid);
bool tg_is_stop_signal(int sig);
bool tg_process_is_32bit(pid_t pid);
bool tg_process_known(const struct target *t, pid_t pid);
long tg_ptrace(int req, pid_t tid, unsigned long addr, unsigned long data);
void tg_read_comm(pid_t pid, char *out, size_t size);
void tg_remove_process(struct target *t, pid_t pid, bool announce);
/* PTRACE_CONT thread TID with signal SIG (0: none); a failure other than
 * ESRCH said under -v. */
void tg_cont(struct target *t, pid_t tid, int sig);
void tg_resume_held(struct target *t, size_t i, pid_t tid);
ssize_t tg_row_add(struct target *t, pid_t pid, pid_t tid, bool traced);
ssize_t tg_row_find(const struct target *t, pid_t tid);
void tg_row_remove(struct target *t, size_t i, bool announce);
void tg_row_set_state(struct target *t, size_t i, enum row_state st);
char tg_state_letter(const char *status);

/* ---- target_events.c ------------------------------------------------------- */

void tg_detach_now(struct target *t, ssize_t i, pid_t tid, int sig);
int tg_drain_all(struct target *t);
void tg_expect_stop(struct target *t, pid_t tid);
void tg_handle_report(struct target *t, pid_t tid, int status);
void tg_note_sigchld(struct target *t, pid_t sender);
pid_t tg_read_tgid(pid_t tid);
bool tg_report_may_wait(const struct target *t);
void tg_rescan_tasks(struct target *t);
bool tg_sigchld_pending(void);
pid_t tg_wait_report_spin(struct target *t, int *status, long long deadline,
			      long long spin_ns, const pid_t *tids, size_t n, size_t nspin);

/* ---- target_restart.c ------------------------------------------------------ */

/* Row I is at a stop of ours (or one for a signal that does not reach it),
 * about to be let go: a call that ended with a bare EINTR is run again. */
void tg_restart_interrupted_call(struct target *t, size_t i, pid_t tid);
/* Row I stops for a signal that reaches it: a call restarted for it that
 * it has not run again gets its EINTR back. */
void tg_undo_restart(struct target *t, size_t i, pid_t tid);
/* Whether signal SIG, being delivered to thread TID of PID, would reach it
 * were it not traced (true when unknown). */
bool tg_signal_reaches(pid_t pid, pid_t tid, int sig);
/* Row I took a stray signal (one that reaches no thread untraced): stop the
 * threads of its process it may have been taken from, so a call it woke
 * runs again (target_restart.c). */
void tg_catch_stray_wakers(struct target *t, size_t i);

/* ---- target_forks.c -------------------------------------------------------- */

/* Row I (tid TID) is at the delivery-stop of a SIGCHLD that reaches no
 * thread untraced: the thread whose child ended is to be loose. */
void tg_loosen_forker(struct target *t, size_t i, pid_t tid);
/* Whether row I, at a stop, is let go rather than resumed traced: in
 * per-sample mode; a loose row that has children (one to be loose becomes
 * so; one without children is traced again). */
bool tg_row_lets_go(struct target *t, size_t i);
/* Whether row I may be stopped: not a loose one that has children, or had
 * lately. */
bool tg_row_stoppable(struct target *t, size_t i);
/* Attach (persistent mode, without --children): a thread that has children
 * then, in a process of several, is loose from the start, never seized
 * (traced, the SIGCHLD of its first child to end could come while it is
 * stopped for a sample, before any stop showed that it forks). Once per
 * process: init; in each pass over its threads, defer(TID) says whether TID
 * is passed over: made a loose row once a thread of the process is traced
 * (traced_one), else left to the next pass; end_pass says whether one was
 * left so (a pass more is due), and if no thread was traced, the next pass
 * seizes them (a traced thread tells whether csampler may trace the
 * process). With --children (LATER), a thread that has children is passed
 * over in every pass and said so in DEFERRED: the caller seizes the
 * children first, then it (target_attach.c). */
struct tg_forkers {
	pid_t pid;
	bool on, traced_one, passed, later, deferred;
};
void tg_forkers_init(const struct target *t, struct tg_forkers *f, pid_t pid, bool later);
bool tg_forkers_defer(struct target *t, struct tg_forkers *f, pid_t tid);
bool tg_forkers_end_pass(struct tg_forkers *f);
/* The loose rows, at most every LOOSE_CHECK_NS: a gone one is removed (its
 * end is reported to nobody), a thread new in their process (one a loose
 * thread made) is traced. */
void tg_check_loose(struct target *t);
/* Row I reported a fork or vfork event: in a process of several, it is to
 * be loose from this stop, before the child can run (let alone end). */
void tg_loosen_at_fork(struct target *t, size_t i);
/* Row I is at a stop: if it was left without fork events (alone in its
 * process) or auto-attached with its parent's options, and its process has
 * several threads now, it gets our options back. */
void tg_fork_watch(struct target *t, size_t i);
/* The fork event of thread TID was handled: a child held for it is let go
 * unless TID is still to be let go itself. */
void tg_fork_event_done(struct target *t, pid_t tid);
/* CHILD, a process no row knows, is at its first stop: whether it is held
 * there (parked) because its parent thread, traced, is about to be let go
 * (its fork event not handled yet, or it is held for a sample). */
bool tg_park_child(struct target *t, pid_t child);
/* Let go the children held for thread PARENT (0: every one). */
void tg_release_children(struct target *t, pid_t parent);
/* Whether a child is held for thread PARENT (whose fork event is owed). */
bool tg_children_parked(const struct target *t, pid_t parent);
/* Let go the children held longer than PARKED_MAX_NS, or whose parent is
 * gone or untraced. */
void tg_release_stale_children(struct target *t);

/* ---- target_reap.c --------------------------------------------------------- */

/* waitpid(TID, STATUS, __WALL | WNOHANG) (TID -1: any tracee); with
 * --children the end of a process is left for tg_reap_step. A
 * signal-delivery-stop's report is left untaken (its signal stays the
 * kernel's until the thread is resumed): the caller resumes or lets go
 * such a thread before it waits for that thread again. */
pid_t tg_wait_tracee(struct target *t, pid_t tid, int *status);
/* Whether ends were left and no thread is in a stop of ours. */
bool tg_reap_due(const struct target *t);
/* Between rounds: the ends queued, one report per call; the children of a
 * process of several threads are reaped with those stopped. 0 when the
 * step is over or put off, -1 when nothing is left to wait for. */
pid_t tg_reap_step(struct target *t, int *status);
/* target_detach, --children: every thread held, every end queued reaped,
 * the threads that made processes let go, the others resumed (see
 * target_reap.c). */
void tg_reap_at_detach(struct target *t);
/* Whether the stray signal SIG a thread of PID took was the SIGCHLD of an
 * end reaped with PID's threads stopped (it woke no thread); once. */
bool tg_reap_took_signal(struct target *t, pid_t pid, int sig);

/* ---- target_attach.c ------------------------------------------------------- */


#endif
