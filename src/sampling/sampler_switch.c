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
 * note. At each pair, that span goes to the recorder, to be put on the
 * stops where the thread was about to arrive (stackmap_add_span): its
 * voluntary switches' share on those at a call that waits (STACK_WAKE),
 * its involuntary switches' on the others (STACK_PREEMPT). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "procfs.h"
#include "sampler_internal.h"
#include "stackmap.h"
#include "taskclock.h"

/* a thread's clock is read again at a stop this long after the last read */
#define SWITCH_PAIR_EVERY_NS 20000000u
/* the most clocks open at once (each a descriptor, and a perf context the
 * target's switches run through): the threads beyond wait for a slot */
#define SWITCH_MAX_CLOCKS 64u

/* T's switches out so far, voluntary and involuntary (its status file). */
static bool read_switches(struct sampler *s, struct thread_state *t, uint64_t *nv, uint64_t *niv)
{
	char buf[2048];
	const struct recorder_followed *id = thread_id(s, t);
	if (procfs_read_file(id->pid, id->tid, "status", buf, sizeof buf) <= 0)
		return false;
	long v = procfs_status_long(buf, "voluntary_ctxt_switches", -1);
	long iv = procfs_status_long(buf, "nonvoluntary_ctxt_switches", -1);
	if (v < 0 || iv < 0)
		return false;
	*nv = (uint64_t)v;
	*niv = (uint64_t)iv;
	return true;
}

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
	t->clock_base_taken = t->taken_stops;
	t->clock_ns = 0;
	t->clock_read_ns = now;
	t->span_told_ns[0] = t->span_told_ns[1] = 0;
	t->arrival_counted[0] = t->arrival_counted[1] = 0;
	t->clock_switches = read_switches(s, t, &t->clock_base_nvcsw, &t->clock_base_nivcsw);
}

/* the arrival classes, by index into span_told_ns and span_unaccounted_ns */
static const uint32_t span_class[2] = { STACK_WAKE, STACK_PREEMPT };

void switch_span_account(struct sampler *s, struct thread_state *t)
{
	uint32_t key = thread_id(s, t)->key;
	for (int c = 0; c < 2; c++)
		if (t->span_unaccounted_ns[c] && key != UINT32_MAX) {
			recorder_account_span(s->rec, key, span_class[c], t->span_unaccounted_ns[c]);
			t->span_unaccounted_ns[c] = 0;
		}
}

/* T's span since its first pair, in the shares of its voluntary and its
 * involuntary switches out, beyond what was told: told now. */
static void tell_span(struct sampler *s, struct thread_state *t)
{
	uint64_t nv, niv;
	if (!t->clock_switches || t->clock_run_ns < t->clock_base_run_ns ||
	    t->clock_arrivals < t->clock_base_arrivals || !read_switches(s, t, &nv, &niv) ||
	    nv < t->clock_base_nvcsw || niv < t->clock_base_nivcsw)
		return;
	uint64_t own = t->clock_pair_stops > t->clock_base_stops
			       ? t->clock_pair_stops - t->clock_base_stops : 0;
	uint64_t span = taskclock_span(t->clock_run_ns - t->clock_base_run_ns, t->clock_ns,
				       t->clock_arrivals - t->clock_base_arrivals, own);
	/* (each of our stops is a voluntary switch out of the thread, and one
	 * where our tick took its CPU an involuntary one before it: holders.h) */
	uint64_t n[2] = { nv - t->clock_base_nvcsw, niv - t->clock_base_nivcsw };
	uint64_t taken = t->taken_stops - t->clock_base_taken;
	n[0] = n[0] > own ? n[0] - own : 0;
	n[1] = n[1] > taken ? n[1] - taken : 0;
	uint64_t told = t->span_told_ns[0] + t->span_told_ns[1];
	if (span <= told || !(n[0] + n[1]))
		return;
	/* (each class is told what its share grew by, within what the span
	 * grew by: as the shares move, one's part can shrink after it was
	 * told, and the parts told would add up to more than the span, 102.3%
	 * of it once beside two busy loops) */
	uint64_t room = span - told;
	for (int c = 0; c < 2; c++) {
		uint64_t part = (uint64_t)((double)span * (double)n[c] / (double)(n[0] + n[1]));
		if (part <= t->span_told_ns[c])
			continue;
		uint64_t more = part - t->span_told_ns[c];
		if (more > room)
			more = room;
		room -= more;
		t->span_unaccounted_ns[c] += more;
		t->span_told_ns[c] += more;
	}
	switch_span_account(s, t);
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
	tell_span(s, t);
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
	for (int c = 0; c < 2; c++)
		if (t->arrival_counted[c] >= STACKMAP_WAKE_MIN)
			s->stats.switch_placed_ns += t->span_told_ns[c];
}
