/* target_events: waiting for ptrace reports and acting on each (see
 * target_internal.h and, for the row states and the kernel facts relied on,
 * target.c). Every report goes through tg_handle_report, whatever was
 * waited for, so a tracee never sits in a stop longer than one drain. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <sys/wait.h>

#include "array.h"
#include "clock.h"
#include "error.h"
#include "procfs.h"
#include "target_internal.h"

/* ---- waiting for reports ----------------------------------------------------------- */

/* Where reports are looked for. waitpid(-1) looks at every tracee (about
 * 20 ns each: 200 us for 10,000 threads), waitpid(tid) at one (kernels since
 * 5.14). Each stop or death of a tracee raises SIGCHLD, which names the
 * thread (si_pid): that thread's report is looked for alone. But SIGCHLD is
 * a standard signal: one raised while another is pending is merged into it,
 * and its thread is named nowhere. So after any SIGCHLD was taken, a full
 * waitpid(-1) pass follows within FULL_PASS_NS_PER_TRACEE times the number
 * of tracees (next tick for a few dozen threads, 20 ms for 1000, 200 ms
 * for 10,000: about 1% of a core), whether or not another SIGCHLD comes
 * (target_poll_pending, after every tick). A report merged that way waits
 * at most that long; the rest are handled as soon as their SIGCHLD is
 * taken, and a round takes the SIGCHLD of each stop as it reaps it, so a
 * merge needs two stops within microseconds. */
#define FULL_PASS_NS_PER_TRACEE 20000LL
/* With at most this many tracees a full pass costs a few microseconds:
 * one is made whenever a report may hide. */
#define FULL_PASS_ALWAYS 64

/* A SIGCHLD was taken: look for SENDER's report; others may hide behind it. */
void tg_note_sigchld(struct target *t, pid_t sender)
{
	t->maybe_hidden = true;
	if (sender <= 0 || t->nhints >= HINTS)
		t->hints_lost = true;
	else
		t->hints[t->nhints++] = sender;
}

/* Take every pending SIGCHLD (SIGCHLD is blocked: target_new makes sure). */
static void take_sigchld(struct target *t)
{
	static const struct timespec zero = { 0, 0 };
	siginfo_t si;
	for (int k = 0; k < HINTS; k++) {
		int sig = sigtimedwait(&t->sigchld, &si, &zero);
		if (sig < 0 && errno == EINTR)
			continue;
		if (sig < 0)
			return;
		tg_note_sigchld(t, si.si_pid);
	}
}

static bool full_pass_due(const struct target *t)
{
	return t->cfg.mode != TARGET_SEIZE_PERSISTENT || t->hints_lost || t->in_full_pass ||
	       (t->maybe_hidden && (t->nrows <= FULL_PASS_ALWAYS || (long long)clock_monotonic_ns() >= t->next_full_ns));
}

/* Thread TID owes us a stop (a new thread's first, or an interrupt a round
 * gave up waiting for): next_report asks for it alone, so its report does
 * not wait for a full pass when its SIGCHLD was merged (a new thread stops
 * right after its parent's clone event). */
void tg_expect_stop(struct target *t, pid_t tid)
{
	if (array_grow(&t->expect, &t->expect_cap, t->nexpect + 1, sizeof *t->expect, 16) == 0)
		t->expect[t->nexpect++] = tid;
	else
		t->hints_lost = true;  /* a full pass finds it */
}

/* A report of a thread that owes us a stop, or 0. */
static pid_t next_expected_report(struct target *t, int *status)
{
	for (size_t k = 0; k < t->nexpect;) {
		pid_t tid = t->expect[k];
		ssize_t i = tg_row_find(t, tid);
		if (i < 0 || !(t->rows[i].intr_out || t->rows[i].sample_out)) {
			t->expect[k] = t->expect[--t->nexpect];
			continue;
		}
		pid_t r = tg_wait_tracee(t, tid, status);
		if (r > 0)
			return r;
		k++;
	}
	return 0;
}

/* One report already queued: of a thread a SIGCHLD named, of one that owes
 * a stop, or from a full pass when one is due and FULL_OK (not while a
 * round's threads may be stopped: a pass over thousands of tracees would
 * lengthen their pause). The tid, 0 if none, -1 when nothing is left to
 * wait for. */
static pid_t next_report(struct target *t, int *status, bool full_ok)
{
	take_sigchld(t);
	while (t->nhints > 0) {
		pid_t tid = tg_wait_tracee(t, t->hints[--t->nhints], status);
		if (tid > 0)
			return tid;
	}
	if (t->maybe_hidden && t->nexpect > 0) {
		pid_t tid = next_expected_report(t, status);
		if (tid > 0)
			return tid;
	}
	if (full_ok && tg_reap_due(t)) {
		pid_t tid = tg_reap_step(t, status);
		if (tid != 0)
			return tid;
	}
	if (!full_ok || !full_pass_due(t))
		return 0;
	t->in_full_pass = true;
	pid_t tid;
	do
		tid = tg_wait_tracee(t, -1, status);
	while (tid < 0 && errno == EINTR);
	if (tid > 0)
		return tid;
	/* the pass is over: every report queued before it was taken */
	t->in_full_pass = t->hints_lost = t->maybe_hidden = false;
	t->next_full_ns = (long long)clock_monotonic_ns() + (long long)t->nrows * FULL_PASS_NS_PER_TRACEE;
	return tid < 0 ? -1 : 0;
}

/* One waitpid report, waiting until DEADLINE (monotonic ns; 0 = do not wait).
 * For the first SPIN_NS it polls instead of sleeping: an interrupted running
 * thread stops within microseconds, and sleeping would add the wake-up
 * latency of an idle CPU (tens of microseconds) to the target's pause; it
 * polls only while one of the first NSPIN of TIDS owes its stop. The N
 * threads in TIDS that owe a stop are always asked alone (waitpid(tid));
 * others are found as next_report finds them. Returns the tid, 0 on
 * timeout, -1 when there is nothing left to wait for. */
pid_t tg_wait_report_spin(struct target *t, int *status, long long deadline,
			      long long spin_ns, const pid_t *tids, size_t n, size_t nspin)
{
	long long spin_until = spin_ns > 0 ? (long long)clock_monotonic_ns() + spin_ns : 0;
	for (;;) {
		bool spin = false;
		for (size_t k = 0; k < n; k++) {
			ssize_t i = tg_row_find(t, tids[k]);
			if (i < 0 || t->rows[i].state != RS_COLLECT)
				continue;
			pid_t tid = tg_wait_tracee(t, tids[k], status);
			if (tid > 0) {
				/* take its SIGCHLD now: another thread's stop
				 * raised while it is pending would be merged
				 * into it and wait for a full pass */
				take_sigchld(t);
				return tid;
			}
			spin |= k < nspin;
		}
		long long now = (long long)clock_monotonic_ns();
		if (spin && now < spin_until)
			continue;
		pid_t tid = next_report(t, status, n == 0);
		if (tid != 0)
			return tid;
		now = (long long)clock_monotonic_ns();
		long long left = deadline - now;
		if (deadline == 0 || left <= 0)
			return 0;
		if (spin && now < spin_until)
			continue;
		/* Sleep until a SIGCHLD comes (it stays pending until taken). */
		struct timespec ts = { .tv_sec = (time_t)(left / NS_PER_SEC),
				       .tv_nsec = (long)(left % NS_PER_SEC) };
		siginfo_t si;
		if (sigtimedwait(&t->sigchld, &si, &ts) == SIGCHLD)
			tg_note_sigchld(t, si.si_pid);
		else if (errno != EAGAIN && errno != EINTR)
			return 0;
	}
}

static pid_t wait_report(struct target *t, int *status, long long deadline)
{
	return tg_wait_report_spin(t, status, deadline, 0, NULL, 0, 0);
}

/* ---- privileges an exec under a tracer loses ----------------------------------------- */

/* The effective id of status field NAME ("Uid", "Gid": real, effective,
 * saved, filesystem), or -1. */
static long long effective_id(const char *status, const char *name)
{
	const char *v = procfs_status_field(status, name);
	if (!v)
		return -1;
	char *end;
	(void)strtoll(v, &end, 10);
	return end == v ? -1 : strtoll(end, NULL, 10);
}

/* Process PID just executed a program (its exec stop). A set-user-ID or
 * set-group-ID program, or one with file capabilities, started by a traced
 * process runs without those privileges unless the tracer may trace any
 * process (CAP_SYS_PTRACE): the kernel will not hand privileges to a
 * program a tracer could take over. csampler's non-root users get the
 * program as it would run for them; say so, as it may fail then. */
static void warn_lost_privileges(pid_t pid)
{
	char path[64], status[4096];
	struct stat st;
	snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
	if (stat(path, &st) < 0 || procfs_read_file(pid, 0, "status", status, sizeof status) <= 0)
		return;
	long long euid = effective_id(status, "Uid");
	long long egid = effective_id(status, "Gid");
	const char *capprm = procfs_status_field(status, "CapPrm");
	bool file_caps = getxattr(path, "security.capability", NULL, 0) > 0;
	const char *what = NULL;
	if ((st.st_mode & S_ISUID) && euid >= 0 && (uid_t)euid != st.st_uid)
		what = "set-user-ID";
	else if ((st.st_mode & S_ISGID) && egid >= 0 && (gid_t)egid != st.st_gid)
		what = "set-group-ID";
	else if (file_caps && capprm && strtoull(capprm, NULL, 16) == 0)
		what = "file capabilities";
	if (!what)
		return;
	char comm[64];
	tg_read_comm(pid, comm, sizeof comm);
	warn("process %d (%s) runs a program with %s, which the kernel does not grant under a "
	     "tracer without CAP_SYS_PTRACE: it runs with your privileges, and may fail; run "
	     "csampler as root to keep them", (int)pid, comm, what);
}

/* ---- resuming a stopped thread according to its row ---------------------------------- */

enum stop_kind { STOP_TRAP, STOP_GROUP, STOP_SIGNAL, STOP_EVENT };

/* Detach a stopped tracee; the row (if any) is dropped silently. */
void tg_detach_now(struct target *t, ssize_t i, pid_t tid, int sig)
{
	if (tg_ptrace(PTRACE_DETACH, tid, 0, (unsigned long)sig) < 0 && errno != ESRCH && t->cfg.verbose)
		warn_errno("target: cannot detach thread %d", (int)tid);
	if (i >= 0) {
		tg_release_children(t, tid);   /* (held until it was let go) */
		t->rows[i].traced = false;
		t->rows[i].clone_seen = true;
		if (t->cfg.mode == TARGET_SEIZE_PER_SAMPLE || t->rows[i].loose)
			tg_row_set_state(t, (size_t)i, RS_RUNNING);
		else
			tg_row_remove(t, (size_t)i, false);
	}
}

/* Keep row I in its group-stop (stopped, but still reporting to us). */
static void keep_group_stopped(struct target *t, size_t i)
{
	pid_t tid = t->pub[i].tid;
	tg_row_set_state(t, i, RS_GROUP_STOP);
	if (tg_ptrace(PTRACE_LISTEN, tid, 0, 0) == 0 || errno == ESRCH)
		return;
	tg_row_set_state(t, i, RS_RUNNING);
	tg_ptrace(PTRACE_CONT, tid, 0, 0);
}


/* The interrupt-stop of row I came after its sampling round gave up on it:
 * hand it to the late-sample hook while it is stopped, resume it, then let
 * the hook finish its work with the thread running. */
static void sample_late(struct target *t, size_t i, pid_t tid)
{
	tg_row_set_state(t, i, RS_HELD);
	/* (the call it blocked in made to run again at once: see below) */
	tg_restart_interrupted_call(t, i, tid);
	struct user_regs_struct regs;
	bool read = target_get_regs(t, tid, &regs) == 0;
	t->late_fn(t->late_ctx, tid, read ? &regs : NULL);
	ssize_t k = tg_row_find(t, tid);
	if (k >= 0 && t->rows[k].state == RS_HELD)
		tg_resume_held(t, (size_t)k, tid);
	if (t->late_done)
		t->late_done(t->late_ctx);
}

/* A signal-delivery-stop or a group-stop of TID took the place of the
 * interrupt-stop a sampling round gave up on: no sample is due. The hook
 * is told, with no registers, or it would leave the thread out of its
 * choice until its wait for that stop ran out. */
static void late_void(struct target *t, pid_t tid)
{
	if (!t->late_fn)
		return;
	t->late_fn(t->late_ctx, tid, NULL);
	if (t->late_done)
		t->late_done(t->late_ctx);
}

/* Row I, collected by a round, reported a signal-delivery-stop instead of
 * its interrupt-stop. It is not held there: its signal (INJECT, 0 for one
 * dropped) is delivered now, and the thread interrupted again, to stop for
 * its sample as its handler starts (or wherever it next looks at its
 * signals). Held, the signal would be ours alone until the thread was
 * resumed, and lost if csampler were killed meanwhile (tg_wait_tracee). */
static void deliver_and_collect(struct target *t, size_t i, pid_t tid, int inject)
{
	if (tg_ptrace(PTRACE_INTERRUPT, tid, 0, 0) == 0) {
		t->rows[i].intr_out = true;
		tg_expect_stop(t, tid);
	} else {
		tg_row_set_state(t, i, RS_RUNNING);
	}
	tg_cont(t, tid, inject);
}

/* A known thread I reported a stop of KIND (SIG: the signal of a
 * signal-delivery-stop or the stop signal of a group-stop). Decide who owns
 * it now and resume, hold, listen or detach. */
static void dispose_stop(struct target *t, size_t i, enum stop_kind kind, int sig)
{
	struct row *r = &t->rows[i];
	pid_t tid = t->pub[i].tid;
	int inject = kind == STOP_SIGNAL ? sig : 0;
	bool late = r->sample_out && kind == STOP_TRAP && t->late_fn;

	r->intr_out = false;
	tg_fork_watch(t, i);
	if (r->sample_out && !late)
		late_void(t, tid);
	r->sample_out = false;
	if (kind == STOP_SIGNAL && !tg_signal_reaches(t->pub[i].pid, tid, sig)) {
		/* A signal the kernel drops as it comes for a process that is
		 * not traced (SIGCHLD at SIG_DFL, an ignored one): queued only
		 * because we trace it, it woke a thread that waited. It is not
		 * delivered, and a call it ended with a bare EINTR runs again,
		 * as if it had never come (the calls the kernel restarts, it
		 * restarts). */
		inject = 0;
		unsigned long long pending_restart = r->restart_ip;
		tg_restart_interrupted_call(t, i, tid);
		if (!r->restart_ip)
			r->restart_ip = pending_restart;   /* (tg_undo_restart checks it still is) */
		/* (the thread it woke may be another: stop it before it
		 * returns EINTR; not for the SIGCHLD of an end reaped while
		 * every thread was stopped, which woke none) */
		if (!tg_reap_took_signal(t, t->pub[i].pid, sig))
			tg_catch_stray_wakers(t, i);
		if (sig == SIGCHLD)
			tg_loosen_forker(t, i, tid);
	} else if (kind == STOP_SIGNAL) {
		tg_undo_restart(t, i, tid);
	} else {
		r->restart_ip = 0;
	}
	if (r->state == RS_COLLECT) {
		if (kind == STOP_GROUP) {
			/* Stopped by the target's own group-stop: not ours to
			 * sample; it stays stopped as without us. */
			if (!tg_row_lets_go(t, i))
				keep_group_stopped(t, i);
			else
				tg_detach_now(t, (ssize_t)i, tid, 0);
			return;
		}
		if (kind == STOP_SIGNAL) {
			deliver_and_collect(t, i, tid, inject);
			return;
		}
		tg_row_set_state(t, i, RS_HELD);
		/* A call our interrupt ended with EINTR is made to run again now,
		 * before the sample is taken, not when the thread is resumed:
		 * if csampler is killed (SIGKILL) while it unwinds, the kernel
		 * lets the thread go as it is, and it then runs the call again
		 * instead of returning EINTR. What is left of that window is
		 * the microseconds from the stop to the registers set. */
		if (kind == STOP_TRAP)
			tg_restart_interrupted_call(t, i, tid);
		return;
	}
	if (late) {
		sample_late(t, i, tid);
		return;
	}
	if (kind == STOP_TRAP) {
		tg_restart_interrupted_call(t, i, tid);
		t->regs_tid = 0;  /* (let go below: its registers read are stale) */
	}
	if (tg_row_lets_go(t, i)) {
		/* A per-sample tracee reporting outside a sample (its collection
		 * timed out), or a loose one: let it go. */
		tg_detach_now(t, (ssize_t)i, tid, inject);
		return;
	}
	if (kind == STOP_GROUP) {
		keep_group_stopped(t, i);
		return;
	}
	tg_row_set_state(t, i, RS_RUNNING);
	tg_cont(t, tid, inject);
}

/* The thread group of TID from /proc, or 0. */
pid_t tg_read_tgid(pid_t tid)
{
	char buf[2048];
	if (procfs_read_file(tid, 0, "status", buf, sizeof buf) <= 0)
		return 0;
	return (pid_t)procfs_status_long(buf, "Tgid", 0);
}

/* Add a newly traced thread TID of PID (a new process when PID == TID and it
 * is not known yet). Returns the row index or -1. */
static ssize_t add_new_tracee(struct target *t, pid_t pid, pid_t tid, bool clone_seen)
{
	bool new_process = !tg_process_known(t, pid);
	ssize_t i = tg_row_add(t, pid, tid, true);
	if (i < 0) {
		warn("out of memory: cannot follow thread %d", (int)tid);
		return -1;
	}
	t->rows[i].intr_out = true;
	t->rows[i].clone_seen = clone_seen;
	t->rows[i].options_owed = t->cfg.mode == TARGET_SEIZE_PERSISTENT && !t->cfg.children;
	tg_expect_stop(t, tid);
	if (new_process)
		tg_emit(t, TARGET_EV_PROCESS_NEW, pid, pid);
	tg_emit(t, TARGET_EV_THREAD_NEW, pid, tid);
	return i;
}

/* A clone/fork/vfork event of the thread in row I created NEW. */
static void handle_new_child(struct target *t, size_t i, int event, pid_t child)
{
	if (event != PTRACE_EVENT_CLONE && !t->cfg.children)
		tg_loosen_at_fork(t, i);
	if (child <= 0 || tg_row_find(t, child) >= 0) {
		ssize_t j = child > 0 ? tg_row_find(t, child) : -1;
		if (j >= 0)
			t->rows[j].clone_seen = true;
		return;
	}
	if (tg_ghost_take(t, child))
		return; /* already came and went (or was detached) */
	pid_t parent_pid = t->pub[i].pid;
	bool thread = false;
	if (event == PTRACE_EVENT_CLONE) {
		char path[96];
		snprintf(path, sizeof path, "/proc/%d/task/%d", (int)parent_pid, (int)child);
		thread = access(path, F_OK) == 0;
	}
	if (!thread && !t->cfg.children)
		return; /* detached at its first stop (unknown tid, unknown process) */
	if (!thread)
		t->rows[i].forks = true;
	add_new_tracee(t, thread ? parent_pid : child, child, true);
}

/* An execve completed in process PID (reported by its new leader, tid ==
 * PID); FORMER is the tid that called it. All other threads are gone. */
static void handle_exec(struct target *t, pid_t pid, pid_t former)
{
	ssize_t leader = tg_row_find(t, pid);
	if (leader < 0) {
		/* The old leader was never ours (it had exited when we
		 * attached): the exec'ing thread takes its tid now. */
		leader = tg_row_add(t, pid, pid, true);
		if (leader < 0) {
			tg_detach_now(t, -1, pid, 0);
			return;
		}
		t->rows[leader].clone_seen = true;
		tg_emit(t, TARGET_EV_THREAD_NEW, pid, pid);
	}
	for (size_t k = t->nrows; k-- > 0;)
		if (t->pub[k].pid == pid && t->pub[k].tid != pid)
			tg_row_remove(t, k, true);
	/* clone_seen stays as it was: a --children process can exec (and
	 * exit) before its parent's fork event is read, and that event must
	 * then find it among the ghosts, not add it again. */
	leader = tg_row_find(t, pid);
	t->rows[leader].intr_out = false;
	t->rows[leader].traced = true;
	if (t->cfg.verbose >= 2)
		warn("target: process %d executed a new program (thread %d)", (int)pid, (int)former);
	if (tg_process_is_32bit(pid)) {
		char comm[64];
		tg_read_comm(pid, comm, sizeof comm);
		warn("process %d (%s) now runs a 32-bit program: its samples show the sampled "
		     "address only (csampler unwinds 64-bit programs)", (int)pid, comm);
	}
	warn_lost_privileges(pid);
	tg_emit(t, TARGET_EV_EXEC, pid, pid);
	tg_row_set_state(t, (size_t)leader, RS_RUNNING);
	if (t->cfg.mode == TARGET_SEIZE_PER_SAMPLE) {
		tg_detach_now(t, leader, pid, 0);
		return;
	}
	if (tg_ptrace(PTRACE_CONT, pid, 0, 0) < 0 && errno != ESRCH && t->cfg.verbose)
		warn_errno("target: cannot resume process %d after exec", (int)pid);
}

/* A thread reported death. */
static void handle_death(struct target *t, pid_t tid, int status)
{
	if (tid == t->main_pid && t->exit_status < 0)
		t->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	ssize_t i = tg_row_find(t, tid);
	if (i < 0)
		return;
	pid_t pid = t->pub[i].pid;
	tg_row_remove(t, (size_t)i, true);
	/* A leader reports last; untraced (per-sample) rows never report. */
	if (tid == pid)
		tg_remove_process(t, pid, true);
}

/* A stop of a tid we have no row for: a new thread whose clone event has not
 * been reported yet, a --children process, or something to let go. */
static void handle_unknown_stop(struct target *t, pid_t tid, int status)
{
	int sig = WSTOPSIG(status), event = status >> 16;
	int inject = event == 0 ? sig : 0;
	pid_t tgid = tg_read_tgid(tid);
	bool keep = t->cfg.mode == TARGET_SEIZE_PERSISTENT && tgid > 0 &&
		    (tg_process_known(t, tgid) || t->cfg.children);
	if (!keep) {
		tg_ghost_add(t, tid);
		/* (a child whose parent thread is to be let go first waits) */
		if (event != PTRACE_EVENT_STOP || !tg_park_child(t, tid))
			tg_detach_now(t, -1, tid, inject);
		return;
	}
	ssize_t i = add_new_tracee(t, tgid, tid, false);
	if (i < 0) {
		tg_detach_now(t, -1, tid, inject);
		return;
	}
	if (event == PTRACE_EVENT_STOP)
		dispose_stop(t, (size_t)i, tg_is_stop_signal(sig) ? STOP_GROUP : STOP_TRAP, sig);
	else if (event == 0)
		dispose_stop(t, (size_t)i, STOP_SIGNAL, sig);
	else
		dispose_stop(t, (size_t)i, STOP_EVENT, 0);
}

/* Every waitpid report goes through here. */
void tg_handle_report(struct target *t, pid_t tid, int status)
{
	/* a new stop (or its end): registers read at an earlier one are stale */
	if (tid == t->regs_tid)
		t->regs_tid = 0;
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		handle_death(t, tid, status);
		return;
	}
	if (!WIFSTOPPED(status))
		return;
	ssize_t i = tg_row_find(t, tid);
	int sig = WSTOPSIG(status), event = status >> 16;
	if (event == PTRACE_EVENT_EXEC) {
		unsigned long former = 0;
		tg_ptrace(PTRACE_GETEVENTMSG, tid, 0, (unsigned long)&former);
		if (i < 0 && !tg_process_known(t, tid)) {
			handle_unknown_stop(t, tid, status);
			return;
		}
		handle_exec(t, tid, (pid_t)former);
		return;
	}
	if (i < 0) {
		handle_unknown_stop(t, tid, status);
		return;
	}
	switch (event) {
	case PTRACE_EVENT_STOP:
		dispose_stop(t, (size_t)i, tg_is_stop_signal(sig) ? STOP_GROUP : STOP_TRAP, sig);
		break;
	case PTRACE_EVENT_CLONE:
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK: {
		unsigned long child = 0;
		if (tg_ptrace(PTRACE_GETEVENTMSG, tid, 0, (unsigned long)&child) == 0)
			handle_new_child(t, (size_t)i, event, (pid_t)child);
		i = tg_row_find(t, tid); /* the table may have moved */
		if (i >= 0)
			dispose_stop(t, (size_t)i, STOP_EVENT, 0);
		tg_fork_event_done(t, tid);
		break;
	}
	case PTRACE_EVENT_EXIT:
		tg_emit(t, TARGET_EV_THREAD_EXITING, t->pub[i].pid, tid);
		i = tg_row_find(t, tid);
		if (i >= 0)
			dispose_stop(t, (size_t)i, STOP_EVENT, 0);
		break;
	case 0:
		dispose_stop(t, (size_t)i, STOP_SIGNAL, sig);
		break;
	default:
		dispose_stop(t, (size_t)i, STOP_EVENT, 0);
		break;
	}
}

/* Handle every report already queued (at most MAX). Returns how many. */
static int drain(struct target *t, int max)
{
	int n = 0, status;
	pid_t tid;
	while (n < max && (tid = wait_report(t, &status, 0)) > 0) {
		tg_handle_report(t, tid, status);
		n++;
	}
	return n;
}

/* Whether a report may be waiting: SIGCHLD is pending, or one may hide
 * behind a SIGCHLD taken earlier and its full pass is due, or --children
 * ends were left for a reap step (not a full pass). Every taker of
 * SIGCHLD (the caller's signalfd, then target_poll; sigtimedwait here) looks
 * for the reports it stands for at once. */
bool tg_sigchld_pending(void)
{
	sigset_t pending;
	return sigpending(&pending) < 0 || sigismember(&pending, SIGCHLD) == 1;
}

bool tg_report_may_wait(const struct target *t)
{
	return tg_sigchld_pending() || full_pass_due(t) || tg_reap_due(t);
}

/* Handle every queued report; if there may be more than one drain takes,
 * leave SIGCHLD pending so that the caller comes back. */
int tg_drain_all(struct target *t)
{
	int n = drain(t, POLL_MAX_REPORTS);
	if (n >= POLL_MAX_REPORTS)
		raise(SIGCHLD);
	return n;
}
/* ---- per-sample mode: threads from /proc ------------------------------------------------ */

/* Is the main process gone (reaped, or a zombie with no live thread)? Uses
 * the kept-open /proc/PID/stat. */
static bool main_process_gone(struct target *t, size_t listed)
{
	if (t->stat_fd < 0)
		return false;
	char buf[512];
	struct procfs_stat st;
	if (procfs_pread_text(t->stat_fd, buf, sizeof buf) <= 0 || !procfs_parse_stat(buf, &st))
		return true;
	return (st.state == 'Z' || st.state == 'X') && listed <= 1;
}

/* Reread /proc/MAIN/task: add new threads, drop vanished ones. */
void tg_rescan_tasks(struct target *t)
{
	if (t->detached || t->cfg.mode != TARGET_SEIZE_PER_SAMPLE || !tg_process_known(t, t->main_pid))
		return;
	struct procfs_dir d;
	bool listable = procfs_dir_open(&d, t->main_pid);
	size_t listed = 0;
	unsigned gen = ++t->scan_gen;
	if (listable) {
		for (pid_t tid; (tid = procfs_dir_next(&d)) > 0;) {
			listed++;
			ssize_t i = tg_row_find(t, (pid_t)tid);
			if (i < 0) {
				i = tg_row_add(t, t->main_pid, (pid_t)tid, false);
				if (i < 0)
					break;
				t->rows[i].clone_seen = true;
				tg_emit(t, TARGET_EV_THREAD_NEW, t->main_pid, (pid_t)tid);
			}
			t->rows[i].scan_gen = gen;
		}
	}
	procfs_dir_close(&d);
	/* A launched program stays listed until we reap it (handle_death). */
	if (!t->launched && (!listable || main_process_gone(t, listed))) {
		tg_remove_process(t, t->main_pid, true);
		return;
	}
	if (!listable)
		return;
	for (size_t i = t->nrows; i-- > 0;)
		if (t->rows[i].scan_gen != gen && !t->rows[i].traced)
			tg_row_remove(t, i, true);
}
