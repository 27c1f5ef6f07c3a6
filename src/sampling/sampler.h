/* sampler: the ptrace backend (backend.h): one tick of the hot path, and
 * the threads seen. What it samples goes through the recorder (recorder.h),
 * which keeps the processes, thread keys, unwinding and counting.
 *
 * Each tick: read the schedstat of the threads due (kept-open /proc files,
 * pread; an idle thread is due seldomer the longer it sleeps), choose those
 * that may be running now (on-CPU mode; see sampler.c for why
 * the estimate is unbiased) or all of them (--idle, where a thread that did
 * not run reuses its last stack, and a blocked one that ran is copied where
 * it waits without being interrupted: blocked.h), each sample
 * counting one period (on-CPU mode, csampler real-time: with every other
 * CPU taken at the tick by a holder, holders.h, so each thread stops where
 * the tick found it); interrupt the chosen threads together, capture
 * registers and stack window of each as soon as it stops and resume it at
 * once (no thread waits for a slower one), then unwind the copies and count
 * them in the stackmap. A chosen thread that was waiting for a CPU stops
 * after its round gave up on it: it is sampled then, through target's
 * late-sample hook (stats.late), and left out of the choice until then. After warm-up a tick allocates nothing and opens no
 * file except /proc thread state; only a code mapping the unwinder reaches
 * for the first time has its table built then (once per mapping). Target events reach the recorder's
 * processes through sampler_on_event. */
#ifndef CSAMPLER_SAMPLER_H
#define CSAMPLER_SAMPLER_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "recorder.h"
#include "target.h"

struct sampler_config {
	unsigned rate;                  /* Hz */
	bool idle;
	unsigned max_depth;
	size_t stack_window;     /* a snapshot's capacity: the most a copy takes */
	const pid_t *tids;              /* -t: follow only these threads (NULL: all) */
	size_t ntids;
	bool launched;                  /* the program was started for us: the CPU
	                                 * its threads used before their first read
	                                 * counts */
	bool kernel;                    /* --idle: a blocked thread's kernel frames
	                                 * (/proc/TID/stack, root) above its user ones */
	unsigned max_threads_per_tick;  /* on-CPU mode, interrupts a tick (beyond them
	                                 * a random subset, weighted); 0: one per
	                                 * online CPU */
	int verbose;
};

struct sampler_stats {
	uint64_t ticks, ticks_missed;
	uint64_t threads_seen;
	uint64_t not_captured;          /* --idle: blocked threads counted without a stack */
	uint64_t in_place;              /* blocked threads copied without a stop: --idle's,
	                                 * and on-CPU threads that ran at the tick and
	                                 * slept before it took their CPU */
	uint64_t fd_short;              /* threads not followed: out of file descriptors */
	uint64_t late;                  /* samples taken when a thread that was waiting for a
	                                 * CPU got one, after its round gave up on it */
	uint64_t dropped_waking;        /* stops at the exit of a system call the thread
	                                 * waited in: not counted (see sampler.c) */
	uint64_t switches;              /* times the threads read got a CPU (schedstat's
	                                 * arrivals), while sampled, less the arrivals
	                                 * our own stops made */
	uint64_t waited_ns;             /* time the threads read waited for a CPU
	                                 * (schedstat's run delay), while sampled */
	uint64_t dropped_queued;        /* stops of threads that were waiting for a CPU
	                                 * at the tick (runnable, not running): not
	                                 * counted (see sampler.c) */
	uint64_t arrival_stops;         /* of those, stopped only for where they arrived
	                                 * (sampler_judge.c's ARRIVAL_EVERY) */
	uint64_t not_stopped;           /* samples of threads not stopped, counted
	                                 * without a stack (target_thread_stoppable) */
	/* on-CPU stops kept, by where they were and where they came: the
	 * thread csampler's tick took its CPU from (local: it stops where it
	 * was at the tick), and a thread on another CPU (remote: the
	 * interrupt reaches it tens of microseconds later); at a system
	 * call's exit, or in user code */
	uint64_t local_call, local_user, remote_call, remote_user;
	uint64_t stops_call, stops_user;   /* all of them (on-CPU) */
	uint64_t cpus_held, cpus_not_held; /* at the ticks, the other CPUs taken by a
	                                 * holder in time (holders.h), and those not */
	uint64_t ticks_realtime;        /* on-CPU ticks taken at real-time priority
	                                 * (csampler's CPU taken, holders possible) */
	/* the switch into the threads whose task clocks were read (issue 44,
	 * sampler_switch.c): the span the kernel charged them from being
	 * picked to being on their CPU, our stops' part left out, and their
	 * run time over the same pairs of reads; the span with our stops';
	 * the part of the first put where the threads arrived (those with
	 * STACKMAP_WAKE_MIN periods of stops there: stackmap_add_span) */
	uint64_t switch_in_ns, switch_run_ns, switch_threads, switch_all_ns, switch_placed_ns;
	uint64_t user_ticks, kernel_ticks; /* the kernel's account of the threads'
	                                 * time in user code and in the kernel
	                                 * (stat's utime, stime) between their first
	                                 * and last stat reads, in clock ticks */
};

struct sampler;

/* A sampler of T's threads, recording through REC (the caller keeps
 * owning both; REC outlives the sampler). Pauses are recorded from the
 * interrupt to the resume (from its stop, for a thread that was waiting for
 * a CPU). */
struct sampler *sampler_new(struct target *t, struct recorder *rec,
			    const struct sampler_config *cfg);
void sampler_free(struct sampler *s);

/* A target event (forward target's callback here). */
void sampler_on_event(struct sampler *s, const struct target_event *ev);

/* The last tick was taken: the CPU holders end, and the ticking thread is
 * no longer pinned (holders.h). */
void sampler_end_ticks(struct sampler *s);
/* Sampling is over: close the threads' /proc files and the processes' task
 * directories (the descriptors go to symbolizing and writing). No tick after
 * this. */
void sampler_close_threads(struct sampler *s);
/* Take the samples of the tick due at TICK_NS (CLOCK_MONOTONIC: the clock's
 * instant, not when the loop woke). Its round waits for stops until
 * NEXT_TICK_NS (0: no next tick), though at least ROUND_MIN_WAIT and at most
 * ROUND_MAX_WAIT (sampler.c), so a slow stop does not cost the next tick.
 * 0, or -1 on a fatal error. */
int sampler_tick(struct sampler *s, uint64_t tick_ns, uint64_t next_tick_ns);
/* Account for ticks skipped because a tick overran. */
void sampler_note_missed(struct sampler *s, uint64_t missed);

void sampler_get_stats(const struct sampler *s, struct sampler_stats *out);

#endif
