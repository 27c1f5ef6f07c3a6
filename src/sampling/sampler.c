/* sampler: see sampler.h. The threads it follows, their /proc files and
 * the wheel of their reads are sampler_threads.c's; which threads ran at
 * the tick, and which stops count, sampler_judge.c's (sampler_internal.h).
 *
 * On-CPU mode estimates where CPU time goes, unbiased by construction:
 *   - A tick is a random instant of its period (clock.h), and csampler runs
 *     SCHED_FIFO, so the tick acts at that instant and not when a busy
 *     target thread leaves the CPU.
 *   - At the tick, a thread is a candidate if it may be running now: it
 *     arrived on a CPU or ran since its last read, or was running ('R') at
 *     its last read. (Run time alone cannot tell: the kernel updates a
 *     running thread's total only at scheduler ticks and switches.) The
 *     candidates whose stat says 'R' are interrupted together; 'R' also
 *     means waiting for a CPU (preempted, or woken and not run yet), and
 *     which of them are on a CPU is known before they stop only where the
 *     tick took every CPU they are on (then one that waits is not stopped:
 *     threads_judge_running), so when
 *     there are more than max_per_tick (one per CPU), or more than
 *     MAX_EXAMINED candidates, a random subset with a known probability is
 *     taken, its samples weighted by the inverse (not the ones with the
 *     most CPU unsampled: that choice's probability is unknown).
 *   - A stop says whether the thread was on a CPU at the tick: one that was
 *     waiting for a CPU stops only when it gets one, and its schedstat then
 *     shows the wait (run delay) and the arrival. If that wait began before
 *     the tick's instant, the thread was not running then: its sample is
 *     dropped (stats.dropped_queued). Counting it would charge the time it
 *     waited as CPU time: on a busy host, or a CPU shared with another
 *     process, every thread's CPU would be overstated by the wait (a thread
 *     given half a CPU showed a whole one). A thread preempted after the
 *     tick (by csampler itself, whose tick takes a CPU) was running at it,
 *     and is kept.
 *   - Each sample kept counts one period: the expected count of a thread
 *     and code location is its CPU time there divided by the period. Every
 *     output shows the same count (pprof's cpu value is count x period).
 *   - A thread is read every tick while it runs, and so is every idle one
 *     (it did not run at its last read) while their reads stay within
 *     IDLE_READS_PER_SEC. With more, an idle thread is read with
 *     probability 1/2^k at each tick, k one more at each read that finds
 *     it idle, up to the smallest level that keeps the expected idle reads
 *     within that budget (a process with 10,000 sleeping threads costs
 *     about ten reads per tick, not 10,000), and a sample taken at such a
 *     read counts 2^k periods (Horvitz-Thompson: the expectation stays the
 *     CPU time, as the coin is drawn before the thread is looked at).
 *     The coins are drawn as geometric gaps: each thread waits in a timing
 *     wheel for the tick of its next read (threads_schedule_read).
 *   - Threads are added as target reports them (at attach, then as they
 *     start), with one /proc file (schedstat) open each; a thread's stat
 *     (state, name) is opened when it is first a candidate.
 *   - A stop is not always where the thread was at the tick. A thread
 *     stopped on its way out of a system call in which it waited was not
 *     running there: the call ended by its timeout (a timer that fired with
 *     our tick's: timer slack joins them), or the thread arrived on a CPU
 *     only after the tick (schedstat's arrival count moved: it was woken,
 *     or it blocked after we read 'R' and our stop woke it). Such a sample
 *     is dropped (stats.dropped_waking): counting it would put CPU where
 *     the thread slept. Not so a thread the tick's switch to csampler took
 *     off its CPU (found by /proc/TID/sched's se.exec_start, equal to
 *     csampler's own): it was running, and arrives again only to stop;
 *     and any other thread the read finds on that CPU was waiting for it,
 *     and is not counted wherever it stops. A stop at a preemption point
 *     in user code is kept: the thread was executing there.
 * --idle (wall clock) reads every thread every tick and counts a period for
 * each, running or not: a running one is stopped and copied as above; a
 * sleeping one that has not run since its last sample counts its last stack
 * again; one that ran is copied where it waits, from /proc/TID/syscall's sp
 * and pc and its stack, without a stop (blocked.h), whatever call it waits
 * in, so no blocked call is ever interrupted.
 * A thread in state R may be waiting for a CPU rather than running (more
 * busy threads than CPUs): it stops only when it gets one, after the round
 * gave up on it (2 ms). That late stop is sampled then (target's late-sample
 * hook), where the thread was preempted; until it comes (or LATE_WAIT_NS
 * passes) the thread is not chosen again, so rounds go to other threads.
 * Everything is allocated when a thread or process is first seen. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "blocked.h"
#include "clock.h"
#include "procfs.h"
#include "sampler_internal.h"

/* Stack windows for rounds of up to WANT threads (a window is 64 KiB by
 * default: as many as a round stops, not one per thread). */
static int grow_snaps(struct sampler *s, size_t want)
{
	if (want <= s->nsnaps)
		return 0;
	size_t cap = s->nsnaps ? s->nsnaps : 4;
	while (cap < want)
		cap *= 2;
	struct unwind_snapshot *sn = realloc(s->snaps, cap * sizeof *sn);
	if (!sn)
		return -1;
	s->snaps = sn;
	for (; s->nsnaps < cap; s->nsnaps++)
		if (unwind_snapshot_init(&s->snaps[s->nsnaps], s->cfg.stack_window) < 0)
			return -1;
	return 0;
}

static void capture_late(void *ctx, pid_t tid, const struct user_regs_struct *regs);
static void count_late(void *ctx);

/* ---- public ---------------------------------------------------------------------- */

struct sampler *sampler_new(struct target *t, struct recorder *rec,
			    const struct sampler_config *cfg)
{
	struct sampler *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->target = t;
	s->rec = rec;
	s->cfg = *cfg;
	if (s->cfg.rate == 0)
		s->cfg.rate = CLOCK_DEFAULT_RATE;
	s->period_ns = clock_period_ns(s->cfg.rate);
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	s->ncpus = ncpus > 0 ? (unsigned)ncpus : 1;
	s->max_per_tick = cfg->max_threads_per_tick ? cfg->max_threads_per_tick : s->ncpus;
	while (s->max_skip_level < IDLE_MAX_LEVEL && (2u << s->max_skip_level) <= IDLE_MAX_SKIP &&
	       (2u << s->max_skip_level) * s->period_ns <= IDLE_MAX_SKIP_NS)
		s->max_skip_level++;
	for (unsigned level = 1; level <= IDLE_MAX_LEVEL; level++)
		s->log_miss[level] = log1p(-ldexp(1.0, -(int)level));
	for (size_t i = 0; i < WHEEL; i++)
		s->wheel[i] = NO_SLOT;
	s->rng = clock_random_seed();
	s->self_sched_fd = -1;
	struct rlimit rl;
	s->max_fds = SIZE_MAX;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		s->max_fds = rl.rlim_cur > FD_RESERVE ? (size_t)(rl.rlim_cur - FD_RESERVE) : 0;
	if (threads_grow_scratch(s, 16) < 0 || grow_snaps(s, SUBSET_HARD_MAX * s->max_per_tick) < 0 ||
	    unwind_snapshot_init(&s->late_snap, s->cfg.stack_window) < 0 ||
	    unwind_snapshot_init(&s->blocked_snap, s->cfg.stack_window) < 0) {
		sampler_free(s);
		return NULL;
	}
	target_set_late_sample(t, capture_late, count_late, s);
	/* the threads attached before we were made; later ones come as events */
	threads_take_attached(s);
	return s;
}

void sampler_free(struct sampler *s)
{
	if (!s)
		return;
	target_set_late_sample(s->target, NULL, NULL, NULL);
	sampler_end_ticks(s);
	for (size_t i = 0; i < s->nthreads_cap; i++) {
		if (thread_at(s, i)) {
			switch_clock_close(s, &s->threads[i]);
			threads_close_files(s, &s->threads[i]);
			recorder_unfollow_thread(s->rec, (uint32_t)i);
		}
		free(s->threads[i].last_stack);
	}
	if (s->self_sched_fd >= 0)
		close(s->self_sched_fd);
	free(s->threads);
	free(s->pending);
	free(s->due);
	for (size_t i = 0; i < s->nsnaps; i++)
		unwind_snapshot_fini(&s->snaps[i]);
	free(s->snaps);
	free(s->chosen_tids);
	free(s->chosen);
	free(s->captured);
	unwind_snapshot_fini(&s->late_snap);
	unwind_snapshot_fini(&s->blocked_snap);
	for (size_t i = 0; i < s->task_dirs_cap; i++)
		threads_close_file(s, &s->task_dirs[i]);
	free(s->task_dirs);
	free(s);
}

void sampler_note_missed(struct sampler *s, uint64_t missed)
{
	s->stats.ticks_missed += missed;
	if (s->cfg.idle)
		s->idle_missed += missed;
}

/* Count T's unwound stack, standing for COUNT periods. */
static void count_stack(struct sampler *s, const struct thread_state *t, uint32_t flags,
			const uint64_t *addrs, unsigned depth, unsigned count)
{
	recorder_count(s->rec, thread_id(s, t)->key, flags, addrs, depth, count);
}

static void count_captured(struct sampler *s, struct thread_state *t,
			   const struct unwind_snapshot *snap, unsigned weight);

/* --idle: T is not running. Copy it where it waits, without a stop (no
 * blocked call is interrupted), and count it. Returns false if it runs now
 * (or kept running during the tries): the caller stops it then. */
static bool sample_in_place(struct sampler *s, struct thread_state *t)
{
	struct blocked_syscall bs;
	/* (without its syscall file, it is counted as if it could not be read:
	 * never stopped where it may wait) */
	enum blocked_state st = BLOCKED_MALFORMED;
	const struct recorder_followed *id = thread_id(s, t);
	if (threads_open_file(s, t, "syscall", &t->syscall_fd))
		st = blocked_capture(id->proc->unwinder, id->tid, t->syscall_fd, t->schedstat_fd,
				     &s->blocked_snap, &bs);
	if (st == BLOCKED_RUNNING)
		return false;
	if (st == BLOCKED_IN_KERNEL) {
		s->stats.in_place++;
		threads_read_kernel_stack(s, id, &s->blocked_snap);
		count_captured(s, t, &s->blocked_snap, t->weight);
	} else if (t->has_last) {
		count_stack(s, t, t->last_flags, t->last_stack, t->last_depth, t->weight);
	} else {
		count_stack(s, t, STACK_NOT_CAPTURED, NULL, 0, t->weight);
		s->stats.not_captured++;
	}
	return true;
}

/* On-CPU mode: T ran at the tick and went to sleep before the tick took
 * its CPU (threads_took_cpu): its place at the tick is the call it
 * now waits in. Copied there without a stop, as --idle copies a sleeping
 * thread (no kernel frames: an on-CPU sample is the user side). Returns
 * false if it runs again already (then it is stopped, and its stop at the
 * call's exit is kept). */
static bool sample_asleep(struct sampler *s, struct thread_state *t, unsigned weight)
{
	struct blocked_syscall bs;
	const struct recorder_followed *id = thread_id(s, t);
	enum blocked_state st = BLOCKED_MALFORMED;
	if (threads_open_file(s, t, "syscall", &t->syscall_fd))
		st = blocked_capture(id->proc->unwinder, id->tid, t->syscall_fd, t->schedstat_fd,
				     &s->blocked_snap, &bs);
	if (st == BLOCKED_IN_KERNEL) {
		s->stats.in_place++;
		s->blocked_snap.kernel_n = 0;
		count_captured(s, t, &s->blocked_snap, weight);
	}
	return st != BLOCKED_RUNNING;
}

/* A thread's pause: from our interrupt to its resume. Part of that may be
 * time it spent waiting for a CPU (it was preempted, not running, when
 * interrupted, and stops only when it gets one): when the stop came later
 * than PAUSE_CHECK_NS, or the thread waited for the CPU the round ran on
 * (csampler had taken it), its schedstat run_delay says how long it waited,
 * and that wait is not counted: it is csampler's CPU time, counted as such. */
#define PAUSE_CHECK_NS 50000u

/* How long a round polls for stops (see the choice in the tick). Measured
 * at 4 busy threads on 2 CPUs, 99 Hz: not polling made the pause p99 2.1 ms
 * (waiting to be woken); 15 us 107-180 us, 30 us 90-107 us, 50 us 82-107 us,
 * each step costing about 0.25% of a core more. Only threads on other CPUs
 * are polled for (sample_round): polling for the one csampler took its CPU
 * from cost 25 us a tick (2.5% of a core at 999 Hz) and delayed its stop. */
#define SPIN_IDLE_NS 50000
#define SPIN_BUSY_NS 25000

/* How long a round waits for its threads to stop: until the next tick, but
 * at least ROUND_MIN_WAIT_NS (a thread on a CPU stops within tens of
 * microseconds) and at most ROUND_MAX_WAIT_NS. A thread that takes longer
 * was not on a CPU: it waits for one (more busy threads than CPUs), and its
 * stop is sampled when it comes (capture_late). Waiting 2 ms for it at
 * 999 Hz missed 45% of the ticks with 4 busy threads on 2 CPUs. */
#define ROUND_MIN_WAIT_NS 200000LL
#define ROUND_MAX_WAIT_NS 2000000LL

/* How long a thread whose round gave up on it is left out of the choice,
 * waiting for its late stop (a thread waits for a CPU at most a few
 * scheduler periods; a stop that never comes, e.g. after a signal-stop took
 * its place, must not keep the thread out for good). */
#define LATE_WAIT_NS 200000000u

/* --idle: the most periods without a tick put on one read (csampler
 * stopped for minutes, say: beyond this, its wall time is lost) */
#define IDLE_MISSED_MAX (1u << 20)

/* Unwind a captured stack of T and count it: WEIGHT periods (on-CPU: the
 * inverse of the probability that T was read and interrupted at its tick;
 * --idle: 1, and the periods before it that had no tick). */
static void count_captured(struct sampler *s, struct thread_state *t,
			   const struct unwind_snapshot *snap, unsigned weight)
{
	const uint64_t *addrs;
	unsigned depth;
	uint32_t flags;
	const struct recorder_followed *id = thread_id(s, t);
	flags = t->stop_arrival;
	t->stop_arrival = 0;
	if (flags)
		t->arrival_counted[flags == STACK_PREEMPT] += weight;
	recorder_count_snapshot(s->rec, id->proc, id->key, snap, weight, &addrs, &depth, &flags);
	if (s->cfg.idle)
		threads_keep_last(t, addrs, depth, flags);
}

/* Late-sample hook, while the thread is stopped: copy it. */
static void capture_late(void *ctx, pid_t tid, const struct user_regs_struct *regs)
{
	struct sampler *s = ctx;
	struct thread_state *t = threads_find(s, tid);

	s->late_thread = NULL;
	if (!t || t->retired || !t->late_until_ns)
		return;
	s->late_seen_ns = clock_monotonic_ns();
	t->late_until_ns = 0;
	t->own_stops++;
	t->clock_stops++;
	t->taken_stops += t->intr_our_cpu == TICK_CPU_TAKEN;
	t->stop_arrival = 0;
	if (!regs)
		return;
	if (!s->cfg.idle) {
		if (!threads_keep_stop(s, t, regs, s->late_seen_ns) && !t->stop_arrival)
			return;
		if (!t->stop_arrival)
			threads_count_kept_place(s, t, regs);
	}
	if (recorder_capture(s->rec, thread_id(s, t)->proc, tid, regs, &s->late_snap) == 0)
		s->late_thread = t;
}

/* Late-sample hook, the thread resumed: unwind and count. */
static void count_late(void *ctx)
{
	struct sampler *s = ctx;
	struct thread_state *t = s->late_thread;

	if (!t)
		return;
	s->late_thread = NULL;
	recorder_record_pause(s->rec, s->late_seen_ns, clock_monotonic_ns());
	s->stats.late++;
	count_captured(s, t, &s->late_snap, t->intr_weight);
}

/* target_sample_threads callback: the thread is stopped; copy and return. */
static void capture_thread(void *ctx, size_t index, pid_t tid, const struct user_regs_struct *regs)
{
	struct sampler *s = ctx;
	size_t i = s->round_base + index;
	uint64_t seen = clock_monotonic_ns();

	if (s->chosen[i]->retired)
		return;

	s->chosen[i]->late_until_ns = 0;
	s->chosen[i]->own_stops++;
	s->chosen[i]->clock_stops++;
	s->chosen[i]->taken_stops += s->chosen[i]->intr_our_cpu == TICK_CPU_TAKEN;
	s->chosen[i]->stop_run_delay_read = false;
	s->chosen[i]->stop_arrival = 0;
	s->captured[i] = false;
	if (!regs)
		return;
	bool keep = s->cfg.idle || threads_keep_stop(s, s->chosen[i], regs, seen);
	if (!keep)
		s->round_dropped++;   /* (an arrival too: it ran at no tick) */
	if (keep || s->chosen[i]->stop_arrival) {
		if (keep && !s->cfg.idle)
			threads_count_kept_place(s, s->chosen[i], regs);
		s->captured[i] = recorder_capture(s->rec, thread_id(s, s->chosen[i])->proc, tid, regs,
						  &s->snaps[i]) == 0;
	}
	s->chosen[i]->seen_ns = seen;
	s->chosen[i]->done_ns = clock_monotonic_ns();
}

/* After the round: the pause of T, without the time it waited for a CPU
 * after the interrupt (it was queued since the tick read it, at the latest).
 * Its run delay at the stop was read by judge_stop (on-CPU sampling); with
 * --idle it is read here, where the wait may have mattered. */
static void record_round_pause(struct sampler *s, struct thread_state *t)
{
	uint64_t from = s->round_start_ns;
	struct procfs_schedstat ss;
	bool have = t->stop_run_delay_read;
	uint64_t delay = t->stop_run_delay_ns;

	if (!have && (t->cpu == s->round_cpu || t->seen_ns - s->round_start_ns > PAUSE_CHECK_NS) &&
	    procfs_read_schedstat(t->schedstat_fd, &ss)) {
		have = true;
		delay = ss.run_delay_ns;
	}
	if (have) {
		uint64_t waited = delay > t->run_delay_ns ? delay - t->run_delay_ns : 0;
		uint64_t before = s->round_start_ns - s->tick_start_ns;
		uint64_t after = waited > before ? waited - before : 0;
		from += after < t->seen_ns - s->round_start_ns ? after : t->seen_ns - s->round_start_ns;
	}
	recorder_record_pause(s->rec, from, t->done_ns);
}

/* On-CPU mode: of the candidates chosen[0, n), move those that run now
 * ('R') to the front; returns how many. Those not 'R' are running no
 * longer, but one that ran at the tick and slept before its CPU was taken
 * is copied where it sleeps (W_EXAMINED: the weight of the examined
 * subset, threads_take_subset). */
static size_t find_running(struct sampler *s, size_t n, unsigned w_examined)
{
	size_t end = 0;
	for (size_t i = 0; i < n; i++) {
		struct thread_state *t = s->chosen[i];
		char state = '?';
		bool read = threads_read_stat(s, t, &state);
		t->running = read && state == 'R';
		threads_account_cpu(s, t);
		/* (one that slept after the tick and runs again is stopped where
		 * it woke: its stop is judged by the same window) */
		if (!t->running && read && (state == 'S' || state == 'D') &&
		    threads_took_cpu(s, t) == TICK_CPU_TAKEN)
			t->running = !sample_asleep(s, t, t->weight * w_examined);
		if (t->running) {
			s->chosen[i] = s->chosen[end];
			s->chosen[end++] = t;
		}
	}
	return end;
}

/* The round's interrupts are sent: unless the tick judged its threads
 * already (threads_judge_running: all on CPUs it took), of those whose
 * stat named csampler's CPU (the last of the round, after the NSPIN on
 * other CPUs: sample_round), which did the tick's switch take off it?
 * Asked now, not before the interrupts (the reads take 10-20 us, and a
 * thread on a CPU not taken may enter a call meanwhile and stop at its
 * exit), and before csampler gives up its CPU (the thread would run). */
static void round_sent(void *ctx)
{
	struct sampler *s = ctx;
	if (!s->prejudged) {
		for (size_t i = s->round_base + s->round_nspin; i < s->round_base + s->round_n; i++)
			s->chosen[i]->intr_our_cpu = threads_took_cpu(s, s->chosen[i]);
		/* then those on the CPUs the holders took, which stop where
		 * they were once the holders let go */
		threads_judge_held(s, s->round_base, s->round_nspin);
	}
	holders_release(s->holders, s->tick_ns);
}

/* Round callback: no stop is due (a new thread's first is owed): not late. */
static void round_not_sent(void *ctx, size_t index, pid_t tid)
{
	struct sampler *s = ctx;
	s->chosen[s->round_base + index]->late_until_ns = 0;
	(void)tid;
}

/* Stop chosen[base, base + n) together; copy each as soon as it stops and
 * resume it; then unwind the copies and count them. Until its stop each one
 * is expected late (its stop may come after the round gave up on it, even
 * while the round ends). Returns how many stops were found waiting. */
static size_t sample_round(struct sampler *s, size_t base, size_t n, long long spin_ns)
{
	n = threads_count_unstoppable(s, base, n);
	uint64_t late_until = clock_monotonic_ns() + LATE_WAIT_NS;
	/* Poll only for the threads on other CPUs. One whose stat named ours
	 * was taken off it by csampler (SCHED_FIFO): it cannot stop before
	 * csampler sleeps, and polling for it only lengthens its pause. */
	int here = s->round_cpu = sched_getcpu();
	size_t nspin = 0;
	for (size_t i = base; i < base + n; i++)
		if (here < 0 || s->chosen[i]->cpu != here) {
			struct thread_state *t = s->chosen[i];
			s->chosen[i] = s->chosen[base + nspin];
			s->chosen[base + nspin++] = t;
		}
	for (size_t i = base; i < base + n; i++) {
		struct thread_state *t = s->chosen[i];
		s->chosen_tids[i] = thread_id(s, t)->tid;
		s->captured[i] = false;
		t->late_until_ns = late_until;
		t->intr_tick_ns = s->tick_ns;
		t->intr_run_delay_ns = t->run_delay_ns;
		t->intr_arrivals = t->arrivals;
		if (!s->prejudged)
			t->intr_our_cpu = TICK_CPU_UNKNOWN;  /* (round_sent) */
		t->intr_weight = t->weight;
		t->intr_remote = i < base + nspin;
	}
	s->round_base = base;
	s->round_dropped = 0;
	s->round_start_ns = clock_monotonic_ns();
	/* wait for the stops until the next tick, within the bounds */
	uint64_t now = clock_monotonic_ns();
	long long timeout = ROUND_MAX_WAIT_NS;
	if (s->next_tick_ns > now && s->next_tick_ns - now < (uint64_t)timeout)
		timeout = (long long)(s->next_tick_ns - now);
	if (timeout < ROUND_MIN_WAIT_NS)
		timeout = ROUND_MIN_WAIT_NS;
	s->round_n = n;
	s->round_nspin = nspin;
	struct target_round round = { .tids = &s->chosen_tids[base], .n = n, .nspin = nspin,
				      .spin_ns = spin_ns, .timeout_ns = timeout,
				      .fn = capture_thread, .sent = round_sent,
				      .not_sent = round_not_sent, .ctx = s };
	target_sample_threads(s->target, &round);
	for (size_t i = base; i < base + n; i++)
		if (s->captured[i] && !s->chosen[i]->retired) {
			record_round_pause(s, s->chosen[i]);
			count_captured(s, s->chosen[i], &s->snaps[i], s->chosen[i]->intr_weight);
		}
	return s->round_dropped;
}

/* The tick proper. Not inlined, so that it has a frame of its own in call
 * chains (sampler_no_alloc checks that no allocation happens under it). */
static __attribute__((noinline)) int sampler_tick_locked(struct sampler *s);

int sampler_tick(struct sampler *s, uint64_t tick_ns, uint64_t next_tick_ns)
{
	s->next_tick_ns = next_tick_ns;
	s->tick_ns = tick_ns;
	s->in_tick = true;
	s->ngone = 0;
	threads_hold_cpus(s);
	int ret = sampler_tick_locked(s);
	holders_release(s->holders, tick_ns);  /* (no round, or it failed) */
	s->in_tick = false;
	threads_release_retired(s);
	recorder_release_gone(s->rec);
	/* target's table may change now: the tick holds no pointer into it */
	for (size_t i = 0; i < s->ngone; i++)
		target_thread_gone(s->target, s->gone[i]);
	threads_reserve_next_tick(s);
	return ret;
}

/* --idle: whether T, asleep and not run since its last stack was read,
 * is read again instead of counting that stack: a stack cut short (the
 * walk failed, or left the copied window) is, at its 1st, 2nd, 4th ...
 * 64th time due since T last ran (read_thread starts the count again
 * whenever it ran), for what cut it may pass (a Go thread's m found in
 * runtime.allm at most every 10 ms, the mappings reread at most every
 * 50 ms, a window grown since). */
#define CUT_REREADS_UNTIL 64u
static bool reread_cut(struct thread_state *t)
{
	if (!t->has_last || !(t->last_flags & (STACK_UNWIND_ERROR | STACK_TRUNCATED_WINDOW)) ||
	    t->cut_reuses >= CUT_REREADS_UNTIL)
		return false;
	t->cut_reuses++;
	return (t->cut_reuses & (t->cut_reuses - 1)) == 0;
}

/* Read thread T's run time (it is due this tick); in on-CPU mode make it a
 * candidate if it may be running; in --idle mode count it or choose it. */
static void read_thread(struct sampler *s, struct thread_state *t, uint64_t now, size_t *nchosen)
{
	struct procfs_schedstat ss;
	bool opened = threads_open_file(s, t, "schedstat", &t->schedstat_fd);
	if (!opened && errno != ENOENT && errno != ESRCH)
		return;  /* no descriptor to read it with now: at its next read */
	if (!opened || !procfs_read_schedstat(t->schedstat_fd, &ss)) {
		/* its /proc entry is gone: make sure target knows (the
		 * report of its end may be lost), and forget it */
		if (!t->retired && s->ngone < GONE_PER_TICK) {
			s->gone[s->ngone++] = thread_id(s, t)->tid;
			threads_retire(s, t);
		}
		return;
	}
	bool fresh = t->fresh;
	if (fresh)
		t->arrivals = ss.arrivals;
	/* It got a CPU or ran since the last read (a running thread's
	 * run time is updated only at scheduler events, its arrivals
	 * when it gets a CPU): it may be running now. */
	bool ran = !fresh && (ss.runtime_ns != t->runtime_ns || ss.arrivals != t->arrivals);
	if (ss.arrivals > t->arrivals) {
		/* the target's own switches: our stops left out */
		uint64_t got = ss.arrivals - t->arrivals;
		s->stats.switches += got - (t->own_stops < got ? t->own_stops : got);
	}
	t->own_stops = 0;
	threads_take_runtime(s, t, ss.runtime_ns);
	threads_account_cpu(s, t);
	t->arrivals = ss.arrivals;
	threads_count_wait(s, t, &ss, fresh, ran, now);
	t->run_delay_ns = ss.run_delay_ns;
	bool idle = !ran && !t->running;
	t->ran = ran;
	if (ran)
		t->cut_reuses = 0;
	s->nidle += (size_t)idle - (size_t)t->idle;
	t->idle = idle;
	/* Interrupted by an earlier round, not stopped yet: its stop is
	 * sampled when it comes. A wall-clock profile counts it at this
	 * tick too, where it was last seen. */
	if (t->late_until_ns > now) {
		if (s->cfg.idle && t->has_last)
			count_stack(s, t, t->last_flags, t->last_stack, t->last_depth, t->weight);
		return;
	}
	t->late_until_ns = 0;
	if (!s->cfg.idle) {
		/* a candidate: its state is read below */
		if (ran || t->running)
			s->chosen[(*nchosen)++] = t;
		return;
	}
	char state = '?';
	if (!threads_read_stat(s, t, &state))
		return;
	if (state == 'R') {
		s->chosen[(*nchosen)++] = t;
		return;
	}
	/* --idle: a sleeping thread. Reuse its stack if it has not run
	 * (its stack is as it was; one cut short is read again now and then:
	 * an idle Go M's read just after it started, before its m could be
	 * found, ended at runtime.mcall and was counted so for the whole
	 * sleep, 25-115 samples in 8 of 70 runs on a loaded host), else read
	 * it where it waits. */
	if (!ran && t->has_last && !reread_cut(t)) {
		count_stack(s, t, t->last_flags, t->last_stack, t->last_depth, t->weight);
		return;
	}
	if (!sample_in_place(s, t))
		s->chosen[(*nchosen)++] = t;
}

void threads_account_exit(struct sampler *s, pid_t pid, pid_t tid)
{
	struct procfs_schedstat ss;
	char buf[128];

	if (s->cfg.idle)
		return;
	struct thread_state *t = threads_find(s, tid);
	if (!t) {
		/* born since the last tick and never read (one of ours, queued):
		 * all its CPU, into the pool, with no key made for it (a key
		 * each, and a file opened, for thousands of threads a second),
		 * and it is not added (a tick before its exit is reported read
		 * it afresh and counted all its CPU a second time) */
		if (threads_unqueue(s, tid) && threads_born_while_sampled(s) &&
		    procfs_read_file(pid, tid, "schedstat", buf, sizeof buf) > 0 &&
		    procfs_parse_schedstat(buf, &ss) && ss.runtime_ns)
			recorder_account_unnamed_cpu(s->rec, ss.runtime_ns);
		return;
	}
	if (t->retired || thread_id(s, t)->pid != pid ||
	    !threads_open_file(s, t, "schedstat", &t->schedstat_fd) ||
	    !procfs_read_schedstat(t->schedstat_fd, &ss))
		return;
	threads_take_runtime(s, t, ss.runtime_ns);
	switch_clock_pair(s, t, &ss, false, clock_monotonic_ns());
	/* never a candidate, so never named: no key for it */
	if (thread_id(s, t)->key == UINT32_MAX && t->cpu_unaccounted_ns) {
		recorder_account_unnamed_cpu(s->rec, t->cpu_unaccounted_ns);
		t->cpu_unaccounted_ns = 0;
	}
	threads_account_cpu(s, t);
}

static __attribute__((noinline)) int sampler_tick_locked(struct sampler *s)
{
	uint64_t now = s->tick_start_ns = clock_monotonic_ns();
	uint64_t tick = ++s->stats.ticks;
	size_t nchosen = 0;
	s->prejudged = false;

	if (threads_add_pending(s, tick) < 0 || threads_grow_scratch(s, recorder_nfollowed(s->rec)) < 0)
		return -1;
	threads_set_idle_level(s);

	/* --idle: the periods since the last tick, on each thread followed
	 * then (one born in the gap counts from its first read) */
	unsigned idle_periods = 1 + (unsigned)(s->idle_missed < IDLE_MISSED_MAX ? s->idle_missed
										 : IDLE_MISSED_MAX);
	s->idle_missed = 0;

	/* 1. read the run times of the threads due, choose */
	size_t ndue = threads_take_due(s, tick);
	for (size_t i = 0; i < ndue; i++) {
		struct thread_state *t = &s->threads[s->due[i]];
		/* this read's sample stands for 2^level periods (threads_schedule_read) */
		t->weight = 1u << t->level;
		if (!t->fresh)
			t->weight *= idle_periods;
		read_thread(s, t, now, &nchosen);
		/* over the descriptor budget: one that ran keeps its files */
		if (t->ran)
			threads_keep_files(s, t);
		threads_drop_transient(t);
		threads_schedule_read(s, t, tick);
	}

	/* Poll for the stops while the target leaves a CPU idle. When its
	 * threads that ran outnumber the CPUs, polling takes a CPU from one of
	 * them: poll only as long as a running thread takes to stop, then sleep
	 * (a thread waiting for a CPU stops later anyway). Counted before the
	 * choice below keeps only a few of them. */
	long long spin_ns = nchosen < s->ncpus ? SPIN_IDLE_NS : SPIN_BUSY_NS;

	if (s->cfg.idle) {
		if (grow_snaps(s, nchosen) < 0)
			return -1;
		if (nchosen)
			sample_round(s, 0, nchosen, spin_ns);
		return 0;
	}

	/* On-CPU mode: every candidate running now ('R': not asleep in a
	 * system call we would interrupt) is interrupted (beyond the bounds, a
	 * random subset, weighted). Only these have their stat read (state and
	 * name). A stop that shows the thread was not on a CPU at the tick (see
	 * judge_stop) is not counted. */
	unsigned w_examined, w_running;
	size_t scan = threads_take_subset(s, nchosen, MAX_EXAMINED, &w_examined);
	size_t nrun = threads_judge_running(s, find_running(s, scan, w_examined));
	nrun = threads_take_subset(s, nrun, s->max_per_tick, &w_running);
	/* (Periods that passed without a tick, csampler given no CPU in time,
	 * are not put on this tick's samples: every thread's total is the
	 * kernel's account of its CPU, long-lived ones each, short-lived ones
	 * pooled per process (stackmap_scaler_init), so those periods are
	 * spread over its samples by their shares. Weighting the sample after
	 * a gap instead put up to 64 periods on one stop, where a thread
	 * preempted for long stops: at exec, at a call's exit.) */
	for (size_t i = 0; i < nrun; i++)
		s->chosen[i]->weight *= w_examined * w_running;
	if (nrun)
		sample_round(s, 0, nrun, spin_ns);
	/* Candidates left unexamined that did not run since their last read
	 * were chosen only as running at an older read: say so no longer, or
	 * a thread seen running once (or found at attach) would be read at
	 * every tick for good while busier ones take the examinations. If it
	 * does run, its run time shows it by the next scheduler tick. */
	for (size_t i = scan; i < nchosen; i++)
		if (!s->chosen[i]->ran)
			s->chosen[i]->running = false;
	return 0;
}

void sampler_get_stats(const struct sampler *s, struct sampler_stats *out)
{
	*out = s->stats;
}
