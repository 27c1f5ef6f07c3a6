/* session: the start and end of a sampling session (see session.h). */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "clock.h"
#include "error.h"
#include "session.h"
#include "tempfile.h"

/* -t: one more of the chosen threads is gone (TID; 0: all of them). */
static void chosen_gone(struct session *s, pid_t tid)
{
	for (size_t i = 0; i < s->cfg.ntids; i++)
		if (!s->chosen_gone[i] && (tid == 0 || s->cfg.tids[i] == tid)) {
			s->chosen_gone[i] = true;
			s->chosen_left--;
		}
}

static void on_target_event(void *ctx, const struct target_event *ev)
{
	struct session *s = ctx;
	if (ev->kind == TARGET_EV_THREAD_EXIT)
		chosen_gone(s, ev->tid);
	else if (ev->kind == TARGET_EV_PROCESS_EXIT)
		chosen_gone(s, 0);
	if (s->backend)
		backend_on_event(s->backend, ev);
	if (s->on_event)
		s->on_event(s->ctx, ev);
}

/* Sampling keeps two or three /proc files open per thread: raise the soft
 * limit on open files to the hard one. Done after the launch fork, so a
 * launched program keeps the limit it was given. */
static void raise_fd_limit(int verbose)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= rl.rlim_max)
		return;
	rlim_t was = rl.rlim_cur;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) == 0 && verbose)
		warn("raised the open file limit from %llu to %llu", (unsigned long long)was,
		     (unsigned long long)rl.rlim_max);
}

/* The stackmap spills and the writers sort through scratch files: make
 * sure one can be made and written before the target is touched, not after
 * the run (samples that cannot be spilled would be lost). */
static int check_scratch_space(void)
{
	char page[4096] = { 0 };
	int fd = tempfile_open(NULL, "check");
	int ok = fd >= 0 && tempfile_write_at(fd, page, sizeof page, 0) == 0;
	int err = errno;
	if (fd >= 0)
		close(fd);
	if (ok)
		return 0;
	errno = err;
	warn_errno("cannot write scratch files in %s (TMPDIR); set TMPDIR to a writable directory "
		   "with free space", tempfile_dir());
	return -1;
}

static void detach_on_die(void *arg)
{
	struct session *s = arg;
	target_detach(s->target);
	if (s->on_die)
		s->on_die(s->ctx);
}

int session_exit_status(int target_error)
{
	switch ((enum target_error)target_error) {
	case TARGET_OK:             return CS_EXIT_OK;
	case TARGET_ERR_NO_PROCESS: return CS_EXIT_NO_PROCESS;
	case TARGET_ERR_BAD_TARGET: return CS_EXIT_BAD_TARGET;
	case TARGET_ERR_PERMISSION: return CS_EXIT_PERMISSION;
	case TARGET_ERR_TRACED:     return CS_EXIT_TRACED;
	case TARGET_ERR_RESOURCE:   return CS_EXIT_SYSTEM;
	case TARGET_ERR_NOT_EXEC:   return CS_EXIT_NOT_EXEC;
	case TARGET_ERR_NOT_FOUND:  return CS_EXIT_NOT_FOUND;
	case TARGET_ERR_FAILED:     break;
	}
	return CS_EXIT_FAILURE;
}

void session_stop_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGQUIT);
}

void session_recorder_config(const struct session_config *c, struct recorder_config *out)
{
	*out = (struct recorder_config){
		.max_depth = c->max_depth, .python = c->python,
		.kernel_in_place = c->kernel && c->idle,
		/* (a window that grows starts at stack_window; a fixed one is
		 * the backend's capacity) */
		.stack_window = c->window_grows ? c->stack_window : 0,
		.verbose = c->verbose, .tell = c->tell,
	};
}

int session_open(struct session *s, const struct session_config *cfg, int extra_signal)
{
	sigset_t mask, stop;

	memset(s, 0, sizeof *s);
	s->cfg = *cfg;
	session_stop_signals(&stop);
	mask = stop;
	sigaddset(&mask, SIGCHLD);
	if (extra_signal)
		sigaddset(&mask, extra_signal);
	if (check_scratch_space() < 0)
		return CS_EXIT_SYSTEM;
	sigprocmask(SIG_BLOCK, &mask, &s->oldmask);
	s->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (s->sigfd < 0) {
		warn_errno("cannot set up sampling");
		sigprocmask(SIG_SETMASK, &s->oldmask, NULL);
		return CS_EXIT_SYSTEM;
	}
	return 0;
}

int session_attach(struct session *s, size_t max_stacks,
		   void (*on_event)(void *ctx, const struct target_event *ev),
		   void (*on_die)(void *ctx), void *ctx)
{
	const struct session_config *o = &s->cfg;
	struct target_config cfg = {
		.children = o->children, .mode = o->seize_mode,
		.on_event = on_target_event, .ctx = s, .verbose = o->verbose,
		.stdout_fd = -1,
		/* on-CPU: a thread's last CPU time is read at its exit (the
		 * outputs give each process the kernel's account of it) */
		.exit_events = !o->idle,
	};
	/* The profile goes to standard output: the program's own output must
	 * not mix into it, so it goes to standard error. */
	if (o->command && !s->reattach_pid && o->profile_to_stdout)
		cfg.stdout_fd = STDERR_FILENO;
	if (cfg.stdout_fd >= 0 && !o->quiet)
		fprintf(stderr, "csampler: %s's standard output goes to standard error: standard "
			"output carries the profile\n", o->command[0]);
	struct backend_config bc = {
		.rate = o->rate, .idle = o->idle, .max_depth = o->max_depth,
		.stack_window = o->stack_window, .window_grows = o->window_grows,
		.verbose = o->verbose, .kernel = o->kernel,
		.tids = o->tids, .ntids = o->ntids, .launched = o->command && !s->reattach_pid,
	};
	memset(s->chosen_gone, 0, sizeof s->chosen_gone);
	s->chosen_left = o->ntids;

	s->on_event = on_event;
	s->on_die = on_die;
	s->ctx = ctx;
	int status = session_exit_status(
		s->reattach_pid ? target_attach(&s->target, s->reattach_pid, &cfg) :
		o->command ? target_launch(&s->target, o->command, &cfg) :
		target_attach(&s->target, o->pid, &cfg));
	if (status != 0)
		return status;
	error_set_cleanup(detach_on_die, s);
	raise_fd_limit(o->verbose);
	if (!s->recorder) {  /* else the caller's, counting into its sinks */
		s->map = stackmap_new(max_stacks, o->max_depth);
		struct recorder_config rc;
		session_recorder_config(o, &rc);
		s->recorder = s->map ? recorder_new(s->map, &rc) : NULL;
		s->owns_recorder = true;
	}
	if (!s->recorder) {
		warn_errno("cannot set up sampling");
		session_detach(s);
		return CS_EXIT_SYSTEM;
	}
	/* each thread stops at its exit, where its last CPU is read: the
	 * accounts are whole (a thread killed by SIGKILL, which does not
	 * stop, is the exception) */
	const struct backend_caps *caps = backend_caps(o->backend);
	if (caps && caps->reads_exits && cfg.exit_events && o->seize_mode == TARGET_SEIZE_PERSISTENT)
		recorder_set_account_whole(s->recorder);
	s->backend = backend_new(o->backend, s->target, s->recorder, &bc, &status);
	if (!s->backend) {  /* (said) */
		session_detach(s);
		return status;
	}
	pid_t pid = target_main_pid(s->target);
	backend_on_event(s->backend, &(struct target_event){ TARGET_EV_PROCESS_NEW, pid, pid });
	/* -t: a chosen thread that ended before the attach is gone already */
	const struct target_thread *tl;
	size_t n = target_threads(s->target, &tl);
	for (size_t i = 0; i < o->ntids; i++) {
		size_t k = 0;
		while (k < n && tl[k].tid != o->tids[i])
			k++;
		if (k == n)
			chosen_gone(s, o->tids[i]);
	}
	return 0;
}

void session_detach(struct session *s)
{
	/* The kernel's samples end with sampling, not after the detach: what
	 * the rings hold is counted, then the events are closed; a backend
	 * that stops threads closes its files once they are let go. Once
	 * either way (perf's second read of every thread, after the detach
	 * of 10,000, put CPU past the run on them). */
	bool early = s->backend && backend_caps_of(s->backend)->ends_with_sampling;
	if (early)
		backend_close_threads(s->backend);
	target_detach(s->target);
	if (s->backend && !early)
		backend_close_threads(s->backend);
}

void session_release_target(struct session *s)
{
	error_set_cleanup(NULL, NULL);
	s->reattach_pid = target_main_pid(s->target);
	backend_free(s->backend);
	s->backend = NULL;
	if (s->cfg.command && !s->launched)
		s->launched = s->target;
	else
		target_free(s->target);
	s->target = NULL;
}

int session_program_status(struct session *s)
{
	int seen = s->target ? target_exit_status(s->target) : -1;
	if (seen >= 0)
		return seen;
	return target_wait_exit(s->launched ? s->launched : s->target);
}

void session_drop_signals(struct session *s)
{
	struct signalfd_siginfo si;
	while (s->sigfd >= 0 && read(s->sigfd, &si, sizeof si) == (ssize_t)sizeof si)
		;
}

void session_end(struct session *s)
{
	error_set_cleanup(NULL, NULL);
	backend_free(s->backend);
	if (s->owns_recorder)  /* never the caller's, even when the attach failed */
		recorder_free(s->recorder);
	stackmap_free(s->map);
	target_free(s->target);
	target_free(s->launched);
	if (s->sigfd >= 0)
		close(s->sigfd);
	sigprocmask(SIG_SETMASK, &s->oldmask, NULL);
	memset(s, 0, sizeof *s);
	s->sigfd = -1;
}

/* ---- the loop -------------------------------------------------------------------------- */

/* Read the signals queued on the signalfd; true when the loop must end. */
static bool take_signals(struct session *s, const struct session_hooks *h)
{
	struct signalfd_siginfo si;
	sigset_t stop;
	bool end = false;
	session_stop_signals(&stop);
	while (read(s->sigfd, &si, sizeof si) == (ssize_t)sizeof si) {
		int signo = (int)si.ssi_signo;
		if (signo == SIGCHLD)
			target_note_sigchld(s->target, (pid_t)si.ssi_pid);
		else if (sigismember(&stop, signo) == 1)
			end |= h->on_stop_signal ? h->on_stop_signal(h->ctx, signo) : true;
		else if (h->on_extra_signal)
			end |= h->on_extra_signal(h->ctx, signo);
	}
	return end;
}

/* The session's clock: a backend's sampling rounds at the sampling rate;
 * a backend whose ticks only read what the kernel sampled, as its reads
 * need. Both real-time as asked: a read that waits for a CPU lets the
 * kernel's rings fill and lose what it sampled (mariadbd under sysbench,
 * 999 Hz: 2,500-7,300 of 10-13k samples lost in 5-8 s at normal priority,
 * none at SCHED_FIFO 1), and a real-time read at about 66 Hz takes no more
 * from the target than one at normal priority (two busy threads: preempted
 * 520-555 times in 5 s against 555-566; sysbench's rate the same within
 * its noise). *ROUNDS: which. */
static int open_session_clock(struct session *s, struct tick_clock *clk, uint64_t start_ns,
			      const struct session_hooks *h, bool *rounds)
{
	const struct session_config *o = &s->cfg;
	unsigned rate = s->backend ? backend_tick_rate(s->backend, o->rate) : o->rate;
	*rounds = !s->backend || backend_caps_of(s->backend)->own_ticks;
	return clock_open(clk, rate, start_ns, o->rt_priority, o->quiet || h->quiet_clock);
}

enum session_end session_run(struct session *s, uint64_t start_ns, const struct session_hooks *h)
{
	const struct session_config *o = &s->cfg;
	struct tick_clock clk;
	bool rounds;
	if (open_session_clock(s, &clk, start_ns, h, &rounds) < 0) {
		warn_errno("cannot make the sampling clock");
		return SESSION_END_ERROR;
	}
	uint64_t deadline = o->duration > 0 ? start_ns + (uint64_t)(o->duration * 1e9) : 0;
	uint64_t next_second = h->on_second ? start_ns + 1000000000u : 0;
	enum session_end end = SESSION_END_GONE;

	/* (-t: until the threads chosen are all gone) */
	while (!target_done(s->target) && (!o->ntids || s->chosen_left > 0)) {
		uint64_t now = clock_monotonic_ns();
		if (deadline && now >= deadline) {
			end = SESSION_END_DURATION;
			break;
		}
		if (next_second && now >= next_second) {
			/* (what the kernel sampled before the second ends is
			 * that second's: read it first) */
			if ((!rounds && backend_tick(s->backend, now, clk.next_ns) < 0) ||
			    h->on_second(h->ctx, now) < 0) {
				end = SESSION_END_ERROR;
				break;
			}
			next_second += 1000000000u;
			if (next_second <= now)
				next_second = now + 1000000000u;
		}
		uint64_t wake = deadline;
		if (next_second && (!wake || next_second < wake))
			wake = next_second;
		int timeout = wake ? (int)((wake - now + 999999) / 1000000) : -1;
		struct pollfd fds[3] = {
			{ .fd = s->sigfd, .events = POLLIN },
			{ .fd = clk.fd, .events = POLLIN },
			{ .fd = h->on_extra_fd ? h->extra_fd : -1, .events = POLLIN },
		};
		if (poll(fds, 3, timeout) < 0) {
			if (errno == EINTR)
				continue;
			warn_errno("poll");
			end = SESSION_END_ERROR;
			break;
		}
		if (fds[0].revents & POLLIN) {
			bool stop = take_signals(s, h);
			if (target_poll(s->target) < 0) {
				end = SESSION_END_ERROR;
				break;
			}
			if (stop) {
				end = SESSION_END_STOPPED;
				break;
			}
		}
		if (fds[1].revents & POLLIN) {
			uint64_t tick_ns = clk.next_ns;
			backend_note_missed(s->backend, clock_take_tick(&clk));
			if (backend_tick(s->backend, tick_ns, clk.next_ns) < 0) {
				warn("sampling failed: out of memory");
				end = SESSION_END_ERROR;
				break;
			}
			target_poll_pending(s->target);
			recorder_read_maps(s->recorder);
		}
		if (fds[2].revents && h->on_extra_fd(h->ctx, fds[2].revents)) {
			end = SESSION_END_STOPPED;
			break;
		}
	}
	s->ticks_end_ns = clock_monotonic_ns();
	backend_end_ticks(s->backend);
	clock_close(&clk);
	return end;
}
