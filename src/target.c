/* target: see target.h.
 *
 * One table of rows, one per traced (or, in per-sample mode, known) thread, in
 * the order they were first seen; target_threads hands out a parallel array of
 * (pid, tid) so the order is stable and nothing is rebuilt per tick.
 *
 * A row's state says who owns the thread right now:
 *   RUNNING     resumed by us (or never stopped); a trap may still be due
 *               (the initial stop of a new thread, or a leftover interrupt)
 *   GROUP_STOP  in a group-stop, kept there with PTRACE_LISTEN
 *   COLLECT     target_stop_threads interrupted it and waits for its stop
 *   HELD        in a ptrace-stop we own; resumed with row->sig (a signal
 *               that arrived while we collected it is re-injected then)
 * Every report from waitpid goes through handle_report(), whatever we were
 * waiting for, so a tracee never sits in a stop longer than one drain.
 *
 * Kernel facts this relies on (ptrace(2), kernel/signal.c):
 *   - any ptrace-stop consumes a pending PTRACE_INTERRUPT, so a thread we
 *     interrupt may report a signal-delivery-stop or an event stop instead;
 *     each of those is a stop we may hold and sample;
 *   - a stop that was already queued when we interrupted leaves the interrupt
 *     pending: it surfaces later as an extra PTRACE_EVENT_STOP/SIGTRAP, which
 *     we simply continue;
 *   - the initial stop of an auto-attached thread is PTRACE_EVENT_STOP with
 *     SIGTRAP and may be reported before the parent's clone event;
 *   - when the tracer thread exits, the kernel detaches every tracee without
 *     stopping or waking it (tracer.h): that is target_detach, so no thread
 *     blocked in a system call is ever interrupted to be let go;
 *   - a thread that blocked in a system call after its state was read 'R'
 *     is woken by our interrupt; the calls that return a bare EINTR then
 *     (epoll_wait, sigtimedwait, a socket read with a timeout...) are
 *     restarted at the interrupt-stop, as the kernel restarts its own
 *     (see restart_interrupted_call). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "error.h"
#include "procfs.h"
#include "target.h"
#include "tidmap.h"
#include "tracer.h"

#define NS_PER_SEC 1000000000LL
/* How long target_stop_threads waits for the slowest thread to stop. */
#define COLLECT_TIMEOUT_NS (20 * 1000000LL)
/* How long a sampling round polls for stops before it sleeps. */
#define SPIN_NS (50 * 1000LL)
/* How long target_start waits for the launched program's execve. */
#define START_TIMEOUT_NS (30 * NS_PER_SEC)
/* Reports handled by one target_poll before it yields back to the caller. */
#define POLL_MAX_REPORTS 4096
/* Passes over /proc/PID/task while attaching (entries per pass: PROCFS_SCAN_MAX). */
#define ATTACH_MAX_PASSES 1000
/* Threads named by SIGCHLDs, looked for before a full pass (next_report). */
#define HINTS 16
/* Remembered tids whose clone event must be ignored when it arrives late. */
#define GHOSTS 64
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
	bool held_trap;       /* HELD at an interrupt-stop (ours) */
	int sig;              /* HELD: signal to re-inject on resume */
	unsigned long long restart_ip; /* a call restarted at that ip, not re-entered yet */
	unsigned scan_gen;    /* per-sample mode: last /proc scan that listed it */
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
	unsigned scan_gen;
	int stat_fd;                  /* per-sample attach: /proc/PID/stat of the main process */

	pid_t ghosts[GHOSTS];
	unsigned ghost_next;
	sigset_t sigchld;
	pid_t hints[HINTS];           /* threads a SIGCHLD taken named (next_report) */
	pid_t *expect;                /* threads that owe us a stop (expect_stop) */
	size_t nexpect, expect_cap;
	size_t nhints;
	bool hints_lost;              /* more SIGCHLD than hints, or one naming nobody */
	bool maybe_hidden;            /* a SIGCHLD was taken since the last full pass */
	bool in_full_pass;            /* a waitpid(-1) pass is under way */
	long long next_full_ns;       /* the next full pass is due then */
	unsigned long long restarted;  /* calls restart_interrupted_call restarted */
	struct user_regs_struct regs;  /* of thread regs_tid (0: none), read at its stop */
	pid_t regs_tid;

	/* target_set_late_sample */
	void (*late_fn)(void *ctx, pid_t tid);
	void (*late_done)(void *ctx);
	void *late_ctx;
};

/* ---- small helpers ------------------------------------------------------------- */

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * NS_PER_SEC + ts.tv_nsec;
}

static long pt(int req, pid_t tid, unsigned long addr, unsigned long data)
{
	return ptrace((enum __ptrace_request)req, tid, (void *)addr, (void *)data);
}

static char state_letter(const char *status)
{
	const char *s = procfs_status_field(status, "State");
	return s ? *s : '?';
}

static bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* The comm of PID (for messages), or "?". Non-printable bytes become '?'. */
static void read_comm(pid_t pid, char *out, size_t size)
{
	procfs_read_comm(pid, out, size);
	if (!out[0]) {
		snprintf(out, size, "?");
		return;
	}
	for (char *c = out; *c; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
			*c = '?';
}

/* Whether PATH is a 32-bit ELF file (i386 and x32 programs: their stacks
 * are not unwound). False when it cannot be told (not ELF, unreadable). */
static bool elf_is_32bit(const char *path)
{
	unsigned char ident[5];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, ident, sizeof ident);
	close(fd);
	return n == (ssize_t)sizeof ident && memcmp(ident, "\177ELF", 4) == 0 && ident[4] == 1;
}

/* Process PID runs a 32-bit program (its /proc/PID/exe). */
static bool process_is_32bit(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
	return elf_is_32bit(path);
}

/* ---- the thread table ------------------------------------------------------------ */

static void emit(struct target *t, enum target_event_kind kind, pid_t pid, pid_t tid)
{
	if (t->cfg.verbose >= 3)
		warn("target: event %d pid %d tid %d", (int)kind, (int)pid, (int)tid);
	if (t->cfg.on_event) {
		struct target_event ev = { .kind = kind, .pid = pid, .tid = tid };
		t->cfg.on_event(t->cfg.ctx, &ev);
	}
}

/* ---- the rows, and their index by tid ---------------------------------------------- */

static ssize_t row_find(const struct target *t, pid_t tid)
{
	uint32_t row;
	return tidmap_get(&t->index, tid, &row) ? (ssize_t)row : -1;
}

static bool process_known(const struct target *t, pid_t pid)
{
	for (size_t i = 0; i < t->nrows; i++)
		if (t->pub[i].pid == pid)
			return true;
	return false;
}

static void row_set_state(struct target *t, size_t i, enum row_state st)
{
	if (t->rows[i].state == RS_COLLECT)
		t->ncollect--;
	if (st == RS_COLLECT)
		t->ncollect++;
	t->rows[i].state = st;
}

/* Add a row; returns its index or -1 when memory runs out. */
static ssize_t row_add(struct target *t, pid_t pid, pid_t tid, bool traced)
{
	if (t->nrows == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct row *rows = realloc(t->rows, cap * sizeof *rows);
		if (!rows)
			return -1;
		t->rows = rows;
		struct target_thread *pub = realloc(t->pub, cap * sizeof *pub);
		if (!pub)
			return -1;
		t->pub = pub;
		t->cap = cap;
		if (tidmap_reserve(&t->index, cap) < 0)
			return -1;
	}
	size_t i = t->nrows;
	if (tidmap_put(&t->index, tid, (uint32_t)i) < 0)
		return -1;
	t->nrows++;
	t->rows[i] = (struct row){ .state = RS_RUNNING, .traced = traced, .scan_gen = t->scan_gen };
	t->pub[i] = (struct target_thread){ .pid = pid, .tid = tid };
	return (ssize_t)i;
}

static void ghost_add(struct target *t, pid_t tid)
{
	t->ghosts[t->ghost_next++ % GHOSTS] = tid;
}

static bool ghost_take(struct target *t, pid_t tid)
{
	for (size_t i = 0; i < GHOSTS; i++) {
		if (t->ghosts[i] == tid) {
			t->ghosts[i] = 0;
			return true;
		}
	}
	return false;
}

/* Drop row I. ANNOUNCE: tell the other rooms (thread exit, and process exit
 * when it was the process's last thread). */
static void row_remove(struct target *t, size_t i, bool announce)
{
	pid_t pid = t->pub[i].pid, tid = t->pub[i].tid;
	if (t->rows[i].state == RS_COLLECT)
		t->ncollect--;
	if (!t->rows[i].clone_seen)
		ghost_add(t, tid);
	/* The last row takes its place: callers that remove while they walk
	 * the rows walk them backwards. */
	tidmap_remove(&t->index, tid);
	size_t last = --t->nrows;
	if (i != last) {
		t->rows[i] = t->rows[last];
		t->pub[i] = t->pub[last];
		tidmap_put(&t->index, t->pub[i].tid, (uint32_t)i);  /* present: no allocation */
	}
	if (!announce)
		return;
	emit(t, TARGET_EV_THREAD_EXIT, pid, tid);
	if (!process_known(t, pid))
		emit(t, TARGET_EV_PROCESS_EXIT, pid, pid);
}

/* Drop every row of process PID. */
static void remove_process(struct target *t, pid_t pid, bool announce)
{
	for (size_t i = t->nrows; i-- > 0;)
		if (t->pub[i].pid == pid)
			row_remove(t, i, announce);
}

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
static void note_sigchld(struct target *t, pid_t sender)
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
		note_sigchld(t, si.si_pid);
	}
}

static bool full_pass_due(const struct target *t)
{
	return t->cfg.mode != TARGET_SEIZE_PERSISTENT || t->hints_lost || t->in_full_pass ||
	       (t->maybe_hidden && (t->nrows <= FULL_PASS_ALWAYS || now_ns() >= t->next_full_ns));
}

/* Thread TID owes us a stop (a new thread's first, or an interrupt a round
 * gave up waiting for): next_report asks for it alone, so its report does
 * not wait for a full pass when its SIGCHLD was merged (a new thread stops
 * right after its parent's clone event). */
static void expect_stop(struct target *t, pid_t tid)
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
		ssize_t i = row_find(t, tid);
		if (i < 0 || !(t->rows[i].intr_out || t->rows[i].sample_out)) {
			t->expect[k] = t->expect[--t->nexpect];
			continue;
		}
		pid_t r = waitpid(tid, status, __WALL | WNOHANG);
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
		pid_t tid = waitpid(t->hints[--t->nhints], status, __WALL | WNOHANG);
		if (tid > 0)
			return tid;
	}
	if (t->maybe_hidden && t->nexpect > 0) {
		pid_t tid = next_expected_report(t, status);
		if (tid > 0)
			return tid;
	}
	if (!full_ok || !full_pass_due(t))
		return 0;
	t->in_full_pass = true;
	pid_t tid;
	do
		tid = waitpid(-1, status, __WALL | WNOHANG);
	while (tid < 0 && errno == EINTR);
	if (tid > 0)
		return tid;
	/* the pass is over: every report queued before it was taken */
	t->in_full_pass = t->hints_lost = t->maybe_hidden = false;
	t->next_full_ns = now_ns() + (long long)t->nrows * FULL_PASS_NS_PER_TRACEE;
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
static pid_t wait_report_spin(struct target *t, int *status, long long deadline,
			      long long spin_ns, const pid_t *tids, size_t n, size_t nspin)
{
	long long spin_until = spin_ns > 0 ? now_ns() + spin_ns : 0;
	for (;;) {
		bool spin = false;
		for (size_t k = 0; k < n; k++) {
			ssize_t i = row_find(t, tids[k]);
			if (i < 0 || t->rows[i].state != RS_COLLECT)
				continue;
			pid_t tid = waitpid(tids[k], status, __WALL | WNOHANG);
			if (tid > 0) {
				/* take its SIGCHLD now: another thread's stop
				 * raised while it is pending would be merged
				 * into it and wait for a full pass */
				take_sigchld(t);
				return tid;
			}
			spin |= k < nspin;
		}
		long long now = now_ns();
		if (spin && now < spin_until)
			continue;
		pid_t tid = next_report(t, status, n == 0);
		if (tid != 0)
			return tid;
		now = now_ns();
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
			note_sigchld(t, si.si_pid);
		else if (errno != EAGAIN && errno != EINTR)
			return 0;
	}
}

static pid_t wait_report(struct target *t, int *status, long long deadline)
{
	return wait_report_spin(t, status, deadline, 0, NULL, 0, 0);
}

/* ---- a call our interrupt ended with EINTR ----------------------------------------- */

/* x86_64 system calls that return a bare EINTR (not a restart code the
 * kernel acts on) when a ptrace interrupt wakes them, and that have done
 * nothing when they do, so running them again is what the kernel's own
 * restart would do. Left out: connect (it goes on in the background),
 * close (the descriptor is gone anyway), io_uring_enter (it may have
 * submitted). */
static bool call_restartable(unsigned long long nr)
{
	switch (nr) {
	case 0:   /* read */
	case 1:   /* write */
	case 19:  /* readv */
	case 20:  /* writev */
	case 43:  /* accept */
	case 44:  /* sendto */
	case 45:  /* recvfrom */
	case 46:  /* sendmsg */
	case 47:  /* recvmsg */
	case 65:  /* semop */
	case 69:  /* msgsnd */
	case 70:  /* msgrcv */
	case 128: /* rt_sigtimedwait */
	case 208: /* io_getevents */
	case 220: /* semtimedop */
	case 232: /* epoll_wait */
	case 242: /* mq_timedsend */
	case 243: /* mq_timedreceive */
	case 281: /* epoll_pwait */
	case 288: /* accept4 */
	case 299: /* recvmmsg */
	case 307: /* sendmmsg */
	case 333: /* io_pgetevents */
	case 441: /* epoll_pwait2 */
		return true;
	default:
		return false;
	}
}

#define X86_64_USER_CS 0x33
#define EINTR_RET ((unsigned long long)-(long long)EINTR)

/* Whether thread TID of PID has a signal pending that it does not block:
 * then the EINTR is the signal's, not ours (true when unknown). */
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
	return (pending & ~strtoull(blk, NULL, 16)) != 0;
}

/* Row I is at an interrupt-stop of ours, about to be let go. If the stop
 * ended a system call with a bare EINTR (it blocked after we read it 'R',
 * and our interrupt woke it), make the thread run the call again, as the
 * kernel does for ERESTARTNOHAND: rax = the call's number, rip back over the
 * 2-byte syscall instruction. The call starts afresh: its timeout is
 * lengthened by the time since it was entered, which is after our read of
 * the thread's state (microseconds). Not done when a real signal is pending
 * (the EINTR is then the program's to see); a signal that comes before the
 * thread runs again undoes it (undo_restart). */
static void restart_interrupted_call(struct target *t, size_t i, pid_t tid)
{
	struct user_regs_struct r;
	t->rows[i].restart_ip = 0;
	if (t->regs_tid == tid)
		r = t->regs;  /* read by target_get_regs at this stop */
	else if (pt(PTRACE_GETREGS, tid, 0, (unsigned long)&r) < 0)
		return;
	if (r.cs != X86_64_USER_CS ||
	    r.rax != EINTR_RET || !call_restartable(r.orig_rax) || r.rip < 2)
		return;
	uint8_t insn[2];
	struct iovec local = { .iov_base = insn, .iov_len = sizeof insn };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)(r.rip - 2), .iov_len = sizeof insn };
	if (process_vm_readv(tid, &local, 1, &remote, 1, 0) != (ssize_t)sizeof insn ||
	    insn[0] != 0x0f || insn[1] != 0x05)
		return;
	if (signal_pending_unblocked(t->pub[i].pid, tid))
		return;
	r.rax = r.orig_rax;
	r.rip -= 2;
	t->regs_tid = 0;
	if (pt(PTRACE_SETREGS, tid, 0, (unsigned long)&r) < 0)
		return;
	t->rows[i].restart_ip = r.rip;
	t->restarted++;
	if (t->cfg.verbose >= 2)
		warn("target: thread %d: restarted system call %llu that our interrupt ended with EINTR",
		     (int)tid, r.orig_rax);
}

/* Row I reports a signal-delivery-stop. If a call was restarted for it and
 * the thread has not run it again yet, the signal would interrupt it: give
 * the thread its EINTR back, so the handler runs and the call fails as it
 * would have without us. */
static void undo_restart(struct target *t, size_t i, pid_t tid)
{
	struct user_regs_struct r;
	unsigned long long ip = t->rows[i].restart_ip;
	t->rows[i].restart_ip = 0;
	if (!ip || pt(PTRACE_GETREGS, tid, 0, (unsigned long)&r) < 0 || r.rip != ip ||
	    r.rax != r.orig_rax)
		return;
	r.rax = EINTR_RET;
	r.rip += 2;
	if (pt(PTRACE_SETREGS, tid, 0, (unsigned long)&r) == 0)
		t->restarted--;
}

/* ---- resuming a stopped thread according to its row ---------------------------------- */

enum stop_kind { STOP_TRAP, STOP_GROUP, STOP_SIGNAL, STOP_EVENT };

/* Detach a stopped tracee; the row (if any) is dropped silently. */
static void detach_now(struct target *t, ssize_t i, pid_t tid, int sig)
{
	if (pt(PTRACE_DETACH, tid, 0, (unsigned long)sig) < 0 && errno != ESRCH && t->cfg.verbose)
		warn_errno("target: cannot detach thread %d", (int)tid);
	if (i >= 0) {
		t->rows[i].traced = false;
		t->rows[i].clone_seen = true;
		if (t->cfg.mode == TARGET_SEIZE_PER_SAMPLE)
			row_set_state(t, (size_t)i, RS_RUNNING);
		else
			row_remove(t, (size_t)i, false);
	}
}

/* Keep row I in its group-stop (stopped, but still reporting to us). */
static void keep_group_stopped(struct target *t, size_t i)
{
	pid_t tid = t->pub[i].tid;
	row_set_state(t, i, RS_GROUP_STOP);
	if (pt(PTRACE_LISTEN, tid, 0, 0) == 0 || errno == ESRCH)
		return;
	row_set_state(t, i, RS_RUNNING);
	pt(PTRACE_CONT, tid, 0, 0);
}

static void resume_held(struct target *t, size_t i, pid_t tid);

/* The interrupt-stop of row I came after its sampling round gave up on it:
 * hand it to the late-sample hook while it is stopped, resume it, then let
 * the hook finish its work with the thread running. */
static void sample_late(struct target *t, size_t i, pid_t tid)
{
	row_set_state(t, i, RS_HELD);
	t->rows[i].sig = 0;
	t->rows[i].held_trap = true;
	t->late_fn(t->late_ctx, tid);
	ssize_t k = row_find(t, tid);
	if (k >= 0 && t->rows[k].state == RS_HELD)
		resume_held(t, (size_t)k, tid);
	if (t->late_done)
		t->late_done(t->late_ctx);
}

/* A known thread I reported a stop of KIND (SIG: the signal of a
 * signal-delivery-stop or the stop signal of a group-stop). Decide who owns
 * it now and resume, hold, listen or detach. */
static void dispose_stop(struct target *t, size_t i, enum stop_kind kind, int sig)
{
	struct row *r = &t->rows[i];
	pid_t tid = t->pub[i].tid;
	int inject = kind == STOP_SIGNAL ? sig : 0;
	bool persistent = t->cfg.mode == TARGET_SEIZE_PERSISTENT;
	bool late = r->sample_out && kind == STOP_TRAP && t->late_fn;

	r->intr_out = false;
	r->sample_out = false;
	if (kind == STOP_SIGNAL)
		undo_restart(t, i, tid);
	r->restart_ip = 0;
	if (r->state == RS_COLLECT) {
		if (kind == STOP_GROUP) {
			/* Stopped by the target's own group-stop: not ours to
			 * sample; it stays stopped as without us. */
			if (persistent) {
				keep_group_stopped(t, i);
			} else {
				detach_now(t, (ssize_t)i, tid, 0);
			}
			return;
		}
		row_set_state(t, i, RS_HELD);
		r->sig = inject;
		r->held_trap = kind == STOP_TRAP;
		return;
	}
	if (late) {
		sample_late(t, i, tid);
		return;
	}
	if (kind == STOP_TRAP)
		restart_interrupted_call(t, i, tid);
	if (!persistent) {
		/* A per-sample tracee reporting outside a sample (its collection
		 * timed out): let it go. */
		detach_now(t, (ssize_t)i, tid, inject);
		return;
	}
	if (kind == STOP_GROUP) {
		keep_group_stopped(t, i);
		return;
	}
	row_set_state(t, i, RS_RUNNING);
	if (pt(PTRACE_CONT, tid, 0, (unsigned long)inject) < 0 && errno != ESRCH && t->cfg.verbose)
		warn_errno("target: cannot resume thread %d", (int)tid);
}

/* The thread group of TID from /proc, or 0. */
static pid_t read_tgid(pid_t tid)
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
	bool new_process = !process_known(t, pid);
	ssize_t i = row_add(t, pid, tid, true);
	if (i < 0) {
		warn("out of memory: cannot follow thread %d", (int)tid);
		return -1;
	}
	t->rows[i].intr_out = true;
	t->rows[i].clone_seen = clone_seen;
	expect_stop(t, tid);
	if (new_process)
		emit(t, TARGET_EV_PROCESS_NEW, pid, pid);
	emit(t, TARGET_EV_THREAD_NEW, pid, tid);
	return i;
}

/* A clone/fork/vfork event of the thread in row I created NEW. */
static void handle_new_child(struct target *t, size_t i, int event, pid_t child)
{
	if (child <= 0 || row_find(t, child) >= 0) {
		ssize_t j = child > 0 ? row_find(t, child) : -1;
		if (j >= 0)
			t->rows[j].clone_seen = true;
		return;
	}
	if (ghost_take(t, child))
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
	add_new_tracee(t, thread ? parent_pid : child, child, true);
}

/* An execve completed in process PID (reported by its new leader, tid ==
 * PID); FORMER is the tid that called it. All other threads are gone. */
static void handle_exec(struct target *t, pid_t pid, pid_t former)
{
	ssize_t leader = row_find(t, pid);
	if (leader < 0) {
		/* The old leader was never ours (it had exited when we
		 * attached): the exec'ing thread takes its tid now. */
		leader = row_add(t, pid, pid, true);
		if (leader < 0) {
			detach_now(t, -1, pid, 0);
			return;
		}
		t->rows[leader].clone_seen = true;
		emit(t, TARGET_EV_THREAD_NEW, pid, pid);
	}
	for (size_t k = t->nrows; k-- > 0;)
		if (t->pub[k].pid == pid && t->pub[k].tid != pid)
			row_remove(t, k, true);
	/* clone_seen stays as it was: a --children process can exec (and
	 * exit) before its parent's fork event is read, and that event must
	 * then find it among the ghosts, not add it again. */
	leader = row_find(t, pid);
	t->rows[leader].intr_out = false;
	t->rows[leader].traced = true;
	if (t->cfg.verbose >= 2)
		warn("target: process %d executed a new program (thread %d)", (int)pid, (int)former);
	if (process_is_32bit(pid)) {
		char comm[64];
		read_comm(pid, comm, sizeof comm);
		warn("process %d (%s) now runs a 32-bit program: its samples show the sampled "
		     "address only (csampler unwinds 64-bit programs)", (int)pid, comm);
	}
	emit(t, TARGET_EV_EXEC, pid, pid);
	row_set_state(t, (size_t)leader, RS_RUNNING);
	if (t->cfg.mode == TARGET_SEIZE_PER_SAMPLE) {
		detach_now(t, leader, pid, 0);
		return;
	}
	if (pt(PTRACE_CONT, pid, 0, 0) < 0 && errno != ESRCH && t->cfg.verbose)
		warn_errno("target: cannot resume process %d after exec", (int)pid);
}

/* A thread reported death. */
static void handle_death(struct target *t, pid_t tid, int status)
{
	if (t->launched && tid == t->main_pid && t->exit_status < 0)
		t->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	ssize_t i = row_find(t, tid);
	if (i < 0)
		return;
	pid_t pid = t->pub[i].pid;
	row_remove(t, (size_t)i, true);
	/* A leader reports last; untraced (per-sample) rows never report. */
	if (tid == pid)
		remove_process(t, pid, true);
}

/* A stop of a tid we have no row for: a new thread whose clone event has not
 * been reported yet, a --children process, or something to let go. */
static void handle_unknown_stop(struct target *t, pid_t tid, int status)
{
	int sig = WSTOPSIG(status), event = status >> 16;
	int inject = event == 0 ? sig : 0;
	pid_t tgid = read_tgid(tid);
	bool keep = t->cfg.mode == TARGET_SEIZE_PERSISTENT && tgid > 0 &&
		    (process_known(t, tgid) || t->cfg.children);
	if (!keep) {
		ghost_add(t, tid);
		detach_now(t, -1, tid, inject);
		return;
	}
	ssize_t i = add_new_tracee(t, tgid, tid, false);
	if (i < 0) {
		detach_now(t, -1, tid, inject);
		return;
	}
	if (event == PTRACE_EVENT_STOP)
		dispose_stop(t, (size_t)i, is_stop_signal(sig) ? STOP_GROUP : STOP_TRAP, sig);
	else if (event == 0)
		dispose_stop(t, (size_t)i, STOP_SIGNAL, sig);
	else
		dispose_stop(t, (size_t)i, STOP_EVENT, 0);
}

/* Every waitpid report goes through here. */
static void handle_report(struct target *t, pid_t tid, int status)
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
	ssize_t i = row_find(t, tid);
	int sig = WSTOPSIG(status), event = status >> 16;
	if (event == PTRACE_EVENT_EXEC) {
		unsigned long former = 0;
		pt(PTRACE_GETEVENTMSG, tid, 0, (unsigned long)&former);
		if (i < 0 && !process_known(t, tid)) {
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
		dispose_stop(t, (size_t)i, is_stop_signal(sig) ? STOP_GROUP : STOP_TRAP, sig);
		break;
	case PTRACE_EVENT_CLONE:
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK: {
		unsigned long child = 0;
		if (pt(PTRACE_GETEVENTMSG, tid, 0, (unsigned long)&child) == 0)
			handle_new_child(t, (size_t)i, event, (pid_t)child);
		i = row_find(t, tid); /* the table may have moved */
		if (i >= 0)
			dispose_stop(t, (size_t)i, STOP_EVENT, 0);
		break;
	}
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
		handle_report(t, tid, status);
		n++;
	}
	return n;
}

/* Whether a report may be waiting: SIGCHLD is pending, or one may hide
 * behind a SIGCHLD taken earlier and its full pass is due. Every taker of
 * SIGCHLD (the caller's signalfd, then target_poll; sigtimedwait here) looks
 * for the reports it stands for at once. */
static bool sigchld_pending(void)
{
	sigset_t pending;
	return sigpending(&pending) < 0 || sigismember(&pending, SIGCHLD) == 1;
}

static bool report_may_wait(const struct target *t)
{
	return sigchld_pending() || full_pass_due(t);
}

/* Handle every queued report; if there may be more than one drain takes,
 * leave SIGCHLD pending so that the caller comes back. */
static int drain_all(struct target *t)
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
static void rescan_tasks(struct target *t)
{
	if (t->detached || t->cfg.mode != TARGET_SEIZE_PER_SAMPLE || !process_known(t, t->main_pid))
		return;
	struct procfs_dir d;
	bool listable = procfs_dir_open(&d, t->main_pid);
	size_t listed = 0;
	unsigned gen = ++t->scan_gen;
	if (listable) {
		for (pid_t tid; (tid = procfs_dir_next(&d)) > 0;) {
			listed++;
			ssize_t i = row_find(t, (pid_t)tid);
			if (i < 0) {
				i = row_add(t, t->main_pid, (pid_t)tid, false);
				if (i < 0)
					break;
				t->rows[i].clone_seen = true;
				emit(t, TARGET_EV_THREAD_NEW, t->main_pid, (pid_t)tid);
			}
			t->rows[i].scan_gen = gen;
		}
	}
	procfs_dir_close(&d);
	/* A launched program stays listed until we reap it (handle_death). */
	if (!t->launched && (!listable || main_process_gone(t, listed))) {
		remove_process(t, t->main_pid, true);
		return;
	}
	if (!listable)
		return;
	for (size_t i = t->nrows; i-- > 0;)
		if (t->rows[i].scan_gen != gen && !t->rows[i].traced)
			row_remove(t, i, true);
}

/* ---- attach ----------------------------------------------------------------------- */

/* The process of tracer thread TRACER (TracerPid is a thread), its name
 * into COMM. */
static pid_t tracer_process(pid_t tracer, char *comm, size_t size)
{
	pid_t process = read_tgid(tracer);
	if (process <= 0)
		process = tracer;
	read_comm(process, comm, size);
	return process;
}

/* PID is traced by thread TRACER: say by which process, and how to go on. */
static int already_traced(pid_t pid, pid_t tracer)
{
	char comm[64];
	pid_t process = tracer_process(tracer, comm, sizeof comm);
	warn("cannot profile process %d: it is already traced by process %d (%s); detach that "
	     "tracer first", (int)pid, (int)process, comm);
	return TARGET_ERR_TRACED;
}

/* Is ANC csampler itself or one of its ancestors? */

static bool is_self_or_ancestor(pid_t anc)
{
	pid_t p = getpid();
	char buf[4096];
	for (int depth = 0; depth < ANCESTRY_MAX && p > 0; depth++) {
		if (p == anc)
			return true;
		if (procfs_read_file(p, 0, "status", buf, sizeof buf) <= 0)
			return false;
		p = (pid_t)procfs_status_long(buf, "PPid", 0);
	}
	return false;
}

static bool has_cap_sys_ptrace(void)
{
	char buf[4096];
	if (!(procfs_read_file(getpid(), 0, "status", buf, sizeof buf) > 0))
		return false;
	const char *v = procfs_status_field(buf, "CapEff");
	if (!v)
		return false;
	unsigned long long caps = strtoull(v, NULL, 16);
	return (caps >> CAP_SYS_PTRACE_BIT) & 1;
}

/* Do all of uid/euid/suid (or gid/...) of the status line NAME equal ID? */
static bool ids_all_equal(const char *status, const char *name, unsigned long id)
{
	const char *v = procfs_status_field(status, name);
	if (!v)
		return false;
	for (int k = 0; k < 3; k++) {
		char *end;
		unsigned long x = strtoul(v, &end, 10);
		if (end == v || x != id)
			return false;
		v = end;
	}
	return true;
}

/* Why did PTRACE_SEIZE of PID fail with EPERM? Print one line. */
static void explain_eperm(pid_t pid)
{
	char st[4096], path[64], link[PATH_MAX];
	bool cap = has_cap_sys_ptrace();
	bool have_status = procfs_read_file(pid, 0, "status", st, sizeof st) > 0;
	snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
	/* /proc/PID/exe needs the same owner/dumpable/capability check as
	 * ptrace itself, without the attach-only Yama rule. */
	bool basic_ok = readlink(path, link, sizeof link) >= 0 || errno == ENOENT;

	if (!basic_ok && have_status && !cap &&
	    (!ids_all_equal(st, "Uid", (unsigned long)getuid()) ||
	     !ids_all_equal(st, "Gid", (unsigned long)getgid()))) {
		long uid = procfs_status_long(st, "Uid", -1);
		warn("cannot trace process %d: it belongs to uid %ld and csampler runs as uid %ld "
		     "without CAP_SYS_PTRACE; run csampler as that user or as root",
		     (int)pid, uid, (long)getuid());
		return;
	}
	if (!basic_ok && !cap) {
		warn("cannot trace process %d: it is not dumpable (set-id program or "
		     "prctl(PR_SET_DUMPABLE, 0)) and csampler lacks CAP_SYS_PTRACE; run csampler "
		     "as root with CAP_SYS_PTRACE",
		     (int)pid);
		return;
	}
	char yama[32];
	if (procfs_read("/proc/sys/kernel/yama/ptrace_scope", yama, sizeof yama) > 0) {
		int scope = atoi(yama);
		if (scope >= 3 || (scope >= 1 && !cap)) {
			warn("cannot trace process %d: kernel.yama.ptrace_scope is %d (%s); %s", (int)pid,
			     scope,
			     scope == 1 ? "only descendants may be traced" :
			     scope == 2 ? "only CAP_SYS_PTRACE may trace" : "ptrace attach is disabled",
			     scope >= 3 ? "it cannot be lowered until reboot; launch the program "
					  "under csampler instead (csampler -- PROGRAM)" :
					  "run csampler as root, launch the program under it, or "
					  "set sysctl kernel.yama.ptrace_scope=0");
			return;
		}
	}
	if (procfs_read_file(getpid(), 0, "status", st, sizeof st) > 0 &&
	    procfs_status_long(st, "Seccomp", 0) != 0) {
		warn("cannot trace process %d: csampler runs under a seccomp filter (Seccomp: %ld in "
		     "/proc/self/status) that refuses ptrace; run csampler outside that sandbox or "
		     "allow ptrace in its filter",
		     (int)pid, procfs_status_long(st, "Seccomp", 0));
		return;
	}
	warn("cannot trace process %d: operation not permitted (refused by a security module "
	     "such as SELinux or AppArmor?)", (int)pid);
}

/* Check PID before touching it. Prints and returns a target_error, or 0
 * and sets *TGID (PID may name a thread: we profile its process). */
static int check_attachable(pid_t pid, pid_t *tgid)
{
	char st[4096];
	if (pid <= 0 || procfs_read_file(pid, 0, "status", st, sizeof st) <= 0) {
		warn("no such process: %d", (int)pid);
		return TARGET_ERR_NO_PROCESS;
	}
	*tgid = (pid_t)procfs_status_long(st, "Tgid", pid);
	if (*tgid != pid && procfs_read_file(*tgid, 0, "status", st, sizeof st) <= 0) {
		warn("no such process: %d", (int)pid);
		return TARGET_ERR_NO_PROCESS;
	}
	pid = *tgid;
	if (pid == getpid()) {
		warn("cannot profile process %d: it is csampler itself", (int)pid);
		return TARGET_ERR_BAD_TARGET;
	}
	if (is_self_or_ancestor(pid)) {
		warn("cannot profile process %d: it is an ancestor of csampler (stopping it could "
		     "deadlock the session)", (int)pid);
		return TARGET_ERR_BAD_TARGET;
	}
	if (process_is_32bit(pid)) {
		warn("cannot profile process %d: it runs a 32-bit program; csampler unwinds 64-bit "
		     "(x86-64) programs only", (int)pid);
		return TARGET_ERR_BAD_TARGET;
	}
	char stat[1024];
	struct procfs_stat ps;
	if (procfs_read_file(pid, 0, "stat", stat, sizeof stat) > 0 && procfs_parse_stat(stat, &ps) &&
	    (ps.flags & PF_KTHREAD_FLAG)) {
		warn("cannot profile process %d: it is a kernel thread", (int)pid);
		return TARGET_ERR_BAD_TARGET;
	}
	char s = state_letter(st);
	if (s == 'Z' || s == 'X') {
		/* The leader may be a zombie while other threads run on. */
		bool live = false;
		struct procfs_dir d;
		char tst[4096];
		procfs_dir_open(&d, pid);
		for (pid_t tid; !live && (tid = procfs_dir_next(&d)) > 0;) {
			if (procfs_read_file(pid, tid, "status", tst, sizeof tst) > 0) {
				char ts = state_letter(tst);
				live = ts != 'Z' && ts != 'X';
			}
		}
		procfs_dir_close(&d);
		if (!live) {
			warn("cannot profile process %d: it is a zombie (it has exited and waits for its "
			     "parent to reap it)", (int)pid);
			return TARGET_ERR_BAD_TARGET;
		}
	}
	long tracer = procfs_status_long(st, "TracerPid", 0);
	if (tracer > 0)
		return already_traced(pid, (pid_t)tracer);
	return 0;
}

static struct target *target_new(const struct target_config *cfg)
{
	struct target *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->cfg = *cfg;
	t->exit_status = -1;
	t->go_fd = t->err_fd = t->stat_fd = -1;
	t->options = PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC;
	if (cfg->children)
		t->options |= PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK;
	sigemptyset(&t->sigchld);
	sigaddset(&t->sigchld, SIGCHLD);
	/* Reports are waited for with sigtimedwait(SIGCHLD); the profiler
	 * reads SIGCHLD from a signalfd, which needs it blocked anyway. */
	sigprocmask(SIG_BLOCK, &t->sigchld, NULL);
	return t;
}

/* Is TID of PID exiting or gone (so a failed seize of it is no error)? */
static bool thread_exiting(pid_t pid, pid_t tid)
{
	char st[4096];
	if (procfs_read_file(pid, tid, "status", st, sizeof st) <= 0)
		return true;
	char s = state_letter(st);
	return s == 'Z' || s == 'X';
}

/* Is TID already traced by us (auto-attached through a clone event we have
 * not read yet)? */
static bool traced_by_us(pid_t pid, pid_t tid)
{
	char st[4096];
	return procfs_read_file(pid, tid, "status", st, sizeof st) > 0 &&
	       procfs_status_long(st, "TracerPid", 0) == (long)gettid(); /* the tracer thread */
}

/* Seize every thread of PID, passing over /proc/PID/task until a pass finds
 * nothing new. Returns 0, or a target_error (message printed). */
/* Seize every thread of PID. A CHILD (--children, found at attach) that is
 * gone is no error to report; one csampler may not trace is said in one
 * line by the caller. */
static int seize_all_threads(struct target *t, pid_t pid, bool child)
{
	for (int pass = 0; pass < ATTACH_MAX_PASSES; pass++) {
		struct procfs_dir d;
		if (!procfs_dir_open(&d, pid)) {
			if (!child)
				warn("no such process: %d (it exited while csampler attached)", (int)pid);
			return TARGET_ERR_NO_PROCESS;
		}
		bool found_new = false;
		for (pid_t tid; (tid = procfs_dir_next(&d)) > 0;) {
			if (row_find(t, tid) >= 0)
				continue;
			bool mine = pt(PTRACE_SEIZE, tid, 0, t->options) == 0;
			int err = errno;
			if (!mine && err == EPERM && traced_by_us(pid, tid))
				mine = true;
			if (!mine) {
				/* gone, or a zombie that stays listed (a main thread
				 * that called pthread_exit): nothing new to attach */
				if (err == ESRCH || thread_exiting(pid, tid))
					continue;
				procfs_dir_close(&d);
				if (child) {
					errno = err;
					return TARGET_ERR_PERMISSION;
				}
				if (err == EPERM) {
					char st[4096];
					long tracer = procfs_read_file(pid, tid, "status", st, sizeof st) > 0 ?
						      procfs_status_long(st, "TracerPid", 0) : 0;
					if (tracer > 0)
						return already_traced(pid, (pid_t)tracer);
					explain_eperm(pid);
					return TARGET_ERR_PERMISSION;
				}
				errno = err;
				warn_errno("cannot trace thread %d of process %d", (int)tid, (int)pid);
				return TARGET_ERR_FAILED;
			}
			ssize_t i = row_add(t, pid, tid, true);
			if (i < 0) {
				procfs_dir_close(&d);
				warn("out of memory while attaching");
				return TARGET_ERR_RESOURCE;
			}
			t->rows[i].clone_seen = true;
			found_new = true;
		}
		procfs_dir_close(&d);
		if (!found_new && child)
			return 0;
		if (!found_new)
			return t->nrows ? 0 : (warn("no such process: %d", (int)pid), TARGET_ERR_NO_PROCESS);
	}
	warn("process %d creates threads faster than csampler can attach to them", (int)pid);
	return TARGET_ERR_FAILED;
}

/* Per-sample mode: whether the main thread can be seized, asked of a thread
 * that seizes it and exits (tracer.h): the kernel lets it go again without
 * stopping it, so a thread blocked in a system call is not disturbed. */
struct seize_probe {
	pid_t tid;
	int err;
};

static int seize_and_exit(void *arg)
{
	struct seize_probe *p = arg;
	p->err = pt(PTRACE_SEIZE, p->tid, 0, PTRACE_O_TRACEEXEC) < 0 ? errno : 0;
	return 0;
}

/* Per-sample mode: check once that process (row I) can be traced, so
 * permission errors show at attach. 0 or a target_error. */
static int probe_per_sample(struct target *t, size_t i, pid_t asked)
{
	struct seize_probe probe = { .tid = t->pub[i].tid };
	if (tracer_run(seize_and_exit, &probe) < 0) {
		warn_errno("cannot start a thread to trace process %d", (int)probe.tid);
		return TARGET_ERR_RESOURCE;
	}
	errno = probe.err;
	switch (probe.err) {
	case 0:
		return 0;
	case ESRCH:
		warn("no such process: %d", (int)asked);
		return TARGET_ERR_NO_PROCESS;
	case EPERM:
		if (thread_exiting(probe.tid, probe.tid))
			return 0; /* an exited leader: its threads are probed per sample */
		explain_eperm(probe.tid);
		return TARGET_ERR_PERMISSION;
	default:
		warn_errno("cannot trace process %d", (int)probe.tid);
		return TARGET_ERR_FAILED;
	}
}

/* --children with -p: the descendants the process has already, found by
 * their parent in /proc, pass after pass until a pass finds none (new ones
 * come as fork events from the processes seized). A child that exits
 * meanwhile is skipped; one csampler may not trace is said and skipped.
 * Returns the number of child processes attached. */
static size_t attach_existing_children(struct target *t)
{
	size_t attached = 0;
	for (int pass = 0; pass < ATTACH_MAX_PASSES; pass++) {
		struct procfs_dir d;
		if (!procfs_dir_open(&d, 0))
			return attached;
		bool found = false;
		for (pid_t cpid; (cpid = procfs_dir_next(&d)) > 0;) {
			if (cpid == getpid() || row_find(t, cpid) >= 0)
				continue;
			pid_t ppid = procfs_parent(cpid);
			if (ppid <= 0 || row_find(t, ppid) < 0)
				continue;
			int st = seize_all_threads(t, cpid, true);
			if (st == TARGET_ERR_PERMISSION)
				warn_errno("cannot follow child process %d, which existed before "
					   "csampler attached", (int)cpid);
			if (st == 0) {
				attached++;
				found = true;
			}
		}
		procfs_dir_close(&d);
		if (!found)
			break;
	}
	return attached;
}

int target_attach(struct target **out, pid_t pid, const struct target_config *cfg)
{
	*out = NULL;
	long long start = now_ns();
	pid_t tgid = pid;
	int status = check_attachable(pid, &tgid);
	if (status)
		return status;
	struct target *t = target_new(cfg);
	if (!t) {
		warn("out of memory");
		return TARGET_ERR_RESOURCE;
	}
	t->main_pid = tgid;
	t->started = true;
	if (cfg->mode == TARGET_SEIZE_PER_SAMPLE) {
		char path[64];
		snprintf(path, sizeof path, "/proc/%d/stat", (int)tgid);
		t->stat_fd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t i = row_add(t, tgid, tgid, false);
		if (i < 0 || t->stat_fd < 0) {
			target_free(t);
			warn("no such process: %d", (int)pid);
			return TARGET_ERR_NO_PROCESS;
		}
		t->rows[i].clone_seen = true;
		status = probe_per_sample(t, (size_t)i, pid);
		if (status) {
			target_free(t);
			return status;
		}
		emit(t, TARGET_EV_PROCESS_NEW, tgid, tgid);
		emit(t, TARGET_EV_THREAD_NEW, tgid, tgid);
		rescan_tasks(t);
		*out = t;
		return 0;
	}
	status = seize_all_threads(t, tgid, false);
	if (status) {
		target_free(t);
		return status;
	}
	size_t nchildren = cfg->children ? attach_existing_children(t) : 0;
	if (cfg->verbose)
		warn("attached to process %d (%zu threads%s%zu child processes) in %.1f ms",
		     (int)tgid, t->nrows, nchildren || cfg->children ? ", " : "", nchildren,
		     (double)(now_ns() - start) / 1e6);
	/* each process's threads were added together, its first thread first */
	for (size_t i = 0; i < t->nrows; i++)
		if (i == 0 || t->pub[i].pid != t->pub[i - 1].pid)
			emit(t, TARGET_EV_PROCESS_NEW, t->pub[i].pid, t->pub[i].pid);
	for (size_t i = 0; i < t->nrows; i++)
		emit(t, TARGET_EV_THREAD_NEW, t->pub[i].pid, t->pub[i].tid);
	*out = t;
	return 0;
}

/* ---- launch ------------------------------------------------------------------------ */

/* Find NAME the way a shell does. 0 and the path in OUT, or ENOENT (not
 * found), EACCES (found, not executable), EISDIR. */
static int find_command(const char *name, char *out, size_t size)
{
	struct stat sb;
	if (!*name)
		return ENOENT;
	if (strchr(name, '/')) {
		if (strlen(name) >= size)
			return ENAMETOOLONG;
		strcpy(out, name);
		if (stat(name, &sb) < 0)
			return errno;
		if (S_ISDIR(sb.st_mode))
			return EISDIR;
		return access(name, X_OK) == 0 ? 0 : EACCES;
	}
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	int result = ENOENT;
	char cand[PATH_MAX];
	for (const char *p = path;; p++) {
		const char *colon = strchr(p, ':');
		size_t dl = colon ? (size_t)(colon - p) : strlen(p);
		int n = dl ? snprintf(cand, sizeof cand, "%.*s/%s", (int)dl, p, name) :
			     snprintf(cand, sizeof cand, "%s", name);
		if (n > 0 && (size_t)n < sizeof cand && stat(cand, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
			if (access(cand, X_OK) == 0 && (size_t)n < size) {
				strcpy(out, cand);
				return 0;
			}
			if (result == ENOENT && (size_t)n < size) {
				strcpy(out, cand);
				result = EACCES;
			}
		}
		if (!colon)
			break;
		p = colon;
	}
	return result;
}

/* The launched child, between fork and exec. Only async-signal-safe calls. */
static _Noreturn void run_child(int go_fd, int err_fd, int stdout_fd, const char *path,
				char *const argv[], char **sh_argv)
{
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	char go;
	ssize_t n;
	do
		n = read(go_fd, &go, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(CS_EXIT_NOT_FOUND); /* csampler went away before target_start */
	close(go_fd);
	if (stdout_fd >= 0 && stdout_fd != STDOUT_FILENO && dup2(stdout_fd, STDOUT_FILENO) < 0)
		_exit(CS_EXIT_NOT_EXEC);
	execv(path, argv);
	if (errno == ENOEXEC) /* a script without #!: run it with sh, as shells do */
		execv("/bin/sh", sh_argv);
	int err = errno;
	ssize_t w = write(err_fd, &err, sizeof err);
	(void)w;
	_exit(err == ENOENT ? CS_EXIT_NOT_FOUND : CS_EXIT_NOT_EXEC);
}

int target_launch(struct target **out, char *const argv[], const struct target_config *cfg)
{
	*out = NULL;
	char path[PATH_MAX];
	const char *name = argv[0] ? argv[0] : "";
	int err = find_command(name, path, sizeof path);
	if (err == ENOENT && !strchr(name, '/')) {
		warn("%s: command not found", name);
		return TARGET_ERR_NOT_FOUND;
	}
	if (err) {
		warn("%s: %s", name, strerror(err));
		return err == ENOENT || err == ENOTDIR || err == ENAMETOOLONG ? TARGET_ERR_NOT_FOUND :
										  TARGET_ERR_NOT_EXEC;
	}
	if (elf_is_32bit(path)) {
		warn("%s: a 32-bit program; csampler unwinds 64-bit (x86-64) programs only", name);
		return TARGET_ERR_BAD_TARGET;
	}
	size_t argc = 0;
	while (argv[argc])
		argc++;
	char **sh_argv = calloc(argc + 3, sizeof *sh_argv);
	struct target *t = sh_argv ? target_new(cfg) : NULL;
	if (!t || !(t->cmd_name = strdup(name))) {
		free(sh_argv);
		target_free(t);
		warn("out of memory");
		return TARGET_ERR_RESOURCE;
	}
	sh_argv[0] = (char *)"sh";
	sh_argv[1] = path;
	for (size_t k = 1; k < argc; k++)
		sh_argv[k + 1] = argv[k];

	int go[2], ep[2];
	if (pipe2(go, O_CLOEXEC) < 0) {
		warn_errno("pipe");
		free(sh_argv);
		target_free(t);
		return TARGET_ERR_RESOURCE;
	}
	if (pipe2(ep, O_CLOEXEC) < 0) {
		warn_errno("pipe");
		close(go[0]);
		close(go[1]);
		free(sh_argv);
		target_free(t);
		return TARGET_ERR_RESOURCE;
	}
	fflush(NULL);
	pid_t child = fork();
	if (child == 0) {
		close(go[1]);
		close(ep[0]);
		run_child(go[0], ep[1], cfg->stdout_fd, path, argv, sh_argv);
	}
	free(sh_argv);
	close(go[0]);
	close(ep[1]);
	if (child < 0) {
		warn_errno("fork");
		close(go[1]);
		close(ep[0]);
		target_free(t);
		return TARGET_ERR_RESOURCE;
	}
	t->launched = true;
	t->main_pid = child;
	t->go_fd = go[1];
	t->err_fd = ep[0];
	bool persistent = cfg->mode == TARGET_SEIZE_PERSISTENT;
	if (persistent && pt(PTRACE_SEIZE, child, 0, t->options) < 0) {
		err = errno;
		char status[4096];
		pid_t tracer = err == EPERM && procfs_read_file(child, 0, "status", status, sizeof status) > 0 ?
			       (pid_t)procfs_status_long(status, "TracerPid", 0) : 0;
		/* The child waits on the pipe: closing it makes it exit. */
		close(t->go_fd);
		t->go_fd = -1;
		int st;
		while (waitpid(child, &st, 0) < 0 && errno == EINTR)
			;
		errno = err;
		if (err == EPERM && tracer > 0) {
			/* csampler runs under a tracer that follows forks (strace -f,
			 * gdb with follow-fork): it has the child already */
			char comm[64];
			pid_t process = tracer_process(tracer, comm, sizeof comm);
			warn("cannot trace %s: csampler itself runs under a tracer, process %d (%s), "
			     "that follows its children; run csampler outside it (or without -f)", name,
			     (int)process, comm);
			target_free(t);
			return TARGET_ERR_TRACED;
		}
		if (err == EPERM) {
			explain_eperm(child);
		} else {
			warn_errno("cannot trace %s", name);
		}
		target_free(t);
		return err == EPERM ? TARGET_ERR_PERMISSION : TARGET_ERR_FAILED;
	}
	ssize_t i = row_add(t, child, child, persistent);
	if (i < 0) {
		target_free(t);
		warn("out of memory");
		return TARGET_ERR_RESOURCE;
	}
	t->rows[i].clone_seen = true;
	emit(t, TARGET_EV_PROCESS_NEW, child, child);
	emit(t, TARGET_EV_THREAD_NEW, child, child);
	*out = t;
	return 0;
}

int target_start(struct target *t)
{
	if (!t->launched || t->started)
		return 0;
	t->started = true;
	char go = 'g';
	ssize_t w;
	do
		w = write(t->go_fd, &go, 1);
	while (w < 0 && errno == EINTR);
	close(t->go_fd);
	t->go_fd = -1;
	if (w != 1) {
		warn_errno("cannot start %s", t->cmd_name);
		return -1;
	}
	/* Wait for execve (the error pipe closes on success), servicing the
	 * child's ptrace stops meanwhile so it never waits for us. */
	long long deadline = now_ns() + START_TIMEOUT_NS;
	int err = 0;
	while (now_ns() < deadline) {
		struct pollfd pfd = { .fd = t->err_fd, .events = POLLIN };
		int r = poll(&pfd, 1, 10);
		target_poll(t);
		if (r < 0 && errno != EINTR)
			break;
		if (r <= 0)
			continue;
		ssize_t n = read(t->err_fd, &err, sizeof err);
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof err)
			err = 0;
		break;
	}
	close(t->err_fd);
	t->err_fd = -1;
	if (err) {
		warn("%s: %s", t->cmd_name, strerror(err));
		return 0; /* the child exits 126/127; target_exit_status tells */
	}
	return 0;
}

/* ---- the event loop ------------------------------------------------------------------ */

void target_note_sigchld(struct target *t, pid_t sender)
{
	note_sigchld(t, sender);
}

int target_poll(struct target *t)
{
	/* The caller took a SIGCHLD: others may hide behind it. */
	t->maybe_hidden = true;
	int n = drain_all(t);
	rescan_tasks(t);
	return n;
}

int target_poll_pending(struct target *t)
{
	/* per-sample mode: end_collect does not drain; always look */
	int n = report_may_wait(t) ? drain_all(t) : 0;
	rescan_tasks(t);
	return n;
}

bool target_done(const struct target *t)
{
	if (t->launched && t->exit_status < 0)
		return false;
	if (t->detached)
		return true;
	return t->nrows == 0;
}

int target_exit_status(const struct target *t)
{
	return t->launched ? t->exit_status : -1;
}

size_t target_threads(const struct target *t, const struct target_thread **out)
{
	*out = t->pub;
	return t->detached ? 0 : t->nrows;
}

pid_t target_main_pid(const struct target *t)
{
	return t->main_pid;
}

/* ---- stopping and resuming for a sample ---------------------------------------------- */

/* Per-sample mode: seize and interrupt TID. */
static bool seize_for_sample(struct target *t, size_t i)
{
	pid_t tid = t->pub[i].tid;
	if (pt(PTRACE_SEIZE, tid, 0, PTRACE_O_TRACEEXEC) < 0)
		return false;
	t->rows[i].traced = true;
	return true;
}

/* Interrupt the given threads (seizing them first in per-sample mode); the
 * ones interrupted are in RS_COLLECT. */
static void interrupt_threads(struct target *t, const pid_t *tids, size_t n)
{
	bool persistent = t->cfg.mode == TARGET_SEIZE_PERSISTENT;
	if (!persistent)
		rescan_tasks(t);
	else if (sigchld_pending())
		drain_all(t);  /* (a due full pass waits for the end of the tick) */

	for (size_t k = 0; k < n; k++) {
		ssize_t i = row_find(t, tids[k]);
		if (i < 0 || t->rows[i].state != RS_RUNNING)
			continue;
		if (!persistent) {
			if (!seize_for_sample(t, (size_t)i))
				continue;
		} else if (t->rows[i].intr_out) {
			/* Still owes us a stop from before (a new thread, or one
			 * in uninterruptible sleep): do not wait on it again. */
			continue;
		}
		if (pt(PTRACE_INTERRUPT, tids[k], 0, 0) < 0) {
			if (errno == ESRCH && persistent)
				row_remove(t, (size_t)i, true);
			continue;
		}
		t->rows[i].intr_out = true;
		row_set_state(t, (size_t)i, RS_COLLECT);
	}
}

/* Those that did not stop in time: their stop comes later and is continued
 * (or detached) then; after a sampling round (SAMPLING), it is offered to
 * the late-sample hook first. */
static void end_collect(struct target *t, const pid_t *tids, size_t n, bool sampling)
{
	for (size_t k = 0; k < n && t->ncollect > 0; k++) {
		ssize_t i = row_find(t, tids[k]);
		if (i >= 0 && t->rows[i].state == RS_COLLECT) {
			row_set_state(t, (size_t)i, RS_RUNNING);
			t->rows[i].sample_out = sampling;
			expect_stop(t, tids[k]);
		}
	}
	if (t->cfg.mode == TARGET_SEIZE_PERSISTENT) {
		/* The round's stops raised SIGCHLD: take it (drain does),
		 * and handle the reports it may stand for, so the caller is
		 * not woken for them. */
		drain_all(t);
	}
}

/* Resume held row I (tid TID), re-injecting the signal its stop carried. */
static void resume_held(struct target *t, size_t i, pid_t tid)
{
	int sig = t->rows[i].sig;
	t->rows[i].sig = 0;
	if (t->rows[i].held_trap)
		restart_interrupted_call(t, i, tid);
	t->regs_tid = 0;
	t->rows[i].held_trap = false;
	if (t->cfg.mode == TARGET_SEIZE_PER_SAMPLE) {
		detach_now(t, (ssize_t)i, tid, sig);
		return;
	}
	row_set_state(t, i, RS_RUNNING);
	if (pt(PTRACE_CONT, tid, 0, (unsigned long)sig) < 0 && errno != ESRCH && t->cfg.verbose)
		warn_errno("target: cannot resume thread %d", (int)tid);
}

/* Interrupt TIDS and wait up to TIMEOUT for their stops. With FN, each thread
 * that stops is handed to FN and resumed at once (a sampling round); without,
 * the stopped threads are held. Returns how many FN was called for. */
static size_t collect_stops(struct target *t, const pid_t *tids, size_t n, size_t nspin,
			    long long timeout, long long spin_ns, target_sample_fn fn, void *ctx)
{
	size_t sampled = 0;
	interrupt_threads(t, tids, n);
	long long deadline = now_ns() + timeout;
	while (t->ncollect > 0) {
		int status;
		pid_t tid = wait_report_spin(t, &status, deadline, spin_ns, tids, n, nspin);
		if (tid <= 0)
			break;
		handle_report(t, tid, status);
		ssize_t i = row_find(t, tid);
		if (!fn || i < 0 || t->rows[i].state != RS_HELD)
			continue;
		for (size_t k = 0; k < n; k++)
			if (tids[k] == tid) {
				fn(ctx, k, tid);
				sampled++;
				break;
			}
		i = row_find(t, tid);
		if (i >= 0 && t->rows[i].state == RS_HELD)
			resume_held(t, (size_t)i, tid);
	}
	end_collect(t, tids, n, fn != NULL);
	return sampled;
}

size_t target_stop_threads(struct target *t, const pid_t *tids, size_t n, bool *stopped)
{
	size_t count = 0;
	for (size_t k = 0; k < n; k++)
		stopped[k] = false;
	if (t->detached)
		return 0;
	collect_stops(t, tids, n, n, COLLECT_TIMEOUT_NS, SPIN_NS, NULL, NULL);
	for (size_t k = 0; k < n; k++) {
		ssize_t i = row_find(t, tids[k]);
		stopped[k] = i >= 0 && t->rows[i].state == RS_HELD;
		count += stopped[k];
	}
	return count;
}

size_t target_sample_threads(struct target *t, const struct target_round *r)
{
	return t->detached ? 0 : collect_stops(t, r->tids, r->n, r->nspin, r->timeout_ns, r->spin_ns,
					       r->fn, r->ctx);
}

void target_set_late_sample(struct target *t, void (*fn)(void *ctx, pid_t tid),
			    void (*done)(void *ctx), void *ctx)
{
	t->late_fn = fn;
	t->late_done = done;
	t->late_ctx = ctx;
}

int target_get_regs(struct target *t, pid_t tid, struct user_regs_struct *regs)
{
	ssize_t i = row_find(t, tid);
	if (i < 0 || t->rows[i].state != RS_HELD) {
		errno = ESRCH;
		return -1;
	}
	if (t->regs_tid == tid) {
		*regs = t->regs;
		return 0;
	}
	if (pt(PTRACE_GETREGS, tid, 0, (unsigned long)regs) < 0)
		return -1;
	/* kept for resume_held's look at the stop (one thread is held and
	 * resumed at a time while sampling) */
	t->regs = *regs;
	t->regs_tid = tid;
	return 0;
}

void target_resume_threads(struct target *t, const pid_t *tids, size_t n, const bool *stopped)
{
	for (size_t k = 0; k < n; k++) {
		if (!stopped[k])
			continue;
		ssize_t i = row_find(t, tids[k]);
		if (i >= 0 && t->rows[i].state == RS_HELD)
			resume_held(t, (size_t)i, tids[k]);
	}
}

void target_thread_gone(struct target *t, pid_t tid)
{
	ssize_t i = row_find(t, tid);
	if (i < 0 || t->detached || !t->rows[i].traced)
		return;
	int status;
	pid_t r = waitpid(tid, &status, __WALL | WNOHANG);
	if (r == tid) {
		handle_report(t, tid, status);
	} else if (r < 0 && errno == ECHILD) {
		/* not a tracee of ours any more: its end was never reported */
		if (t->cfg.verbose)
			warn("target: thread %d is gone without a report; forgotten", (int)tid);
		pid_t pid = t->pub[i].pid;
		row_remove(t, (size_t)i, true);
		if (tid == pid)
			remove_process(t, pid, true);
	}
}

/* ---- detaching ------------------------------------------------------------------------ */

void target_detach(struct target *t)
{
	if (!t || t->detached)
		return;
	/* A launched program not started yet: let it exit without running. */
	if (t->go_fd >= 0) {
		close(t->go_fd);
		t->go_fd = -1;
	}
	if (t->cfg.verbose && t->restarted)
		warn("restarted %llu system call%s that an interrupt ended with EINTR", t->restarted,
		     t->restarted == 1 ? "" : "s");
	/* Nothing to ask of the kernel: the tracees are let go when the
	 * tracer thread exits, each as it is (tracer.h). */
	t->nrows = 0;
	t->ncollect = 0;
	t->nexpect = 0;
	tidmap_clear(&t->index);
	t->detached = true;
}

void target_free(struct target *t)
{
	if (!t)
		return;
	target_detach(t);
	if (t->go_fd >= 0)
		close(t->go_fd);
	if (t->err_fd >= 0)
		close(t->err_fd);
	if (t->stat_fd >= 0)
		close(t->stat_fd);
	free(t->cmd_name);
	free(t->rows);
	free(t->pub);
	tidmap_free(&t->index);
	free(t->expect);
	free(t);
}
