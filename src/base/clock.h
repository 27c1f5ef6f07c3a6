/* clock: when sampling ticks happen, and that they happen then.
 *
 * Tick k of a run falls at a uniformly random instant inside the k-th
 * period [start + k*P, start + (k+1)*P) (stratified sampling): exactly one
 * tick per period, so a sample stands for one period, and no instant of the
 * period is favoured, so no periodic activity of the target can phase-lock
 * with the ticks (a fixed-rate clock beats against a target timer of a
 * commensurate period and samples one phase of it for seconds on end).
 * The clock is a timerfd armed for each tick (no timer slack).
 *
 * A tick that starts late samples a later instant than its own. At normal
 * priority the tick of a csampler that shares a CPU with a busy target
 * thread starts when that thread blocks, and samples land at its blocking
 * points. So while the clock is open csampler runs SCHED_FIFO, and
 * clock_close gives back its own policy for the slow work after sampling. */
#ifndef CSAMPLER_CLOCK_H
#define CSAMPLER_CLOCK_H
#include <stdbool.h>
#include <stdint.h>

/* Hz: --rate's default, and a sampler's when given 0 */
#define CLOCK_DEFAULT_RATE 99u

/* One period at RATE Hz, in nanoseconds (0 Hz is taken as 1 Hz): the one
 * place the period is computed. */
uint64_t clock_period_ns(unsigned rate);

struct tick_clock {
	int fd;                  /* poll it for POLLIN */
	bool realtime;           /* switched to SCHED_FIFO; the old policy follows */
	int saved_policy;
	int saved_priority;
	uint64_t start_ns, period_ns;
	uint64_t period_index;   /* the period of the armed tick */
	uint64_t next_ns;        /* the armed tick's instant (CLOCK_MONOTONIC) */
	uint64_t rng;            /* xorshift64 state */
};

/* Open a clock of RATE Hz whose first period starts at START_NS
 * (CLOCK_MONOTONIC) and, unless RT_PRIORITY is 0, switch to SCHED_FIFO at
 * RT_PRIORITY. When that is refused, one line (unless QUIET) says what it
 * means for the profile, and sampling goes on at normal priority.
 * 0, or -1 with errno (no timer). */
int clock_open(struct tick_clock *c, unsigned rate, uint64_t start_ns, int rt_priority,
	       bool quiet);
/* After fd polled readable: consume the expiration and arm the next tick.
 * Returns the periods that passed without a tick (a tick overran them). */
uint64_t clock_take_tick(struct tick_clock *c);
void clock_close(struct tick_clock *c);

/* One step of the xorshift64 generator of the sampling choices (STATE must
 * not be 0). Fast and well spread; not for secrets. */
static inline uint64_t clock_xorshift64(uint64_t *state)
{
	uint64_t x = *state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *state = x;
}

/* A non-zero seed for clock_xorshift64: from getrandom, else from the pid
 * and the time. */
uint64_t clock_random_seed(void);

/* A uniform random number in [0, n) from the clock's generator. */
uint64_t clock_random_below(struct tick_clock *c, uint64_t n);

uint64_t clock_monotonic_ns(void);
/* The CPU time the calling thread has used (CLOCK_THREAD_CPUTIME_ID): what
 * a piece of work costs, however long it waited for a CPU. */
uint64_t clock_thread_cpu_ns(void);
/* The time of day (CLOCK_REALTIME), in ns since the epoch: a profile's start. */
uint64_t clock_realtime_ns(void);

#endif
