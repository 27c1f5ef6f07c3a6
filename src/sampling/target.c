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
 *   HELD        in an interrupt- or event-stop we own (never a
 *               signal-delivery-stop: one that comes while we collect is
 *               resumed with its signal at once and interrupted again,
 *               so that no signal is ever ours alone: tg_wait_tracee)
 * Every report from waitpid goes through tg_handle_report(), whatever we were
 * waiting for, so a tracee never sits in a stop longer than one drain.
 *
 * Kernel facts this relies on (ptrace(2), kernel/signal.c):
 *   - any ptrace-stop consumes a pending PTRACE_INTERRUPT, so a thread we
 *     interrupt may report a signal-delivery-stop or an event stop instead;
 *     each of those answers it (a signal-delivery-stop is resumed with its
 *     signal and interrupted again: the sample is taken at that stop);
 *   - a stop that was already queued when we interrupted leaves the interrupt
 *     pending: it surfaces later as an extra PTRACE_EVENT_STOP/SIGTRAP, which
 *     we simply continue;
 *   - the signal of a signal-delivery-stop stays in the thread (exit_code)
 *     until a wait takes the report, and is then the tracer's alone: its
 *     report is only looked at (WNOWAIT), and the thread resumed with it
 *     at once (tg_wait_tracee, dispose_stop);
 *   - the initial stop of an auto-attached thread is PTRACE_EVENT_STOP with
 *     SIGTRAP and may be reported before the parent's clone event;
 *   - when the tracer thread exits, the kernel detaches every tracee without
 *     stopping or waking it (tracer.h): that is target_detach, so no thread
 *     blocked in a system call is ever interrupted to be let go;
 *   - a thread that blocked in a system call after its state was read 'R'
 *     is woken by our interrupt; the calls that return a bare EINTR then
 *     (epoll_wait, sigtimedwait, a socket read with a timeout...) are
 *     restarted at the interrupt-stop, as the kernel restarts its own
 *     (see tg_restart_interrupted_call). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "error.h"
#include "procfs.h"
#include "target_internal.h"

/* ---- small helpers ------------------------------------------------------------- */

long tg_ptrace(int req, pid_t tid, unsigned long addr, unsigned long data)
{
	return ptrace((enum __ptrace_request)req, tid, (void *)addr, (void *)data);
}

char tg_state_letter(const char *status)
{
	const char *s = procfs_status_field(status, "State");
	return s ? *s : '?';
}

bool tg_is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* The comm of PID (for messages), or "?". Non-printable bytes become '?'. */
void tg_read_comm(pid_t pid, char *out, size_t size)
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
bool tg_elf_is_32bit(const char *path)
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
bool tg_process_is_32bit(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
	return tg_elf_is_32bit(path);
}

/* ---- the thread table ------------------------------------------------------------ */

void tg_emit(struct target *t, enum target_event_kind kind, pid_t pid, pid_t tid)
{
	if (t->cfg.verbose >= 3)
		warn("target: event %d pid %d tid %d", (int)kind, (int)pid, (int)tid);
	if (t->cfg.on_event) {
		struct target_event ev = { .kind = kind, .pid = pid, .tid = tid };
		t->cfg.on_event(t->cfg.ctx, &ev);
	}
}

/* ---- the rows, and their index by tid ---------------------------------------------- */

ssize_t tg_row_find(const struct target *t, pid_t tid)
{
	uint32_t row;
	return tidmap_get(&t->index, tid, &row) ? (ssize_t)row : -1;
}

bool tg_process_known(const struct target *t, pid_t pid)
{
	for (size_t i = 0; i < t->nrows; i++)
		if (t->pub[i].pid == pid)
			return true;
	return false;
}

void tg_row_set_state(struct target *t, size_t i, enum row_state st)
{
	if (t->rows[i].state == RS_COLLECT)
		t->ncollect--;
	if (t->rows[i].state == RS_HELD)
		t->nheld--;
	if (st == RS_COLLECT)
		t->ncollect++;
	if (st == RS_HELD)
		t->nheld++;
	t->rows[i].state = st;
}

/* Add a row; returns its index or -1 when memory runs out. */
ssize_t tg_row_add(struct target *t, pid_t pid, pid_t tid, bool traced)
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

void tg_ghost_add(struct target *t, pid_t tid)
{
	t->ghosts[t->ghost_next++ % GHOSTS] = tid;
}

bool tg_ghost_take(struct target *t, pid_t tid)
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
void tg_row_remove(struct target *t, size_t i, bool announce)
{
	pid_t pid = t->pub[i].pid, tid = t->pub[i].tid;
	if (t->rows[i].state == RS_COLLECT)
		t->ncollect--;
	if (t->rows[i].state == RS_HELD)
		t->nheld--;
	if (!t->rows[i].clone_seen)
		tg_ghost_add(t, tid);
	tg_release_children(t, tid);
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
	tg_emit(t, TARGET_EV_THREAD_EXIT, pid, tid);
	if (!tg_process_known(t, pid))
		tg_emit(t, TARGET_EV_PROCESS_EXIT, pid, pid);
}

/* Drop every row of process PID. */
void tg_remove_process(struct target *t, pid_t pid, bool announce)
{
	for (size_t i = t->nrows; i-- > 0;)
		if (t->pub[i].pid == pid)
			tg_row_remove(t, i, announce);
}
/* ---- the event loop ------------------------------------------------------------------ */

void target_note_sigchld(struct target *t, pid_t sender)
{
	tg_note_sigchld(t, sender);
}

int target_poll(struct target *t)
{
	/* The caller took a SIGCHLD: others may hide behind it. */
	t->maybe_hidden = true;
	int n = tg_drain_all(t);
	tg_rescan_tasks(t);
	return n;
}

int target_poll_pending(struct target *t)
{
	/* per-sample mode: end_collect does not drain; always look */
	int n = tg_report_may_wait(t) ? tg_drain_all(t) : 0;
	tg_rescan_tasks(t);
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
	return t->exit_status;
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

/* Per-sample mode, or a loose row without children: seize row I to
 * interrupt it. A loose row's children are read once more just before:
 * the read that made it stoppable may be 50 us old, and a child forked
 * since, unreported, could end while it is stopped (once seized, its forks
 * are reported: target_forks.c). */
static bool seize_for_sample(struct target *t, size_t i)
{
	pid_t tid = t->pub[i].tid;
	unsigned long options = t->rows[i].loose ? t->options : PTRACE_O_TRACEEXEC;
	if (t->rows[i].loose && procfs_thread_has_child(t->pub[i].pid, tid, 0)) {
		t->rows[i].children_seen_ns = t->rows[i].stoppable_read_ns =
			(long long)clock_monotonic_ns();
		t->rows[i].stoppable = false;
		errno = EAGAIN;
		return false;
	}
	if (tg_ptrace(PTRACE_SEIZE, tid, 0, options) < 0)
		return false;
	t->rows[i].traced = true;
	return true;
}

/* Interrupt the given threads (seizing them first in per-sample mode); the
 * ones interrupted are in RS_COLLECT. */
static void interrupt_threads(struct target *t, const pid_t *tids, size_t n)
{
	bool persistent = t->cfg.mode == TARGET_SEIZE_PERSISTENT;
	if (!persistent) {
		tg_rescan_tasks(t);
	} else {
		if (tg_sigchld_pending())
			tg_drain_all(t);  /* (a due full pass waits for the end of the tick) */
		tg_check_loose(t);
		tg_release_stale_children(t);
	}

	for (size_t k = 0; k < n; k++) {
		ssize_t i = tg_row_find(t, tids[k]);
		if (i < 0 || t->rows[i].state != RS_RUNNING || !tg_row_stoppable(t, (size_t)i))
			continue;
		if (!t->rows[i].traced) {
			if (!seize_for_sample(t, (size_t)i)) {
				if (errno == ESRCH && persistent)   /* (a loose thread ended) */
					tg_row_remove(t, (size_t)i, true);
				continue;
			}
		} else if (t->rows[i].intr_out) {
			/* Still owes us a stop from before (a new thread, or one
			 * in uninterruptible sleep): do not wait on it again,
			 * but in a hold of all (tg_hold_threads' OWED), whose
			 * interrupt that stop answers. */
			if (t->hold_owed)
				tg_row_set_state(t, (size_t)i, RS_COLLECT);
			continue;
		}
		if (tg_ptrace(PTRACE_INTERRUPT, tids[k], 0, 0) < 0) {
			if (errno == ESRCH && persistent)
				tg_row_remove(t, (size_t)i, true);
			continue;
		}
		t->rows[i].intr_out = true;
		tg_row_set_state(t, (size_t)i, RS_COLLECT);
	}
}

/* Those that did not stop in time: their stop comes later and is continued
 * (or detached) then; after a sampling round (SAMPLING), it is offered to
 * the late-sample hook first. */
static void end_collect(struct target *t, const pid_t *tids, size_t n, bool sampling)
{
	for (size_t k = 0; k < n && t->ncollect > 0; k++) {
		ssize_t i = tg_row_find(t, tids[k]);
		if (i >= 0 && t->rows[i].state == RS_COLLECT) {
			tg_row_set_state(t, (size_t)i, RS_RUNNING);
			t->rows[i].sample_out = sampling;
			tg_expect_stop(t, tids[k]);
		}
	}
	if (t->cfg.mode == TARGET_SEIZE_PERSISTENT) {
		/* The round's stops raised SIGCHLD: take it (drain does),
		 * and handle the reports it may stand for, so the caller is
		 * not woken for them. */
		tg_drain_all(t);
	}
}

/* Resume held row I (tid TID). */
void tg_resume_held(struct target *t, size_t i, pid_t tid)
{
	t->regs_tid = 0;
	if (tg_row_lets_go(t, i)) {
		tg_detach_now(t, (ssize_t)i, tid, 0);
		return;
	}
	tg_row_set_state(t, i, RS_RUNNING);
	tg_cont(t, tid, 0);
}

void tg_cont(struct target *t, pid_t tid, int sig)
{
	if (tg_ptrace(PTRACE_CONT, tid, 0, (unsigned long)sig) < 0 && errno != ESRCH && t->cfg.verbose)
		warn_errno("target: cannot resume thread %d", (int)tid);
}

/* Interrupt R's threads (then call R's SENT) and wait up to its timeout
 * for their stops. With its FN, each thread that stops is handed to FN and
 * resumed at once (a sampling round); without, the stopped threads are
 * held. Returns how many FN was called for. */
static size_t collect_stops(struct target *t, const struct target_round *r)
{
	const pid_t *tids = r->tids;
	size_t n = r->n, sampled = 0;
	/* --children: ends of processes left unreaped are reaped now, before
	 * this round's stops (target_reap.c) */
	if (tg_reap_due(t))
		tg_drain_all(t);
	interrupt_threads(t, tids, n);
	if (r->not_sent)
		for (size_t k = 0; k < n; k++) {
			ssize_t i = tg_row_find(t, tids[k]);
			if (i < 0 || (t->rows[i].state != RS_COLLECT && !t->rows[i].sample_out))
				r->not_sent(r->ctx, k, tids[k]);
		}
	if (r->sent)
		r->sent(r->ctx);
	long long deadline = (long long)clock_monotonic_ns() + r->timeout_ns;
	while (t->ncollect > 0) {
		int status;
		pid_t tid = tg_wait_report_spin(t, &status, deadline, r->spin_ns, tids, n, r->nspin);
		if (tid <= 0)
			break;
		tg_handle_report(t, tid, status);
		ssize_t i = tg_row_find(t, tid);
		if (!r->fn || i < 0 || t->rows[i].state != RS_HELD)
			continue;
		for (size_t k = 0; k < n; k++)
			if (tids[k] == tid) {
				struct user_regs_struct regs;
				bool read = target_get_regs(t, tid, &regs) == 0;
				r->fn(r->ctx, k, tid, read ? &regs : NULL);
				sampled++;
				break;
			}
		i = tg_row_find(t, tid);
		if (i >= 0 && t->rows[i].state == RS_HELD)
			tg_resume_held(t, (size_t)i, tid);
	}
	end_collect(t, tids, n, r->fn != NULL);
	return sampled;
}

size_t tg_hold_threads(struct target *t, const pid_t *tids, size_t n, bool *stopped,
		       long long timeout_ns, bool owed)
{
	size_t count = 0;
	for (size_t k = 0; k < n; k++)
		stopped[k] = false;
	if (t->detached)
		return 0;
	struct target_round hold = { .tids = tids, .n = n, .nspin = n, .spin_ns = SPIN_NS,
				     .timeout_ns = timeout_ns };
	t->hold_owed = owed;
	collect_stops(t, &hold);
	t->hold_owed = false;
	for (size_t k = 0; k < n; k++) {
		ssize_t i = tg_row_find(t, tids[k]);
		stopped[k] = i >= 0 && t->rows[i].state == RS_HELD;
		count += stopped[k];
	}
	return count;
}

size_t target_stop_threads(struct target *t, const pid_t *tids, size_t n, bool *stopped)
{
	return tg_hold_threads(t, tids, n, stopped, TARGET_STOP_TIMEOUT_NS, false);
}

size_t target_sample_threads(struct target *t, const struct target_round *r)
{
	return t->detached ? 0 : collect_stops(t, r);
}

void target_set_late_sample(struct target *t, target_late_fn fn, void (*done)(void *ctx),
			    void *ctx)
{
	t->late_fn = fn;
	t->late_done = done;
	t->late_ctx = ctx;
}

int target_get_regs(struct target *t, pid_t tid, struct user_regs_struct *regs)
{
	ssize_t i = tg_row_find(t, tid);
	if (i < 0 || t->rows[i].state != RS_HELD) {
		errno = ESRCH;
		return -1;
	}
	if (t->regs_tid == tid) {
		*regs = t->regs;
		return 0;
	}
	if (tg_ptrace(PTRACE_GETREGS, tid, 0, (unsigned long)regs) < 0)
		return -1;
	/* kept for tg_resume_held's look at the stop (one thread is held and
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
		ssize_t i = tg_row_find(t, tids[k]);
		if (i >= 0 && t->rows[i].state == RS_HELD)
			tg_resume_held(t, (size_t)i, tids[k]);
	}
}

bool target_thread_stoppable(struct target *t, pid_t tid)
{
	ssize_t i = tg_row_find(t, tid);
	return i < 0 || tg_row_stoppable(t, (size_t)i);
}

void target_thread_gone(struct target *t, pid_t tid)
{
	ssize_t i = tg_row_find(t, tid);
	if (i < 0 || t->detached)
		return;
	if (!t->rows[i].traced) {
		/* a loose thread's end is reported to nobody */
		if (t->rows[i].loose && syscall(SYS_tgkill, t->pub[i].pid, tid, 0) < 0 &&
		    errno == ESRCH)
			tg_row_remove(t, (size_t)i, true);
		return;
	}
	int status;
	pid_t r = tg_wait_tracee(t, tid, &status);
	if (r == tid) {
		tg_handle_report(t, tid, status);
	} else if (r < 0 && errno == ECHILD) {
		/* not a tracee of ours any more: its end was never reported */
		if (t->cfg.verbose)
			warn("target: thread %d is gone without a report; forgotten", (int)tid);
		pid_t pid = t->pub[i].pid;
		tg_row_remove(t, (size_t)i, true);
		if (tid == pid)
			tg_remove_process(t, pid, true);
	}
}

/* ---- detaching ------------------------------------------------------------------------ */

/* The stops still owed for our interrupts (a round gave up waiting). A
 * thread our interrupt woke from a blocked call is in, or on its way to,
 * its interrupt-stop with EINTR as the call's result: let go there, by the
 * tracer thread's exit, it would return EINTR to the program. So take each
 * such stop and resume it the usual way, which restarts the call
 * (tg_restart_interrupted_call); threads held by us are resumed too. A
 * thread that does not stop within SETTLE_TIMEOUT_NS is left to the exit:
 * it is not in an interruptible wait (uninterruptible sleep, or not
 * scheduled), so its pending interrupt is cancelled without an EINTR. */
static void settle_owed_stops(struct target *t)
{
	t->late_fn = NULL;  /* the session is ending: these are not samples */
	t->late_done = NULL;
	long long deadline = (long long)clock_monotonic_ns() + SETTLE_TIMEOUT_NS;
	size_t settled = 0;
	unsigned long long restarted = t->restarted;
	for (;;) {
		size_t owed = 0, before = settled;
		for (size_t i = 0; i < t->nrows; i++) {
			pid_t tid = t->pub[i].tid;
			if (!t->rows[i].traced)
				continue;
			if (t->rows[i].state == RS_HELD) {
				tg_resume_held(t, i, tid);
				settled++;
				continue;
			}
			/* (a thread a child is held for owes its fork event) */
			if (!t->rows[i].intr_out && !t->rows[i].sample_out &&
			    !tg_children_parked(t, tid))
				continue;
			int status;
			pid_t r = tg_wait_tracee(t, tid, &status);
			if (r == tid) {
				tg_handle_report(t, tid, status);
				settled++;
			} else if (r < 0 && errno == ECHILD) {
				t->rows[i].intr_out = t->rows[i].sample_out = false;
				tg_release_children(t, tid);
			} else {
				owed++;
			}
		}
		long long left = deadline - (long long)clock_monotonic_ns();
		if (settled > before && left > 0)
			continue;  /* a report may have moved or added rows: look again */
		if (owed == 0 || left <= 0)
			break;
		/* until a SIGCHLD or a millisecond (one may have merged) */
		struct timespec ts = { 0, left < 1000000 ? (long)left : 1000000L };
		siginfo_t si;
		if (sigtimedwait(&t->sigchld, &si, &ts) == SIGCHLD)
			tg_note_sigchld(t, si.si_pid);
	}
	if (t->cfg.verbose >= 2 && settled)
		warn("target: took %zu stop%s owed for interrupts before letting go (%llu call%s "
		     "restarted)", settled, settled == 1 ? "" : "s", t->restarted - restarted,
		     t->restarted - restarted == 1 ? "" : "s");
}

void target_detach(struct target *t)
{
	if (!t || t->detached)
		return;
	/* (the hold's interrupts may leave stops owed: settled after it) */
	tg_reap_at_detach(t);
	settle_owed_stops(t);
	tg_release_children(t, 0);   /* (whose parent did not report in time) */
	/* A launched program not started yet: let it exit without running. */
	if (t->go_fd >= 0) {
		close(t->go_fd);
		t->go_fd = -1;
	}
	if (t->cfg.verbose && t->restarted)
		warn("restarted %llu system call%s that an interrupt ended with EINTR", t->restarted,
		     t->restarted == 1 ? "" : "s");
	if (t->cfg.verbose && t->stray_caught)
		warn("stopped %llu runnable thread%s after another took a signal queued only because "
		     "the process is traced (a call it woke runs again)", t->stray_caught,
		     t->stray_caught == 1 ? "" : "s");
	if (t->cfg.verbose && t->held_reaps)
		warn("reaped %llu child process%s with the threads of %s parent stopped (so that its "
		     "SIGCHLD, queued only because the parent is traced, woke none of them)",
		     t->held_reaps, t->held_reaps == 1 ? "" : "es", t->held_reaps == 1 ? "its" : "their");
	if (t->cfg.verbose && t->loosened)
		warn("let threads go %llu time%s while they had child processes, %llu at a fork "
		     "before the child ran (a child's SIGCHLD is then dropped, as for a process "
		     "nobody traces, and wakes no other thread)", t->loosened,
		     t->loosened == 1 ? "" : "s", t->fork_loosened);
	/* Nothing to ask of the kernel: the tracees are let go when the
	 * tracer thread exits, each as it is (tracer.h). */
	t->nrows = 0;
	t->ncollect = t->nheld = 0;
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

int target_wait_exit(struct target *t)
{
	while (!target_done(t)) {
		int status;
		pid_t pid = waitpid(t->main_pid, &status, 0);
		if (pid < 0 && errno != EINTR)
			break;
		if (pid > 0)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	}
	return target_exit_status(t);
}
