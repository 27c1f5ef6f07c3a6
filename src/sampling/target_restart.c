/* target_restart: a system call our interrupt ended with a bare EINTR (the
 * thread blocked in the microseconds between our look and the interrupt),
 * or that a signal queued only because we trace the process woke, is made
 * to run again, as the kernel restarts its own; undone when a signal that
 * reaches the thread comes first (see target_internal.h and target.c). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <unistd.h>

#include "clock.h"
#include "error.h"
#include "procfs.h"
#include "syscalls.h"
#include "target_internal.h"


#define X86_64_USER_CS 0x33
#define EINTR_RET ((unsigned long long)-(long long)EINTR)

/* Whether thread TID of PID has a signal pending that it does not block
 * and that would reach it untraced (a SIGCHLD at SIG_DFL, queued only
 * because we trace it, does not): then the EINTR is the signal's, not ours
 * (true when unknown). */
static bool signal_pending_unblocked(pid_t pid, pid_t tid)
{
	char buf[4096];
	if (procfs_read_file(pid, tid, "status", buf, sizeof buf) <= 0)
		return true;
	const char *pnd = procfs_status_field(buf, "SigPnd"), *shd = procfs_status_field(buf, "ShdPnd");
	const char *blk = procfs_status_field(buf, "SigBlk");
	if (!pnd || !shd || !blk)
		return true;
	unsigned long long pending = strtoull(pnd, NULL, 16) | strtoull(shd, NULL, 16);
	return procfs_signals_that_reach(buf, pending & ~strtoull(blk, NULL, 16)) != 0;
}

/* Whether signal SIG, being delivered to thread TID of PID, would reach it
 * untraced (true when unknown). */
bool tg_signal_reaches(pid_t pid, pid_t tid, int sig)
{
	char buf[4096];
	if (sig < 1 || sig > 64 || procfs_read_file(pid, tid, "status", buf, sizeof buf) <= 0)
		return true;
	return procfs_signals_that_reach(buf, 1ull << (sig - 1)) != 0;
}

/* ---- stray signals taken by another thread ------------------------------------------
 * A signal the kernel drops as it comes for a process nobody traces (a
 * SIGCHLD at SIG_DFL, an ignored one) is queued when the process is traced,
 * and the kernel wakes one thread that wants it: the one it was sent to
 * (a child's parent thread) if that one runs or sleeps, else another, as a
 * thread that waits in a system call. That thread W stops for the signal
 * when it takes it (dispose_stop drops the signal and runs its call again).
 * But another thread may take it first: one that forks (fork looks for
 * pending signals and takes them before it restarts itself), one leaving a
 * ptrace stop, sigtimedwait or sigprocmask. W then finds no signal and
 * returns to the program with EINTR, without a stop of its own (measured:
 * the blockers fixture forking every 0.5 ms, at -F 1, 87 EINTR in 3 s, all
 * in sigtimedwait, 0 untraced). So when a thread takes a stray signal, the
 * threads of its process that are runnable now (W is, until it has run)
 * are interrupted: W stops before it returns, with EINTR in its call, which
 * its interrupt-stop runs again (tg_restart_interrupted_call). A thread
 * woken for something else takes one more stop. Up to STRAY_CATCH_MAX
 * threads a process (a process of more threads is not looked at: reading
 * each thread's state would cost more than the stop it saves). */
#define STRAY_CATCH_MAX 256

void tg_catch_stray_wakers(struct target *t, size_t i)
{
	pid_t pid = t->pub[i].pid;
	if (t->cfg.mode != TARGET_SEIZE_PERSISTENT)
		return;
	size_t n = 0;
	for (size_t k = 0; k < t->nrows && n <= STRAY_CATCH_MAX; k++)
		n += t->pub[k].pid == pid;
	if (n > STRAY_CATCH_MAX)
		return;
	for (size_t k = 0; k < t->nrows; k++) {
		struct row *r = &t->rows[k];
		pid_t tid = t->pub[k].tid;
		if (k == i || t->pub[k].pid != pid || r->state != RS_RUNNING || !r->traced ||
		    r->intr_out)
			continue;
		char buf[512];
		struct procfs_stat st;
		if (procfs_read_file(pid, tid, "stat", buf, sizeof buf) <= 0 ||
		    !procfs_parse_stat(buf, &st) || st.state != 'R')
			continue;
		if (tg_ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0)
			continue;
		r->intr_out = true;
		tg_expect_stop(t, tid);
		t->stray_caught++;
	}
}

/* Row I is at an interrupt-stop of ours, about to be let go. If the stop
 * ended a system call with a bare EINTR (it blocked after we read it 'R',
 * and our interrupt woke it), make the thread run the call again, as the
 * kernel does for ERESTARTNOHAND: rax = the call's number, rip back over the
 * 2-byte syscall instruction. The call starts afresh: its timeout is
 * lengthened by the time since it was entered, which is after our read of
 * the thread's state (microseconds). Not done when a real signal is pending
 * (the EINTR is then the program's to see); a signal that comes before the
 * thread runs again undoes it (tg_undo_restart). */
void tg_restart_interrupted_call(struct target *t, size_t i, pid_t tid)
{
	struct user_regs_struct r;
	t->rows[i].restart_ip = 0;
	if (t->regs_tid == tid) {
		r = t->regs;  /* read at this stop already */
	} else {
		if (tg_ptrace(PTRACE_GETREGS, tid, 0, (unsigned long)&r) < 0)
			return;
		/* (kept for target_get_regs: the sample at this stop) */
		t->regs = r;
		t->regs_tid = tid;
	}
	const struct syscall_info *call = syscall_info((long)r.orig_rax);
	if (r.cs != X86_64_USER_CS || r.rax != EINTR_RET || !call || !call->restartable ||
	    r.rip < 2)
		return;
	uint8_t insn[2];
	if (!procfs_read_memory_all(tid, r.rip - 2, insn, sizeof insn) ||
	    insn[0] != 0x0f || insn[1] != 0x05)
		return;
	if (signal_pending_unblocked(t->pub[i].pid, tid))
		return;
	r.rax = r.orig_rax;
	r.rip -= 2;
	t->regs_tid = 0;
	if (tg_ptrace(PTRACE_SETREGS, tid, 0, (unsigned long)&r) < 0)
		return;
	/* (a sample taken at this stop sees the thread at its system call
	 * instruction: the same function, the same frame) */
	t->regs = r;
	t->regs_tid = tid;
	t->rows[i].restart_ip = r.rip;
	t->restarted++;
	if (t->cfg.verbose >= 2)
		warn("target: thread %d: restarted system call %llu that our interrupt ended with EINTR",
		     (int)tid, r.orig_rax);
}

/* Row I reports a signal-delivery-stop of a signal that reaches it (not
 * one that is ignored, or does nothing at SIG_DFL). If a call was restarted
 * for it and the thread has not run it again yet, the signal would
 * interrupt it: give the thread its EINTR back, so the handler runs and the
 * call fails as it would have without us. */
void tg_undo_restart(struct target *t, size_t i, pid_t tid)
{
	struct user_regs_struct r;
	unsigned long long ip = t->rows[i].restart_ip;
	t->rows[i].restart_ip = 0;
	if (!ip)
		return;
	if (tg_ptrace(PTRACE_GETREGS, tid, 0, (unsigned long)&r) < 0 || r.rip != ip ||
	    r.rax != r.orig_rax)
		return;
	r.rax = EINTR_RET;
	r.rip += 2;
	if (tg_ptrace(PTRACE_SETREGS, tid, 0, (unsigned long)&r) == 0)
		t->restarted--;
}


/* ---- threads that fork --------------------------------------------------------------
 * A child's end queues SIGCHLD for the thread that forked it. The kernel
 * drops a SIGCHLD at SIG_DFL (or an ignored one) as it comes when that
 * thread is not traced, whatever the others are (it asks the parent thread
 * alone): measured, a tracer that only passes signals on, 3 s of blockers
 * forking every 0.5 ms: 2,921 SIGCHLD queued with every thread traced, 0
 * with all but the forking one. Queued while the forking thread is stopped
 * by us (a sample, a signal's stop), it wakes a thread that waits, which
 * then returns EINTR when another takes the signal first, faster than the
 * catch above can stop it (1 to 12 EINTR in 3 s at 999 Hz). Let go between
 * its samples but still stopped for them, the thread fared worse (9 to 43):
 * a SIGCHLD queued during its sample is then taken by it silently, once let
 * go. So a thread whose child's SIGCHLD came for us is loose (and one that
 * has children at attach, from the start: its first child's SIGCHLD, 1 in
 * 3 s of 999 Hz, came before any stop showed it forks): untraced, and
 * never stopped while it has children, nor for LOOSE_QUIET_NS after it
 * was last seen with one (the sampler counts its samples without a stack:
 * target_thread_stoppable); then it is seized for a sample and traced
 * again. Only in a process of more than one
 * thread (alone, it takes the signal itself, at a stop of ours), in
 * persistent mode, and not with --children (a fork is reported by a traced
 * parent only). In per-sample mode every thread of a process of several is
 * loose so: it is stopped only without children (the SIGCHLD queued while
 * it is seized would wake a thread untraced, and nothing would catch it). What a loose thread does untraced goes unreported: its end
 * and the threads it makes are found every LOOSE_CHECK_NS. */
#define LOOSE_CHECK_NS 100000000LL
/* A loose thread is stopped again only once it was seen without children
 * for this long: one that forks over and over has none for a moment
 * between a child's reaping and the next fork, and each time it was
 * traced again its next child's end came for us (12 times in 3 s, 1 EINTR
 * in 7 runs); one that runs a program now and then is sampled again soon
 * after. */
#define LOOSE_QUIET_NS 100000000LL
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
	t->rows[k].loosen = true;
	t->rows[k].children_seen_ns = (long long)clock_monotonic_ns();
	t->any_loose = true;
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
	if (r->loosen) {
		r->loosen = false;
		r->loose = true;
		t->loosened++;
	}
	if (r->loose && !procfs_thread_has_child(t->pub[i].pid, t->pub[i].tid, 0))
		r->loose = false;   /* (traced again: its next child's end shows it) */
	return r->loose;
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
		left = true;
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
