/* perf_sampler: on-CPU sampling by the kernel (--backend=perf), the
 * backend that never stops the target.
 *
 * Two clocks of one period, both software cpu-clock events writing a
 * sample (user registers and a copy of the stack window) into a ring per
 * CPU: one per CPU (as perf record -a), whose BPF filter lets a sample be
 * written only for a thread of a followed process that has no clock of its
 * own; and, for a thread sampled STACKMAP_SCALE_MIN times, one per CPU
 * bound to the thread (as perf record -p), whose time stops when it
 * switches out: the periods that end in a switch are then not lost, as a
 * CPU's are; a short-lived thread keeps the CPU's clock's random phase
 * (perf_sampler.c says why both); such a thread's switches out are
 * sampled too, a few, into a second ring per CPU: where it arrives, which
 * takes the switch into it (perf_sampler_arrivals.c).
 * No thread is stopped; nothing is opened
 * or read for a thread that does not run. perf_sampler_drain (each tick)
 * hands every sample to the recorder as a snapshot counting one period;
 * lost records are counted. A thread's run time is read at its samples (at
 * most every 2 ms) and its name once a second. At a thread's exit, or its
 * process's, the rings are read first. Needs root (CAP_PERFMON and
 * CAP_BPF), csampler in the initial pid namespace, x86-64. */
#ifndef CSAMPLER_PERF_SAMPLER_H
#define CSAMPLER_PERF_SAMPLER_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "recorder.h"
#include "target.h"

struct perf_sampler_config {
	unsigned rate;                  /* Hz of each CPU's time */
	size_t stack_window;            /* bytes copied per sample (at most 65528) */
	int verbose;
	const pid_t *tids;              /* -t: only these threads' samples (NULL: all) */
	size_t ntids;
	bool launched;                  /* the first process is csampler's own child
	                                 * until it execs the program: its samples
	                                 * are written from that exec on */
	bool kernel;                    /* each sample's kernel call chain above its
	                                 * user frames, where the kernel shows its
	                                 * symbols' addresses */
};

struct perf_sampler_stats {
	uint64_t drains;                /* reads of the rings */
	uint64_t samples;               /* sample records read */
	uint64_t lost;                  /* samples the kernel could not write (ring full) */
	uint64_t no_user_regs;          /* samples without user registers (counted
	                                 * without a stack) */
	uint64_t threads_seen;
	uint64_t own_threads;           /* threads given clocks of their own */
	uint64_t own_threads_now;       /* ... that have them now */
	uint64_t own_refused;           /* threads left on the CPUs' clocks (the
	                                 * open-file limit, or refused) */
	/* over the threads' own clocks: the switch into them (their run time
	 * less those clocks' time: backend_stats.switch_in_ns), their run time */
	uint64_t switch_in_ns, switch_run_ns;
	uint64_t switch_placed_ns;      /* of it, told for the threads' arrivals
	                                 * (the stacks they switched out at) */
	uint64_t arrival_samples;       /* stacks taken at a switch out */
	uint64_t arrival_lost;          /* ... the kernel could not write */
	uint64_t arrival_threads;       /* threads whose arrivals were sampled */
};

struct perf_sampler;

/* A sampler recording through REC (which outlives it) of the processes
 * target T holds and will report: opens the CPUs' events, rings and
 * filter. NULL when perf events cannot sample them, the reason said on
 * stderr in one line and *STATUS set to the exit status (CS_EXIT_PERMISSION
 * when the kernel refuses, CS_EXIT_SYSTEM otherwise). */
struct perf_sampler *perf_sampler_new(struct target *t, struct recorder *rec,
				      const struct perf_sampler_config *cfg, int *status);
void perf_sampler_free(struct perf_sampler *ps);
/* Whether this csampler may sample with perf events (--backend=auto): in
 * the initial pid namespace, allowed a BPF filter, a CPU's cpu-clock event
 * and the filter on it. Says nothing. */
bool perf_sampler_permitted(void);

void perf_sampler_on_event(struct perf_sampler *ps, const struct target_event *ev);
/* Count every sample the rings hold. 0. */
int perf_sampler_drain(struct perf_sampler *ps);
/* The drains a second its rings need (each read before a quarter of it
 * fills at the sampling rate, at least PERF_SAMPLER_READ_RATE_MIN, at most
 * the sampling rate): csampler then wakes that often, not at every period
 * (each real-time tick took a CPU from a thread of the target: two busy
 * threads at 999 Hz were preempted 5,200 times in 5 s, 550 at this rate). */
#define PERF_SAMPLER_READ_RATE_MIN 50u
unsigned perf_sampler_read_rate(const struct perf_sampler *ps);
/* Sampling is over: count what the rings hold, then close the events. */
void perf_sampler_close_threads(struct perf_sampler *ps);
void perf_sampler_get_stats(const struct perf_sampler *ps, struct perf_sampler_stats *out);

#endif
