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
