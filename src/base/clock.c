/* clock: see clock.h. */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/random.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "error.h"

static uint64_t clock_read_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t clock_monotonic_ns(void)
{
	return clock_read_ns(CLOCK_MONOTONIC);
}

uint64_t clock_thread_cpu_ns(void)
{
	return clock_read_ns(CLOCK_THREAD_CPUTIME_ID);
}

uint64_t clock_realtime_ns(void)
{
	return clock_read_ns(CLOCK_REALTIME);
}

uint64_t clock_random_below(struct tick_clock *c, uint64_t n)
{
	/* n is at most a period in ns; the modulo bias (n / 2^64) is nil */
	return n ? clock_xorshift64(&c->rng) % n : 0;
}

static int arm(struct tick_clock *c)
{
	uint64_t at = c->start_ns + c->period_index * c->period_ns +
		      clock_random_below(c, c->period_ns);
	c->next_ns = at;
	struct itimerspec its = {
		.it_value = { (time_t)(at / 1000000000u), (long)(at % 1000000000u) },
	};
	return timerfd_settime(c->fd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* See clock.h: a tick that starts late samples the wrong instant. */
static void realtime_begin(struct tick_clock *c, int priority, bool quiet)
{
	struct sched_param old, sp = { .sched_priority = priority };
	int policy = sched_getscheduler(0);
	if (policy < 0 || sched_getparam(0, &old) < 0)
		return;
	if (policy == SCHED_FIFO || policy == SCHED_RR)
		return;  /* already real-time (chrt): keep what the user chose */
	if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp) < 0) {
		if (!quiet)
			warn("cannot sample at real-time priority %d (%s; needs root, "
			     "CAP_SYS_NICE or RLIMIT_RTPRIO): csampler cannot take the CPUs "
			     "at its ticks, so a thread may be stopped late, in a call it "
			     "made after the tick (the summary says so where its counts "
			     "show it)", priority, strerror(errno));
		return;
	}
	c->realtime = true;
	c->saved_policy = policy;
	c->saved_priority = old.sched_priority;
}

uint64_t clock_random_seed(void)
{
	uint64_t seed;
	if (getrandom(&seed, sizeof seed, GRND_NONBLOCK) != (ssize_t)sizeof seed)
		seed = clock_monotonic_ns() ^ ((uint64_t)getpid() * 0x9E3779B97F4A7C15ull);
	return seed | 1;  /* xorshift must not start at 0 */
}

uint64_t clock_period_ns(unsigned rate)
{
	return 1000000000u / (rate ? rate : 1);
}

int clock_open(struct tick_clock *c, unsigned rate, uint64_t start_ns, int rt_priority,
	       bool quiet)
{
	memset(c, 0, sizeof *c);
	c->fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (c->fd < 0)
		return -1;
	c->rng = clock_random_seed();
	c->start_ns = start_ns;
	c->period_ns = clock_period_ns(rate);
	if (arm(c) < 0) {
		int e = errno;
		clock_close(c);
		errno = e;
		return -1;
	}
	if (rt_priority > 0)
		realtime_begin(c, rt_priority, quiet);
	return 0;
}

uint64_t clock_take_tick(struct tick_clock *c)
{
	uint64_t expirations;
	if (read(c->fd, &expirations, sizeof expirations) != (ssize_t)sizeof expirations)
		return 0;
	/* The next tick lies in the first period that has not begun yet, or in
	 * the current one if its random instant may still come: periods whose
	 * whole span passed while a tick ran get no tick. */
	uint64_t now = clock_monotonic_ns();
	uint64_t current = now > c->start_ns ? (now - c->start_ns) / c->period_ns : 0;
	uint64_t missed = 0;
	c->period_index++;
	if (current > c->period_index) {
		missed = current - c->period_index;
		c->period_index = current;
	}
	if (arm(c) < 0)
		warn_errno("timerfd_settime");
	return missed;
}

void clock_close(struct tick_clock *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	if (c->realtime) {
		struct sched_param sp = { .sched_priority = c->saved_priority };
		if (sched_setscheduler(0, c->saved_policy, &sp) < 0)
			warn_errno("cannot leave real-time priority");
		c->realtime = false;
	}
}
