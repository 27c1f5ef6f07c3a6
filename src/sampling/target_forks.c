/* target_forks: threads that fork, in persistent mode without --children
 * (see target_internal.h). A child's SIGCHLD at SIG_DFL is dropped by the
 * kernel for an untraced parent thread and queued for a traced one, where it
 * can wake another thread of the process into an EINTR. So a thread that
 * forks is let go (loose) before its child can end: at its fork event, and
 * its child, seized with it, is held at its first stop until then. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "error.h"
#include "procfs.h"
#include "target_internal.h"

/* ---- threads that fork --------------------------------------------------------------
 * A child's end queues SIGCHLD for the thread that forked it. The kernel
 * drops a SIGCHLD at SIG_DFL (or an ignored one) as it comes when that
 * thread is not traced, whatever the others are (it asks the parent thread
 * alone): measured, a tracer that only passes signals on, 3 s of blockers
 * forking every 0.5 ms: 2,921 SIGCHLD queued with every thread traced, 0
 * with all but the forking one. Queued while the forking thread is stopped
 * by us (a sample, a signal's stop), it wakes a thread that waits, which
 * then returns EINTR when another takes the signal first, faster than
 * tg_catch_stray_wakers can stop it (1 to 12 EINTR in 3 s at 999 Hz). Let
 * go between its samples but still stopped for them, the thread fared
 * worse (9 to 43): a SIGCHLD queued during its sample is then taken by it
 * silently, once let go. So a thread that forks is loose: untraced, and
 * never stopped while it has children, nor for LOOSE_QUIET_NS after it was
 * last seen with one (the sampler counts its samples without a stack:
 * target_thread_stoppable); then it is traced again, where it sleeps
 * (retrace_asleep) or seized for a sample. It is made loose before its
 * child can end: a traced thread is
 * seized with PTRACE_O_TRACEFORK, so it stops at each fork
 * (tg_loosen_at_fork) and its child, seized with it, at its first stop,
 * where the child is held (tg_park_child) until its parent is let go. One
 * that has children at attach is loose from the start (tg_forkers_defer).
 * Loosened only at a child's SIGCHLD, as before, a thread traced at attach
 * between its child's reaping and its next fork (as system() does) had
 * that child's SIGCHLD queued: 1 EINTR in 20 attaches of 2 s at --idle
 * 999 Hz beside two busy loops, forking every 2 ms; that path stays for a
 * fork the kernel did not report (tg_loosen_forker). Only in a process of
 * more than one thread (alone, it takes the signal itself, at a stop of
 * ours), in persistent mode, and not with --children (where the child is
 * traced, its end reaped by us: target_reap.c). In per-sample mode every
 * thread of a process of several is loose so: it is stopped only without
 * children (the SIGCHLD queued while it is seized would wake a thread
 * untraced, and nothing would catch it). What a loose thread does
 * untraced goes unreported: its end and the threads it makes are found
 * every LOOSE_CHECK_NS. */
#define LOOSE_CHECK_NS 100000000LL
/* A loose thread is stopped again only once it was seen without children
 * for this long: one that forks over and over has none for a moment
 * between a child's reaping and the next fork, and each time it was
 * traced again its next child's end came for us (12 times in 3 s, 1 EINTR
 * in 7 runs); one that runs a program now and then is sampled again soon
 * after. */
#define LOOSE_QUIET_NS 100000000LL
/* A child held at its first stop is let go after this long whatever its
 * parent does (its parent's fork event is reported as the fork returns:
 * microseconds, unless the parent is held for a sample). */
#define PARKED_MAX_NS 20000000LL
/* tg_row_stoppable's answer is read again after this long: less than a
 * tick at the highest rate (10 kHz: 100 us), more than the time from the
 * sampler's question to the interrupt in one tick. */
#define STOPPABLE_READ_REUSE_NS 50000LL

/* The row of row I's process (row I first) whose thread is CHILD's parent,
 * or -1; N: the rows of that process. */
static ssize_t parent_row(const struct target *t, size_t i, pid_t child, size_t *n)
{
	pid_t pid = t->pub[i].pid;
	ssize_t found = procfs_thread_has_child(pid, t->pub[i].tid, child) ? (ssize_t)i : -1;
	*n = 0;
	for (size_t k = 0; k < t->nrows; k++) {
		if (t->pub[k].pid != pid)
			continue;
		++*n;
		if (found < 0 && k != i && *n <= STRAY_CATCH_MAX &&
		    procfs_thread_has_child(pid, t->pub[k].tid, child))
			found = (ssize_t)k;
	}
	return found;
}

/* Row K is to be loose from its next stop (tg_row_lets_go). */
static void mark_to_loosen(struct target *t, size_t k)
{
	t->rows[k].loosen = true;
	t->rows[k].children_seen_ns = (long long)clock_monotonic_ns();
	t->any_loose = true;
}

void tg_loosen_forker(struct target *t, size_t i, pid_t tid)
{
	siginfo_t si;
	if (t->cfg.mode != TARGET_SEIZE_PERSISTENT || t->cfg.children ||
	    tg_ptrace(PTRACE_GETSIGINFO, tid, 0, (unsigned long)&si) < 0 ||
	    si.si_signo != SIGCHLD || si.si_code <= 0)   /* (a child's, not a kill's) */
		return;
	size_t n;
	ssize_t k = parent_row(t, i, si.si_pid, &n);
	if (k < 0 || n < 2 || t->rows[k].loose || t->rows[k].loosen)
		return;
	mark_to_loosen(t, (size_t)k);
}

void tg_forkers_init(const struct target *t, struct tg_forkers *f, pid_t pid, bool later)
{
	char st[4096];
	*f = (struct tg_forkers){ .pid = pid, .later = later && t->cfg.children };
	f->on = t->cfg.mode == TARGET_SEIZE_PERSISTENT && (!t->cfg.children || f->later) &&
		procfs_read_file(pid, pid, "status", st, sizeof st) > 0 &&
		procfs_status_long(st, "Threads", 1) > 1;
}

static bool add_loose_row(struct target *t, pid_t pid, pid_t tid)
{
	ssize_t i = tg_row_add(t, pid, tid, false);
	if (i < 0)
		return false;
	t->rows[i].clone_seen = true;
	t->rows[i].loose = true;
	t->rows[i].children_seen_ns = (long long)clock_monotonic_ns();
	t->any_loose = true;
	t->loosened++;
	return true;
}

bool tg_forkers_defer(struct target *t, struct tg_forkers *f, pid_t tid)
{
	if (!f->on || !procfs_thread_has_child(f->pid, tid, 0))
		return false;
	if (f->later) {
		f->deferred = true;
		return true;
	}
	if (!f->traced_one) {
		f->passed = true;   /* (looked at again in the next pass) */
		return true;
	}
	return add_loose_row(t, f->pid, tid);   /* (out of memory: seized) */
}

bool tg_forkers_end_pass(struct tg_forkers *f)
{
	bool again = f->passed;
	if (f->passed && !f->traced_one)
		f->on = false;
	f->passed = false;
	return again;
}

bool tg_row_lets_go(struct target *t, size_t i)
{
	struct row *r = &t->rows[i];
	if (t->cfg.mode == TARGET_SEIZE_PER_SAMPLE)
		return true;
	bool counted = r->loosen;
	if (r->loosen) {
		r->loosen = false;
		r->loose = true;
		t->loosened++;
	}
	if (!r->loose)
		return false;
	if (!procfs_thread_has_child(t->pub[i].pid, t->pub[i].tid, 0)) {
		r->loose = false;   /* (traced again: its next fork shows it) */
		return false;
	}
	if (!counted)
		t->loosened++;   /* (seized again for a sample, and it forked since) */
	return true;
}

bool tg_row_stoppable(struct target *t, size_t i)
{
	struct row *r = &t->rows[i];
	/* (per-sample mode: any thread of a process of several, which a SIGCHLD
	 * queued while it is stopped would wake untraced, beyond any catch) */
	bool per_sample = t->cfg.mode == TARGET_SEIZE_PER_SAMPLE && t->nrows > 1;
	if (r->traced || (!r->loose && !per_sample))
		return true;
	/* (asked twice a tick, by the sampler to count it and before its
	 * interrupt: one read of its children serves both) */
	long long now = (long long)clock_monotonic_ns();
	if (now - r->stoppable_read_ns < STOPPABLE_READ_REUSE_NS)
		return r->stoppable;
	r->stoppable_read_ns = now;
	if (procfs_thread_has_child(t->pub[i].pid, t->pub[i].tid, 0))
		r->children_seen_ns = now;
	r->stoppable = now - r->children_seen_ns >= LOOSE_QUIET_NS;
	return r->stoppable;
}

/* Trace the threads of PID no row knows (made by a loose thread), as at
 * attach: running, seized with our options. */
static void trace_new_threads(struct target *t, pid_t pid)
{
	struct procfs_dir d;
	if (!procfs_dir_open(&d, pid))
		return;
	for (pid_t tid; (tid = procfs_dir_next(&d)) > 0;) {
		if (tg_row_find(t, tid) >= 0 || tg_ptrace(PTRACE_SEIZE, tid, 0, t->options) < 0)
			continue;
		ssize_t k = tg_row_add(t, pid, tid, true);
		if (k < 0)
			break;   /* (out of memory: it stays traced, unknown, until we end) */
		t->rows[k].clone_seen = true;
		tg_emit(t, TARGET_EV_THREAD_NEW, pid, tid);
	}
	procfs_dir_close(&d);
}

/* Loose row I, quiet for LOOSE_QUIET_NS (as of NOW) and asleep, is traced
 * again as it sleeps, without a stop: its next fork is then reported
 * before the child runs (tg_loosen_at_fork). Seized for a sample instead,
 * it is caught as it runs, often inside the fork that ends its quiet (the
 * kernel reports no fork begun untraced): let go again at that stop, a
 * child already made. A fork begun between the looks and the seize is
 * caught by the look after it. */
static void retrace_asleep(struct target *t, size_t i, long long now)
{
	struct row *r = &t->rows[i];
	pid_t pid = t->pub[i].pid, tid = t->pub[i].tid;
	char text[1024];
	struct procfs_stat st;
	if (r->traced || r->loosen || now - r->children_seen_ns < LOOSE_QUIET_NS ||
	    procfs_thread_has_child(pid, tid, 0) ||
	    procfs_read_file(pid, tid, "stat", text, sizeof text) <= 0 ||
	    !procfs_parse_stat(text, &st) || st.state != 'S' ||
	    tg_ptrace(PTRACE_SEIZE, tid, 0, t->options) < 0)
		return;
	r->traced = true;
	r->loose = false;
	if (procfs_thread_has_child(pid, tid, 0))
		mark_to_loosen(t, i);   /* (let go at its next stop) */
}

void tg_check_loose(struct target *t)
{
	long long now = (long long)clock_monotonic_ns();
	if (!t->any_loose || now < t->next_loose_check_ns)
		return;
	t->next_loose_check_ns = now + LOOSE_CHECK_NS;
	pid_t scanned[8];
	size_t nscanned = 0;
	bool left = false;
	for (size_t i = t->nrows; i-- > 0;) {
		struct row *r = &t->rows[i];
		pid_t pid = t->pub[i].pid, tid = t->pub[i].tid;
		if (!r->loose && !r->loosen)
			continue;
		if (r->loose && !r->traced && syscall(SYS_tgkill, pid, tid, 0) < 0 && errno == ESRCH) {
			tg_row_remove(t, i, true);
			if (tid == pid)
				tg_remove_process(t, pid, true);
			continue;
		}
		if (r->loose && t->cfg.mode == TARGET_SEIZE_PERSISTENT)
			retrace_asleep(t, i, now);
		left = left || r->loose || r->loosen;
		size_t k = 0;
		while (k < nscanned && scanned[k] != pid)
			k++;
		if (k == nscanned && nscanned < sizeof scanned / sizeof scanned[0])
			scanned[nscanned++] = pid;
	}
	t->any_loose = left;
	for (size_t k = 0; k < nscanned; k++)
		trace_new_threads(t, scanned[k]);
}

/* ---- a fork reported: the parent let go before its child runs ---------------------- */

/* Whether row I's process has more than one row. */
static bool process_of_several(const struct target *t, size_t i)
{
	size_t n = 0;
	for (size_t k = 0; k < t->nrows && n < 2; k++)
		n += t->pub[k].pid == t->pub[i].pid;
	return n >= 2;
}

/* (a thread alone in its process takes its children's SIGCHLD itself: its
 * fork events, a stop of it and of its child each, would only slow its
 * forks, 10% of a fork-and-wait loop's rate at 99 Hz; they are turned off
 * until it makes a thread, whose clone event turns them on again) */
void tg_loosen_at_fork(struct target *t, size_t i)
{
	if (t->cfg.mode != TARGET_SEIZE_PERSISTENT || t->cfg.children)
		return;
	struct row *r = &t->rows[i];
	if (!process_of_several(t, i)) {
		if (tg_ptrace(PTRACE_SETOPTIONS, t->pub[i].tid, 0,
			      t->options & ~(unsigned long)(PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK)) == 0)
			r->fork_watch_off = true;
		return;
	}
	if (r->loosen)
		return;
	if (r->loose)   /* (seized again for a sample: let go again at its stop) */
		r->children_seen_ns = (long long)clock_monotonic_ns();
	else
		mark_to_loosen(t, i);
	t->fork_loosened++;
}

void tg_fork_watch(struct target *t, size_t i)
{
	struct row *r = &t->rows[i];
	if (!(r->fork_watch_off || r->options_owed) || !r->traced || !process_of_several(t, i))
		return;
	if (tg_ptrace(PTRACE_SETOPTIONS, t->pub[i].tid, 0, t->options) == 0)
		r->fork_watch_off = r->options_owed = false;
}

static void release_parked(struct target *t, size_t k)
{
	pid_t child = t->parked[k].child;
	t->parked[k] = t->parked[--t->nparked];
	if (tg_ptrace(PTRACE_DETACH, child, 0, 0) < 0 && errno != ESRCH && t->cfg.verbose)
		warn_errno("target: cannot let go child process %d", (int)child);
}

void tg_release_children(struct target *t, pid_t parent)
{
	for (size_t k = t->nparked; k-- > 0;)
		if (parent == 0 || t->parked[k].parent == parent)
			release_parked(t, k);
}

bool tg_children_parked(const struct target *t, pid_t parent)
{
	for (size_t k = 0; k < t->nparked; k++)
		if (t->parked[k].parent == parent)
			return true;
	return false;
}

void tg_fork_event_done(struct target *t, pid_t tid)
{
	if (t->nparked == 0)
		return;
	ssize_t i = tg_row_find(t, tid);
	if (i < 0 || !t->rows[i].traced || !(t->rows[i].loose || t->rows[i].loosen))
		tg_release_children(t, tid);
}

bool tg_park_child(struct target *t, pid_t child)
{
	char st[4096];
	if (t->cfg.mode != TARGET_SEIZE_PERSISTENT || t->cfg.children || t->nparked >= PARKED_MAX ||
	    procfs_read_file(child, 0, "status", st, sizeof st) <= 0)
		return false;
	pid_t ppid = (pid_t)procfs_status_long(st, "PPid", 0);
	size_t n = 0;
	ssize_t parent = -1;
	for (size_t k = 0; k < t->nrows && n < STRAY_CATCH_MAX; k++) {
		if (t->pub[k].pid != ppid)
			continue;
		n++;
		if (parent < 0 && procfs_thread_has_child(ppid, t->pub[k].tid, child))
			parent = (ssize_t)k;
	}
	/* (alone in its process, the parent stays traced: its child's SIGCHLD
	 * is its own to take) */
	const struct row *r = parent >= 0 ? &t->rows[parent] : NULL;
	if (!r || !r->traced || (n < 2 && !r->loosen))
		return false;
	t->parked[t->nparked++] = (struct parked_child){
		.child = child, .parent = t->pub[parent].tid,
		.since_ns = (long long)clock_monotonic_ns() };
	return true;
}

void tg_release_stale_children(struct target *t)
{
	if (t->nparked == 0)
		return;
	long long now = (long long)clock_monotonic_ns();
	for (size_t k = t->nparked; k-- > 0;) {
		ssize_t i = tg_row_find(t, t->parked[k].parent);
		if (i < 0 || !t->rows[i].traced || now - t->parked[k].since_ns >= PARKED_MAX_NS)
			release_parked(t, k);
	}
}
