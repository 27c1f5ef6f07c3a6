/* sampler_judge: whether a thread ran at the tick (see sampler_internal.h).
 *
 * At each on-CPU tick csampler takes the CPUs: the tick thread (SCHED_FIFO)
 * its own, a holder (holders.h) each other one. A thread on a taken CPU
 * was running at the tick's instant if the switch that took the CPU took
 * it off (its se.exec_start is that switch's stamp), or if it left the
 * CPU between the instant and that switch (the kernel ran a call on to its
 * wait); any other thread there waited for the CPU. Judged before the
 * interrupts where every running thread is on a taken CPU (none can move
 * until the holders let go: one that waited needs no stop), else after
 * them, before the holders let go. Each stop is then judged by where it
 * came (judge_stop). */
#include "config.h"

#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include "blocked.h"
#include "clock.h"
#include "procfs.h"
#include "sampler_internal.h"

/* How close two run-queue clocks read at one switch are: the switch
 * stamps the task it takes off the CPU and the one it puts on with the
 * same clock (__schedule: update_curr of the one, set_next_task of the
 * other). Measured here: csampler's own stamp and that of the thread it
 * preempted equal, to the nanosecond; a thread woken onto that CPU and
 * not yet run keeps the stamp of its last run, before its sleep. */
#define TOOK_CPU_MATCH_NS 1000u

/* Holders (holders.h): how long the tick waits for them to take their
 * CPUs after its own wake-up (an idle CPU's timer wakes a real-time thread
 * there 36-87 us late, p10-p90, on this VM; the tick thread is late too),
 * and the most a holder keeps its CPU (a quarter period at most). */
#define HOLD_ARRIVE_NS 150000u
#define HOLD_MAX_NS 1000000u

/* On-CPU mode with csampler real-time: the holders (holders.h) take the
 * other CPUs at each tick. Started at the first tick (after a launch: the
 * tick thread is pinned while they run), armed for the next one, and
 * waited for (at most HOLD_ARRIVE_NS) before any thread is read, so every
 * read sees the threads as the tick left them. */
void threads_hold_cpus(struct sampler *s)
{
	if (s->cfg.idle)
		return;
	if (!s->holders_tried) {
		struct sched_param sp;
		s->holders_tried = true;
		int policy = sched_getscheduler(0) & ~SCHED_RESET_ON_FORK;
		s->realtime = policy == SCHED_FIFO || policy == SCHED_RR;
		uint64_t hold_max = s->period_ns / 4 < HOLD_MAX_NS ? s->period_ns / 4 : HOLD_MAX_NS;
		/* (holders_start refuses a tick thread that is not SCHED_FIFO) */
		if (sched_getparam(0, &sp) == 0)
			s->holders = holders_start(sp.sched_priority, hold_max);
	}
	s->stats.ticks_realtime += s->realtime;
	if (!s->holders)
		return;
	if (s->holders_armed_ns == s->tick_ns) {
		uint64_t now = clock_monotonic_ns();
		size_t held = holders_wait(s->holders, s->tick_ns,
					   (now > s->tick_ns ? now : s->tick_ns) + HOLD_ARRIVE_NS);
		s->stats.cpus_held += held;
		s->stats.cpus_not_held += holders_count(s->holders) - held;
	}
	holders_arm(s->holders, s->next_tick_ns);
	s->holders_armed_ns = s->next_tick_ns;
}

void threads_judge_held(struct sampler *s, size_t base, size_t n)
{
	for (size_t i = base; i < base + n; i++)
		s->chosen[i]->intr_our_cpu = threads_took_cpu(s, s->chosen[i]);
}

/* The ticking thread's se.exec_start, read once a tick when a thread on
 * its CPU is judged (a scheduler tick between the switch and the read
 * would bring it up to date: about 50 us in 4 ms, then no match); 0 where
 * unknown. */
static uint64_t own_exec_start(struct sampler *s)
{
	if (s->self_exec_tick == s->stats.ticks)
		return s->self_exec_start_ns;
	pid_t self = gettid();
	s->self_exec_tick = s->stats.ticks;
	s->self_exec_start_ns = 0;
	s->self_tick_rq = 0;
	/* At normal priority csampler's tick is itself preempted, and its
	 * stamp is that of its last switch in, not the tick's: none then (at
	 * nice 19 on a CPU of 8 busy threads every stop was taken for a wait) */
	int policy = sched_getscheduler(0) & ~SCHED_RESET_ON_FORK;
	if (policy != SCHED_FIFO && policy != SCHED_RR)
		return 0;
	if (s->self_sched_tid != self) {
		if (s->self_sched_fd >= 0)
			close(s->self_sched_fd);
		s->self_sched_fd = procfs_open_task_file(-1, getpid(), self, "sched");
		s->self_sched_tid = self;
	}
	if (s->self_sched_fd >= 0 && !procfs_read_exec_start(s->self_sched_fd, &s->self_exec_start_ns))
		s->self_exec_start_ns = 0;
	return s->self_exec_start_ns;
}

/* The tick's instant on the ticking thread's run-queue clock, found once
 * a tick when needed (after own_exec_start, whose stamp the finding
 * clobbers); 0 where unknown. */
static uint64_t own_tick_rq(struct sampler *s)
{
	int64_t off;
	if (!s->self_tick_rq && s->self_exec_start_ns && s->self_sched_fd >= 0 &&
	    procfs_exec_clock_offset(s->self_sched_fd, &off))
		s->self_tick_rq = s->tick_ns + (uint64_t)off;
	return s->self_tick_rq;
}

/* threads_took_cpu: see sampler_internal.h. On the ticking thread's CPU a
 * scheduler tick between csampler's switch and its read (about 50 us in
 * 4 ms) makes the one it took look waiting: its stop, wherever it was, is
 * dropped then, which loses a sample but moves none. The window reaches
 * back to the instant: a thread that left the CPU after it and before the
 * switch was running there (going to sleep in a call the kernel ran on to
 * its wait, without kernel preemption; on 'pingpong sync' its fdatasync
 * came out at 3-6% for its own 10-19% when such a thread was left out). */
enum tick_cpu threads_took_cpu(struct sampler *s, struct thread_state *t)
{
	bool own = t->cpu >= 0 && t->cpu == sched_getcpu();
	uint64_t tick_rq = 0, stamp = own ? own_exec_start(s) : holders_taken_at(s->holders, t->cpu, &tick_rq);
	if (!stamp)
		return TICK_CPU_UNKNOWN;   /* (no CPU known, no holder there, or not real-time) */
	int fd = threads_open_once(s, t, "sched");
	uint64_t ns;
	bool ok = fd >= 0 && procfs_read_exec_start(fd, &ns);
	if (fd >= 0)
		close(fd);
	if (!ok)
		return TICK_CPU_UNKNOWN;
	if (ns > stamp + TOOK_CPU_MATCH_NS)
		return TICK_CPU_WAITING;
	if (ns + TOOK_CPU_MATCH_NS >= stamp)
		return TICK_CPU_TAKEN;
	/* it left the CPU before the switch: after the instant? (the
	 * run-queue clock runs no faster than the monotonic one, less steal
	 * time: a thread that left longer before the switch than the time
	 * since the instant left before it, and no clock is read for it) */
	uint64_t since = clock_monotonic_ns() - s->tick_ns;
	if (stamp - ns > since + TOOK_CPU_MATCH_NS)
		return TICK_CPU_WAITING;
	if (own)
		tick_rq = own_tick_rq(s);
	return tick_rq && ns >= tick_rq ? TICK_CPU_TAKEN : TICK_CPU_WAITING;
}

/* Whether T is on a CPU the tick took: the tick thread's (HERE, csampler
 * real-time) or one a holder holds. */
static bool on_taken_cpu(struct sampler *s, const struct thread_state *t, int here)
{
	uint64_t tick_rq;
	if (t->cpu < 0)
		return false;
	if (t->cpu == here)
		return own_exec_start(s) != 0;
	return holders_taken_at(s->holders, t->cpu, &tick_rq) != 0;
}

/* Of the threads judged waiting before the interrupts, one whose switch in
 * is measured is interrupted with this chance (1 in ARRIVAL_EVERY, its
 * stop's weight that much more): its stop comes where it arrives on the
 * CPU, which places its switch-in span (sampler_switch.c); each stops once
 * the holders let go. Left unstopped, as before, a napper beside two busy
 * loops (pingpong nap, 999 Hz: 1,132 waiting of 1,279 periods) had no
 * arrival stop, its span (7-8% of its CPU) spread: its sleep 7-9 points
 * short of its own clock. Every one stopped would cost the stops prejudging
 * saves. Only a stop at the exit of a call that waits (a wake-up) is
 * used so: one elsewhere, where it was preempted, is not (the others'
 * preemptions place that share): all on one CPU beside two busy loops, the
 * thread that writes and fdatasyncs (pingpong sync) had it put at its own
 * clock read's exit (a read of its schedstat ends its slice more often
 * than chance), 7.7-8.3% of its samples in its write phase for 1.1-1.7. */
#define ARRIVAL_EVERY 4u

/* threads_judge_running: see sampler_internal.h. Only where each of the
 * threads is alone on its CPU: two busy threads on one CPU, both
 * interrupted, take turns to stop at once; with the one that waited left
 * alone it ran on, and the other's stop came a slice later, late
 * (8 busy threads on 2 CPUs, 999 Hz: 3,853 stops late in 3 s for 1,287,
 * and csampler's CPU 1.1 s for 0.85). */
size_t threads_judge_running(struct sampler *s, size_t n)
{
	int here = sched_getcpu();
	s->prejudged = false;
	for (size_t i = 0; i < n; i++)
		s->chosen[i]->arrival_only = false;
	if (n > s->ncpus)
		return n;
	for (size_t i = 0; i < n; i++) {
		if (!on_taken_cpu(s, s->chosen[i], here))
			return n;
		for (size_t j = 0; j < i; j++)
			if (s->chosen[j]->cpu == s->chosen[i]->cpu)
				return n;
	}
	s->prejudged = true;
	size_t kept = 0;
	for (size_t i = 0; i < n; i++) {
		struct thread_state *t = s->chosen[i];
		t->intr_our_cpu = threads_took_cpu(s, t);
		if (t->intr_our_cpu == TICK_CPU_WAITING) {
			if (t->clock_fd < 0 || !t->clock_switches ||
			    clock_xorshift64(&s->rng) % ARRIVAL_EVERY != 0) {
				s->stats.dropped_queued++;   /* (still runnable: a candidate next tick) */
				continue;
			}
			t->weight *= ARRIVAL_EVERY;   /* (judge_stop drops its stop: STOP_QUEUED) */
			t->arrival_only = true;
			s->stats.arrival_stops++;
		}
		s->chosen[i] = s->chosen[kept];
		s->chosen[kept++] = t;
	}
	return kept;
}

/* How a stop is counted in on-CPU mode. */
enum stop_verdict {
	STOP_KEEP,
	STOP_WAKING,    /* at the exit of a system call it was waiting in at the tick */
	STOP_QUEUED,    /* it was waiting for a CPU at the tick */
};

/* Whether T, stopped with registers R, is at the exit of a call that waits
 * or of one our stop interrupted (EINTR, ERESTART*): where it goes on from
 * a wait. *TIMEOUT_RET as blocked_call_waits's. */
static bool at_wait_exit(struct sampler *s, struct thread_state *t,
			 const struct user_regs_struct *r, int64_t *timeout_ret)
{
	long nr = (long)r->orig_rax;
	int64_t ret = (int64_t)r->rax;
	*timeout_ret = INT64_MIN;
	if (nr < 0)
		return false;
	bool interrupted = ret == -4 || (ret >= -516 && ret <= -512);
	return blocked_call_waits(thread_id(s, t)->pid, nr, r, timeout_ret) || interrupted;
}

/* On-CPU mode (a wall-clock profile wants the waits): see the top of this
 * file. T, interrupted at the tick of t->intr_tick_ns, stopped with
 * registers R and was seen stopped at SEEN_NS: was it running at the tick?
 * Its schedstat now against the read before the interrupt (t->intr_*):
 * when it arrived on a CPU since, the time it waited for one (run delay)
 * ended when it arrived, at SEEN_NS at the latest; a wait longer than the
 * time since the tick began before the tick. (Stops are seen within tens
 * of microseconds: csampler waits for them at real-time priority. Seen
 * later, the wait seems to begin later, and the stop is kept: the error
 * goes the way of the old rule, never the other.)
 * A thread the read found on the CPU the round ran on is known exactly
 * (round_sent): the one csampler (SCHED_FIFO) took that CPU from was
 * running at the tick, in a call or on its way in, and came back only to
 * stop: kept wherever it stops (taken for a wake-up, every stop of a
 * thread that shares its CPU with csampler's tick was dropped in a call
 * that waits and kept elsewhere: on 2 CPUs, epoll_wait lost most of its
 * share to write). Any other was waiting there for the CPU, queued or
 * being woken, and is dropped whatever its run delay says: a thread woken
 * from fdatasync there slept again before it stopped, so its run delay
 * was shorter than the time since the tick, and with two busy loops on
 * the host fdatasync came out at 16-22% of its samples for 7-11% of its
 * CPU (now 7-8%).
 * A stop at the exit of a call that waits: a call our stop interrupted
 * (EINTR, ERESTART*) was being entered by a thread that ran at the tick,
 * unless it had gone to sleep in it already (then it got a CPU again to
 * stop); one that returned its timeout slept until its timer fired. */
static enum stop_verdict judge_stop(struct sampler *s, struct thread_state *t,
				    const struct user_regs_struct *r, uint64_t seen_ns)
{
	struct procfs_schedstat ss;
	bool have = procfs_read_schedstat(t->schedstat_fd, &ss);
	t->stop_run_delay_read = have;  /* (the round's pause uses it) */
	t->stop_run_delay_ns = have ? ss.run_delay_ns : 0;
	if (have)
		switch_clock_pair(s, t, &ss, true, seen_ns);
	if (t->intr_our_cpu == TICK_CPU_WAITING)
		return STOP_QUEUED;
	bool arrived = have && ss.arrivals != t->intr_arrivals;
	if (arrived && ss.run_delay_ns > t->intr_run_delay_ns && seen_ns > t->intr_tick_ns &&
	    ss.run_delay_ns - t->intr_run_delay_ns > seen_ns - t->intr_tick_ns)
		return STOP_QUEUED;     /* (also one csampler took its CPU from before the tick) */
	if (t->intr_our_cpu == TICK_CPU_TAKEN)
		return STOP_KEEP;
	if ((long)r->orig_rax < 0)
		return STOP_KEEP;       /* stopped in user code: it ran there */
	int64_t timeout_ret;
	if (!at_wait_exit(s, t, r, &timeout_ret))
		return STOP_KEEP;
	if ((int64_t)r->rax == timeout_ret)
		return STOP_WAKING;     /* slept until its timer fired */
	return arrived ? STOP_WAKING : STOP_KEEP;
}

/* threads_count_kept_place: see sampler_internal.h. */
void threads_count_kept_place(struct sampler *s, const struct thread_state *t,
			      const struct user_regs_struct *r)
{
	bool at_call = (long)r->orig_rax >= 0;
	++*(at_call ? &s->stats.stops_call : &s->stats.stops_user);
	if (t->intr_our_cpu == TICK_CPU_TAKEN)
		++*(at_call ? &s->stats.local_call : &s->stats.local_user);
	else if (t->intr_remote)
		++*(at_call ? &s->stats.remote_call : &s->stats.remote_user);
}

/* threads_keep_stop: see sampler_internal.h. */
bool threads_keep_stop(struct sampler *s, struct thread_state *t, const struct user_regs_struct *r,
		       uint64_t seen_ns)
{
	enum stop_verdict v = judge_stop(s, t, r, seen_ns);
	if (v == STOP_WAKING)
		s->stats.dropped_waking++;
	else if (v == STOP_QUEUED)
		s->stats.dropped_queued++;
	/* (of a thread whose switches are measured: where its switch in is
	 * put, sampler_switch.c) */
	int64_t timeout_ret;
	t->stop_arrival = v == STOP_KEEP || t->clock_fd < 0 || !t->clock_switches ? 0
			  : v == STOP_WAKING || at_wait_exit(s, t, r, &timeout_ret) ? STACK_WAKE
			  : t->arrival_only ? 0 : STACK_PREEMPT;
	return v == STOP_KEEP;
}
