/* target_reap: with --children, when and how the ends of traced processes
 * are reaped, so that the SIGCHLD the kernel then queues for a traced
 * parent wakes none of its threads (see target_internal.h; the waits
 * themselves are target_events.c's).
 *
 * When a traced child process ends, the kernel tells its parent (SIGCHLD)
 * only when we reap it (a traced zombie is seen by its tracer alone,
 * wait_task_zombie). That SIGCHLD, at SIG_DFL, is dropped for an untraced
 * parent thread; the parent being traced (--children needs its forks), it
 * is queued for the process, and a thread of it may see it pending: the
 * one the kernel wakes for it when the parent thread cannot take it (in a
 * stop, or flagged by one and not yet run), or any that enters a wait
 * which sets its own signal mask (sigtimedwait, pselect...: it finds the
 * signal pending at once). Each such wait ends with EINTR; the thread that
 * takes the signal stops for us and its call runs again, but another that
 * saw it and lost it to that thread returns EINTR to the program (measured,
 * blockers forking every 0.5 ms beside a thread in each call, 999 Hz, 3 s:
 * 9 to 17 EINTR, in every kind of call; reaped only between rounds, after
 * the stops and once the parent ran: 1 to 5, all in sigtimedwait).
 *
 * So the end of a child of a process of several threads, where SIGCHLD
 * would be dropped, is reaped with every thread of that process stopped
 * by us (held, their calls made to run again, as --idle's rounds do): the
 * signal then wakes nobody, and the first thread resumed takes it, for us
 * (tg_restart_interrupted_call), before any returns from its call. Such a
 * reap waits for a tick-like interval (HELD_REAP_INTERVAL_NS: the parent
 * sees its child's end up to that late) and stops threads for at most
 * HELD_REAP_TIMEOUT_NS. Other ends (a thread's: no SIGCHLD to anyone; the
 * first process's: its parent is not ours; a child of a single-threaded
 * process: no other thread to wake; one whose SIGCHLD is caught: a signal
 * the program sees anyway) are reaped between rounds, as they come. The
 * ends left when csampler lets go are reaped so too (tg_reap_at_detach).
 * Measured, 3 s at 999 and 99 Hz, quiet and beside two and six busy loops:
 * 0 EINTR in 40 runs of 40. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "array.h"
#include "clock.h"
#include "procfs.h"
#include "target_internal.h"

/* Whether the end of TID may be reaped now. */
static bool reap_safe(const struct target *t, pid_t tid)
{
	if (!t->cfg.children || tid == t->main_pid)
		return true;
	ssize_t i = tid > 0 ? tg_row_find(t, tid) : -1;
	return i >= 0 && t->pub[i].pid != tid;
}

bool tg_reap_due(const struct target *t)
{
	return t->reap_owed && !t->reaping && t->ncollect == 0 && t->nheld == 0;
}

static int status_of(const siginfo_t *si)
{
	switch (si->si_code) {
	case CLD_EXITED:
		return (si->si_status & 0xff) << 8;
	case CLD_KILLED:
		return si->si_status & 0x7f;
	case CLD_DUMPED:
		return (si->si_status & 0x7f) | 0x80;
	case CLD_CONTINUED:
		return 0xffff;
	default: /* CLD_TRAPPED, CLD_STOPPED: the stop's code, event included */
		return (si->si_status << 8) | 0x7f;
	}
}

/* waitid(IDTYPE, ID, FLAGS | __WALL | WNOHANG) as waitpid reports it: the
 * tid (STATUS set), 0 if none, -1 with errno. */
static pid_t wait_one(idtype_t idtype, pid_t id, int flags, int *status)
{
	siginfo_t si;
	int r;
	do {
		si.si_pid = 0;
		r = waitid(idtype, (id_t)id, &si, flags | __WALL | WNOHANG);
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		return -1;
	if (si.si_pid == 0)
		return 0;
	*status = status_of(&si);
	return si.si_pid;
}

/* Whether a report (as waitpid gives it) is a signal-delivery-stop: a
 * ptrace stop with no event, its signal in hand (we trace with
 * PTRACE_SEIZE and no syscall stops, so every other stop has an event). */
static bool signal_delivery_stop(int status)
{
	return WIFSTOPPED(status) && (status >> 16) == 0;
}

/* A report is looked at first (WNOWAIT) and taken only when it is not a
 * signal-delivery-stop. The kernel keeps the stop's signal in the thread
 * (exit_code) until a wait takes the report: taken, it is held by us alone,
 * and if csampler were killed (SIGKILL) before it resumed the thread with
 * it, the signal would be lost (measured: a tracer that takes the stop of a
 * SIGUSR1 and exits: the signal never reaches the thread; one that only
 * looks: it does). Left untaken, the report ends when the thread is
 * resumed or let go with the signal (PTRACE_CONT or PTRACE_DETACH, which
 * every path does at once for such a stop: dispose_stop), and a tracer
 * killed before that leaves the signal where the kernel delivers it. */
pid_t tg_wait_tracee(struct target *t, pid_t tid, int *status)
{
	int flags = WSTOPPED | WEXITED;
	if (t->cfg.children && !reap_safe(t, tid)) {
		flags = WSTOPPED;
		t->reap_owed = true;
	}
	pid_t r = tid > 0 ? wait_one(P_PID, tid, flags | WNOWAIT, status)
			  : wait_one(P_ALL, 0, flags | WNOWAIT, status);
	if (r <= 0 || signal_delivery_stop(*status))
		return r;
	int taken;
	if (wait_one(P_PID, r, flags, &taken) == r)
		*status = taken;
	return r;
}

/* The process that zombie Z's end is told to, 0 if unknown. */
static pid_t parent_of(pid_t z)
{
	char buf[1024];
	struct procfs_stat st;
	if (procfs_read_file(z, 0, "stat", buf, sizeof buf) <= 0 || !procfs_parse_stat(buf, &st))
		return 0;
	return st.ppid;
}

/* The traced threads of process P that are running (not in a stop of ours
 * or the process's group-stop) into *TIDS (grown as needed); -1 when
 * memory runs out. Sets *SEVERAL when P has more than one traced thread. */
static ssize_t running_threads(struct target *t, pid_t p, pid_t **tids, size_t *cap, bool *several)
{
	size_t n = 0, traced = 0;
	for (size_t i = 0; i < t->nrows; i++) {
		if (t->pub[i].pid != p || !t->rows[i].traced)
			continue;
		traced++;
		if (t->rows[i].state != RS_RUNNING)
			continue;
		if (array_grow(tids, cap, n + 1, sizeof **tids, 16) < 0)
			return -1;
		(*tids)[n++] = t->pub[i].tid;
	}
	*several = traced > 1;
	return (ssize_t)n;
}

/* Reap, with P's threads held, every end queued of a child of P that comes
 * first; the ends are handled as reports. False when it must wait (too
 * soon after the last, or out of memory). */
static bool reap_held(struct target *t, pid_t p, pid_t *tids, size_t n)
{
	long long now = (long long)clock_monotonic_ns();
	if (now < t->next_held_reap_ns)
		return false;
	bool *stopped = calloc(n ? n : 1, sizeof *stopped);
	if (!stopped)
		return false;
	t->reaping = true;  /* (no step within: the hold drains reports) */
	tg_hold_threads(t, tids, n, stopped, HELD_REAP_TIMEOUT_NS, true);
	for (;;) {
		int status;
		pid_t z = wait_one(P_ALL, 0, WEXITED | WNOWAIT, &status);
		if (z <= 0 || parent_of(z) != p || wait_one(P_PID, z, WEXITED, &status) != z)
			break;
		tg_handle_report(t, z, status);
		t->sigchld_unwoken = p;
		t->held_reaps++;
	}
	target_resume_threads(t, tids, n, stopped);
	t->reaping = false;
	free(stopped);
	t->next_held_reap_ns = (long long)clock_monotonic_ns() + HELD_REAP_INTERVAL_NS;
	return true;
}

pid_t tg_reap_step(struct target *t, int *status)
{
	pid_t *tids = NULL;
	size_t cap = 0;
	pid_t got = 0;
	for (;;) {
		/* the first end queued, left queued */
		pid_t z = wait_one(P_ALL, 0, WEXITED | WNOWAIT, status);
		if (z <= 0) {
			t->reap_owed = false;
			got = z;
			break;
		}
		ssize_t i = tg_row_find(t, z);
		bool process = i >= 0 ? t->pub[i].pid == z : tg_read_tgid(z) == z;
		pid_t p = process ? parent_of(z) : 0;
		bool several = false;
		/* (a process not ours has no traced thread: not several) */
		ssize_t n = p > 0 && p != z ? running_threads(t, p, &tids, &cap, &several) : 0;
		if (n < 0)
			break;  /* (out of memory: the next step tries again) */
		if (several && !tg_signal_reaches(p, p, SIGCHLD)) {
			if (!reap_held(t, p, tids, (size_t)n))
				break;  /* put off: reap_owed stays */
			continue;
		}
		got = wait_one(P_PID, z, WEXITED, status);
		if (got != 0)
			break;
	}
	free(tids);
	return got;
}

bool tg_reap_took_signal(struct target *t, pid_t pid, int sig)
{
	if (sig != SIGCHLD || pid != t->sigchld_unwoken)
		return false;
	t->sigchld_unwoken = 0;
	return true;
}

/* At the tracer's exit the kernel tells each traced zombie's parent of its
 * end, and a live traced child's parent when it ends later: a parent
 * thread still traced then is queued that SIGCHLD as between rounds, with
 * nobody left to catch the thread it wakes (ftrace: a connect's EINTR 1.7
 * ms after the exit's signals). So, with every thread held, the ends
 * queued are reaped (their signals wake nobody), and the threads that made
 * processes are let go first: untraced, they take the signal as their own,
 * and are dropped any other that comes. Called before the stops owed are
 * settled: a thread the hold's interrupt woke and that did not stop in
 * time would return EINTR at the exit (six busy loops beside: 1 to 3 EINTR
 * in 2 runs of 8 in the other order, 0 in 16 runs now). */
void tg_reap_at_detach(struct target *t)
{
	if (!t->cfg.children || t->cfg.mode != TARGET_SEIZE_PERSISTENT || !t->started || t->nrows == 0)
		return;
	pid_t *tids = malloc(t->nrows * sizeof *tids);
	bool *stopped = calloc(t->nrows, sizeof *stopped);
	size_t n = 0;
	for (size_t i = 0; tids && stopped && i < t->nrows; i++)
		if (t->rows[i].traced && t->rows[i].state == RS_RUNNING)
			tids[n++] = t->pub[i].tid;
	if (n > 0) {
		t->reaping = true;
		/* (once: up to the settling's bound, so that a forking
		 * thread waiting for a CPU is held and let go too) */
		tg_hold_threads(t, tids, n, stopped, SETTLE_TIMEOUT_NS, true);
		int status;
		pid_t z;
		while ((z = wait_one(P_ALL, 0, WEXITED, &status)) > 0)
			tg_handle_report(t, z, status);
		for (size_t k = 0; k < n; k++) {
			ssize_t i = tg_row_find(t, tids[k]);
			if (!stopped[k] || i < 0 || !t->rows[i].forks || t->rows[i].state != RS_HELD)
				continue;
			tg_detach_now(t, i, tids[k], 0);
			stopped[k] = false;
		}
		target_resume_threads(t, tids, n, stopped);
		t->reaping = false;
	}
	free(tids);
	free(stopped);
}

