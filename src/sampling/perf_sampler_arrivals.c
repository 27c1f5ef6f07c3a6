/* perf_sampler_arrivals: where a thread arrives (perf_sampler.h, for
 * --backend=perf; its rows are perf_sampler_threads.c's).
 *
 * The kernel charges a thread from the moment it is picked, and no
 * clock's period lands before the switch into it is done (taskclock.h):
 * that span, measured per thread with its own clocks (its task clock
 * against its run time), belongs where the thread comes back on a CPU: at
 * the exit of its wait, or where it was preempted. Spread over its stacks
 * instead, an epoll server's epoll_wait read 6.5 to 16.7 points short
 * beside two busy loops. A thread with its own clocks whose span is
 * worth placing (ARRIVAL_SPAN_MIN) also gets a context-switch event per
 * CPU, sampled (user registers and stack) at its switch out, which is
 * where it arrives next, into a ring per CPU of its own (held by a dummy
 * event); each sample is counted as an arrival (STACK_WAKE), and the span
 * is told the recorder (stackmap_add_span) as it grows. Its period is
 * chosen so that a thread gets about one such sample per period of its
 * CPU, from its switches and run time read in
 * schedstat, chosen again every 0.1 s (PERF_EVENT_IOC_PERIOD): a fixed
 * count, as a frequency would not be (a context-switch event asked for
 * 100 a second gave 23 in 2 s for a thread that switched 18,000 times a
 * second: the kernel adjusts a frequency at the ticks that find it
 * running, rare in a thread that sleeps).
 */
#include "config.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "clock.h"
#include "error.h"
#include "perf_record.h"
#include "perf_sampler_internal.h"
#include "procfs.h"
#include "recorder.h"
#include "stackmap.h"
#include "taskclock.h"

/* ---- the rings ---------------------------------------------------------------------------- */

/* The arrivals' rings: on each CPU with a clock, a dummy event (it never
 * counts) that holds a ring the threads' context-switch events write into.
 * None (arrival_rings NULL, said with -v) where the kernel refuses one:
 * the span is then spread, as the note says. */
void ps_arrival_rings_open(struct perf_sampler *ps, size_t page)
{
	ps->arrival_rings = calloc(ps->ncpus, sizeof *ps->arrival_rings);
	if (!ps->arrival_rings)
		return;
	struct perf_event_attr dummy = ps->arrival_attr;
	dummy.config = PERF_COUNT_SW_DUMMY;
	dummy.sample_period = 0;
	int err = 0;
	for (unsigned c = 0; c < ps->ncpus; c++) {
		struct ring *r = &ps->arrival_rings[c];
		r->fd = -1;
		if (err || ps->rings[c].fd < 0)
			continue;
		r->fd = ps_perf_event_open(&dummy, -1, (int)c, -1, PERF_FLAG_FD_CLOEXEC);
		r->size = RING_DATA_BYTES;
		r->map_len = page + r->size;
		void *m = r->fd >= 0 ? mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0)
				     : MAP_FAILED;
		if (m == MAP_FAILED) {
			err = errno;
			continue;
		}
		r->meta = m;
		r->data = (uint8_t *)m + page;
	}
	if (!err)
		return;
	for (unsigned c = 0; c < ps->ncpus; c++)
		ps_ring_close(&ps->arrival_rings[c]);
	free(ps->arrival_rings);
	ps->arrival_rings = NULL;
	if (ps->cfg.verbose)
		warn("perf events: no ring for where threads arrive (%s): the switch into them is "
		     "spread over their stacks", strerror(err));
}

/* A sample of a thread's switch out: where it arrives next, counted as an
 * arrival (its weight in the span, not a period). A thread let go since,
 * or a sample without user registers (a kernel context), is left out. */
void ps_take_arrival(struct perf_sampler *ps, const struct perf_sample_view *v)
{
	struct thread_row *row = ps_row_find(ps, v->tid);
	if (!row || !v->user)
		return;
	uint32_t key = ps_row_key(ps, row);
	if (key == UINT32_MAX)
		return;
	ps->stats.arrival_samples++;
	struct unwind_snapshot *s = &ps->snap;
	ps_sample_snapshot(s, v);   /* (user frames only: arrival_attr) */
	const uint64_t *addrs;
	unsigned depth;
	uint32_t flags = STACK_WAKE;
	recorder_count_snapshot(ps->rec, ps_row_id(ps, row)->proc, key, s, 1, &addrs, &depth, &flags);
}

/* ---- a thread's events ------------------------------------------------------------------- */

/* the arrival period is chosen again this often (at a sample's read): a
 * thread idle when its clocks opened, then busy, took a sample at each of
 * 8,700 switches in 4 s at a one-second interval, and the ring lost as many */
#define ARRIVAL_PERIOD_EVERY_NS 100000000u
/* A thread's arrivals are sampled only once its span is worth placing: at
 * least 2% of its run time over its first 0.4 s or more of CPU with its
 * own clocks. Spread, a span of s% moves no phase of the thread by more
 * than s points; sampling its switches copies a stack at each, as many
 * again as its periods, which the CPUs of a server switching 10,000 times
 * a second could not spare: mariadbd under sysbench, its span 0.0%, lost
 * 60% of those samples and its rings more of the others. (schedstat's run
 * time of a running thread lags by up to a scheduler tick, 4 ms: 1% of
 * 0.4 s; over 20 ms, threads whose span was 0 read 5%.) Looked at again
 * every ARRIVAL_PERIOD_EVERY_NS until then. */
#define ARRIVAL_SPAN_MIN 0.02
#define ARRIVAL_RUN_MIN_NS 400000000u

static int *row_arrival_fds(struct perf_sampler *ps, const struct thread_row *row)
{
	return &ps->arrival_fds[(size_t)(row - ps->rows) * ps->ncpus];
}

uint64_t ps_arrival_period(const struct perf_sampler *ps, uint64_t arrivals, uint64_t run_ns)
{
	uint64_t period_ns = ps->attr.sample_period ? ps->attr.sample_period : 1;
	if (!run_ns)
		return 1;
	/* (arrivals * period / run, in doubles: no overflow) */
	double p = (double)arrivals * (double)period_ns / (double)run_ns;
	return p < 1 ? 1 : p > 1e9 ? 1000000000u : (uint64_t)(p + 0.5);
}

/* The switch into ROW's thread since its own clocks opened, as far as its
 * run time RUN_NS (just read) and its task clock tell: what grew since the
 * last telling goes to the recorder for its arrivals. */
void ps_arrivals_tell(struct perf_sampler *ps, struct thread_row *row, uint64_t run_ns,
		      uint64_t clock)
{
	uint32_t key = ps_row_id(ps, row)->key;
	if (key == UINT32_MAX || run_ns <= row->clock_run0_ns)
		return;
	uint64_t run = run_ns - row->clock_run0_ns;
	uint64_t span = run > clock ? run - clock : 0;
	if (span <= row->span_told_ns)
		return;
	recorder_account_span(ps->rec, key, STACK_WAKE, span - row->span_told_ns);
	row->span_told_ns = span;
}

/* The same, its task clock read now. */
static void arrivals_tell_span(struct perf_sampler *ps, struct thread_row *row, uint64_t run_ns)
{
	uint64_t clock;
	if (row->clock_fd >= 0 && taskclock_read(row->clock_fd, &clock))
		ps_arrivals_tell(ps, row, run_ns, clock);
}

/* ROW's arrival period chosen again from its switches and run time over
 * the last second (SS just read), where it is off by half or more. */
static void arrivals_adjust_period(struct perf_sampler *ps, struct thread_row *row,
				   const struct procfs_schedstat *ss, uint64_t now)
{
	bool counted = ss->arrivals >= row->period_arrivals && ss->runtime_ns > row->period_runtime_ns;
	uint64_t n = ss->arrivals - row->period_arrivals, run = ss->runtime_ns - row->period_runtime_ns;
	row->period_read_ns = now;
	row->period_arrivals = ss->arrivals;
	row->period_runtime_ns = ss->runtime_ns;
	if (!counted)
		return;
	uint64_t p = ps_arrival_period(ps, n, run);
	if (p < 2 * row->arrival_period && 2 * p > row->arrival_period)
		return;
	int *fds = row_arrival_fds(ps, row);
	for (unsigned c = 0; c < ps->ncpus; c++)
		if (fds[c] >= 0)
			(void)ioctl(fds[c], PERF_EVENT_IOC_PERIOD, &p);
	row->arrival_period = p;
}

/* Close ROW's arrival events (what they wrote stays in the rings). */
void ps_arrivals_close(struct perf_sampler *ps, struct thread_row *row)
{
	int *fds = row_arrival_fds(ps, row);
	for (unsigned c = 0; c < ps->ncpus; c++)
		if (fds[c] >= 0) {
			close(fds[c]);
			fds[c] = -1;
			ps->own_fd_budget++;
		}
	row->arrivals = false;
}

/* Give ROW's thread (with its own clocks and task clock) a context-switch
 * event per CPU into the arrivals' rings, within the upper half of the
 * descriptor budget (beyond it, a thread's span is spread); none where one
 * is refused. */
static void arrivals_open(struct perf_sampler *ps, struct thread_row *row,
			  const struct procfs_schedstat *ss, uint64_t now)
{
	unsigned rings = 0;
	for (unsigned c = 0; c < ps->ncpus; c++)
		rings += ps->arrival_rings[c].fd >= 0;
	if (ps->own_fd_budget < ps->arrival_fd_floor + rings || ss->arrivals < row->clock_arrivals0 ||
	    ss->runtime_ns < row->clock_run0_ns) {
		row->arrivals_refused = true;
		return;
	}
	pid_t tid = ps_row_id(ps, row)->tid;
	int *fds = row_arrival_fds(ps, row);
	/* its switches a period of its CPU so far */
	row->arrival_period = ps_arrival_period(ps, ss->arrivals - row->clock_arrivals0,
						ss->runtime_ns - row->clock_run0_ns);
	row->period_arrivals = ss->arrivals;
	row->period_runtime_ns = ss->runtime_ns;
	row->period_read_ns = now;
	struct perf_event_attr a = ps->arrival_attr;
	a.sample_period = row->arrival_period;
	bool ok = true;
	for (unsigned c = 0; c < ps->ncpus && ok; c++) {
		if (ps->arrival_rings[c].fd < 0)
			continue;
		fds[c] = ps_perf_event_open(&a, tid, (int)c, -1, PERF_FLAG_FD_CLOEXEC);
		ok = fds[c] >= 0 && ioctl(fds[c], PERF_EVENT_IOC_SET_OUTPUT, ps->arrival_rings[c].fd) == 0;
		if (fds[c] >= 0)
			ps->own_fd_budget--;
	}
	row->arrivals = true;
	if (!ok) {
		ps_arrivals_close(ps, row);
		row->arrivals_refused = true;
		return;
	}
	row->span_told_ns = 0;
	ps->stats.arrival_threads++;
}

/* Whether the span of ROW's thread so far (RUN_NS its run time now) is
 * worth placing: at least ARRIVAL_SPAN_MIN of ARRIVAL_RUN_MIN_NS or more. */
static bool span_worth_placing(const struct thread_row *row, uint64_t run_ns)
{
	uint64_t clock;
	if (run_ns < row->clock_run0_ns + ARRIVAL_RUN_MIN_NS || !taskclock_read(row->clock_fd, &clock))
		return false;
	uint64_t run = run_ns - row->clock_run0_ns;
	return run > clock && (double)(run - clock) >= ARRIVAL_SPAN_MIN * (double)run;
}

void ps_arrivals_account(struct perf_sampler *ps, struct thread_row *row,
			 const struct procfs_schedstat *ss, uint64_t now)
{
	if (!row->arrivals) {
		if (!ps->arrival_rings || row->clock_fd < 0 || row->arrivals_refused ||
		    now - row->span_checked_ns < ARRIVAL_PERIOD_EVERY_NS)
			return;
		row->span_checked_ns = now;
		if (span_worth_placing(row, ss->runtime_ns))
			arrivals_open(ps, row, ss, now);
		return;
	}
	arrivals_tell_span(ps, row, ss->runtime_ns);
	if (now - row->period_read_ns >= ARRIVAL_PERIOD_EVERY_NS)
		arrivals_adjust_period(ps, row, ss, now);
}
