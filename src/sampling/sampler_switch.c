/* sampler_switch: the switch into each thread, measured (issue 44; see
 * taskclock.h). On-CPU mode: a thread's task clock is opened at one of
 * its stops and read again at later ones, at most every
 * SWITCH_PAIR_EVERY_NS, and at its exit; each read is paired with its
 * schedstat read at the same stop. Stopped, the thread is off its CPU,
 * so both are exact (a running thread's schedstat lags until the
 * scheduler's next update, and a read of its clock would interrupt it).
 * When it is let go (gone, or sampling over), the span between its last
 * pair and its first, less the part csampler's own stops made, goes into
 * stats.switch_in_ns, its run time into stats.switch_run_ns: report.h's
 * note. */
#include "config.h"

#include <errno.h>
#include <unistd.h>

#include "procfs.h"
#include "sampler_internal.h"
#include "taskclock.h"

/* a thread's clock is read again at a stop this long after the last read */
#define SWITCH_PAIR_EVERY_NS 20000000u
/* the most clocks open at once (each a descriptor, and a perf context the
 * target's switches run through): the threads beyond wait for a slot */
#define SWITCH_MAX_CLOCKS 64u

static void clock_open(struct sampler *s, struct thread_state *t, const struct procfs_schedstat *ss,
		       uint64_t now)
{
	if (s->clocks_refused || s->nclocks >= SWITCH_MAX_CLOCKS || s->nfds + 1 >= s->max_fds / 2)
		return;
	int fd = taskclock_open(thread_id(s, t)->tid);
	if (fd < 0) {
		/* not allowed (perf_event_paranoid, seccomp) or no perf
		 * events: no thread's clock opens */
		s->clocks_refused = errno != ESRCH && errno != EMFILE && errno != ENFILE;
		return;
	}
	t->clock_fd = fd;
	s->nclocks++;
	s->nfds++;
	t->clock_base_run_ns = t->clock_run_ns = ss->runtime_ns;
	t->clock_base_arrivals = t->clock_arrivals = ss->arrivals;
	t->clock_base_stops = t->clock_pair_stops = t->clock_stops;
	t->clock_ns = 0;
	t->clock_read_ns = now;
}

void switch_clock_pair(struct sampler *s, struct thread_state *t, const struct procfs_schedstat *ss,
		       bool own_stop, uint64_t now)
{
	if (s->cfg.idle)
		return;
	if (t->clock_fd < 0) {
		if (own_stop)
			clock_open(s, t, ss, now);
		return;
	}
	if (own_stop && now - t->clock_read_ns < SWITCH_PAIR_EVERY_NS)
		return;
	uint64_t ns;
	if (!taskclock_read(t->clock_fd, &ns))
		return;
	t->clock_ns = ns;
	t->clock_run_ns = ss->runtime_ns;
	t->clock_arrivals = ss->arrivals;
	/* the stops let go since the first read: at a stop of ours, that one
	 * is not yet (its arrival is to come), the first one is */
	t->clock_pair_stops = t->clock_stops + !own_stop;
	t->clock_read_ns = now;
}

void switch_clock_close(struct sampler *s, struct thread_state *t)
{
	if (t->clock_fd < 0)
		return;
	close(t->clock_fd);
	t->clock_fd = -1;
	s->nclocks--;
	s->nfds--;
	uint64_t run = t->clock_run_ns - t->clock_base_run_ns;
	if (!run || t->clock_run_ns < t->clock_base_run_ns || t->clock_arrivals < t->clock_base_arrivals)
		return;
	uint64_t own = t->clock_pair_stops > t->clock_base_stops
			       ? t->clock_pair_stops - t->clock_base_stops : 0;
	s->stats.switch_in_ns += taskclock_span(run, t->clock_ns,
						t->clock_arrivals - t->clock_base_arrivals, own);
	s->stats.switch_all_ns += run > t->clock_ns ? run - t->clock_ns : 0;
	s->stats.switch_run_ns += run;
	s->stats.switch_threads++;
}
