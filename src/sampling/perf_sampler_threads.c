/* perf_sampler_threads.c: the rows of the threads perf_sampler follows
 * (perf_sampler_internal.h): made at a thread's birth, an exec or its
 * first sample, by the recorder's slot; its name read once a second, its
 * run time at its samples, and its own clocks once it is long-lived
 * (perf_sampler.c says why). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "clock.h"
#include "error.h"
#include "perf_sampler_internal.h"
#include "procfs.h"
#include "stackmap.h"
#include "taskclock.h"

/* descriptors left for the rest of csampler (its /proc and mapped files)
 * when the budget of the threads' own events is drawn */
#define OWN_FD_RESERVE 256u

/* Names change (pthread_setname_np): a sampled thread's name is read again
 * after this long. */
#define RENAME_CHECK_NS 1000000000u
/* A sampled thread's run time is read again at a sample this long after the
 * last read: a thread that ends is accounted up to about its last sample
 * (its end is seen once its /proc entry is gone). */
#define ACCOUNT_EVERY_NS 2000000u

/* The thread in ROW (pid, tid, process, key). */
const struct recorder_followed *ps_row_id(const struct perf_sampler *ps,
					      const struct thread_row *row)
{
	return recorder_followed(ps->rec, (uint32_t)(row - ps->rows));
}

struct thread_row *ps_row_find(struct perf_sampler *ps, pid_t tid)
{
	uint32_t slot = recorder_followed_slot(ps->rec, tid);
	return slot < ps->rows_cap ? &ps->rows[slot] : NULL;
}

/* A row for thread TID of P (followed in the recorder). NULL out of memory. */
struct thread_row *ps_row_make(struct perf_sampler *ps, struct recorder_process *p, pid_t tid)
{
	if (recorder_reserve_threads(ps->rec, 1) < 0)
		return NULL;
	size_t cap = recorder_thread_slots(ps->rec);
	if (cap > ps->rows_cap) {
		struct thread_row *rows = realloc(ps->rows, cap * sizeof *rows);
		if (!rows)
			return NULL;
		memset(rows + ps->rows_cap, 0, (cap - ps->rows_cap) * sizeof *rows);
		ps->rows = rows;
		int *fds = realloc(ps->own_fds, cap * ps->ncpus * sizeof *fds);
		if (!fds)
			return NULL;
		ps->own_fds = fds;
		int *afds = realloc(ps->arrival_fds, cap * ps->ncpus * sizeof *afds);
		if (!afds)
			return NULL;
		ps->arrival_fds = afds;
		for (size_t i = ps->rows_cap * ps->ncpus; i < cap * ps->ncpus; i++)
			fds[i] = afds[i] = -1;
		ps->rows_cap = cap;
	}
	uint32_t slot = recorder_follow_thread(ps->rec, p, tid);
	if (slot == RECORDER_NO_SLOT)
		return NULL;
	ps->rows[slot] = (struct thread_row){ .schedstat_fd = -1, .clock_fd = -1 };
	return &ps->rows[slot];
}

/* ROW's schedstat now (by its kept descriptor, or its path): false, gone. */
bool ps_row_schedstat(const struct perf_sampler *ps, const struct thread_row *row,
		      struct procfs_schedstat *ss)
{
	char buf[128];
	const struct recorder_followed *id = ps_row_id(ps, row);
	return row->schedstat_fd >= 0 ? procfs_read_schedstat(row->schedstat_fd, ss)
				      : procfs_read_file(id->pid, id->tid, "schedstat", buf, sizeof buf) > 0 &&
					procfs_parse_schedstat(buf, ss);
}

/* Tell the recorder the CPU ROW's thread used since the last read (its
 * schedstat run time): each thread's total in the outputs is then the
 * kernel's account of it (stackmap_scaler_init), as with ptrace. Read at its
 * samples (at most every ACCOUNT_EVERY_NS), at its exit and at the end; a
 * thread gone before a read is accounted up to the last one. */
void ps_row_account(struct perf_sampler *ps, struct thread_row *row, uint64_t now)
{
	char buf[128];
	struct procfs_schedstat ss;
	const struct recorder_followed *id = ps_row_id(ps, row);
	row->read_ns = now;
	if (row->schedstat_fd < 0 && ps->own_fd_budget > 0) {
		row->schedstat_fd = procfs_open_task_file(-1, id->pid, id->tid, "schedstat");
		ps->own_fd_budget -= row->schedstat_fd >= 0;
	}
	if (row->schedstat_fd >= 0 ? !procfs_read_schedstat(row->schedstat_fd, &ss)
				   : procfs_read_file(id->pid, id->tid, "schedstat", buf, sizeof buf) <= 0 ||
				     !procfs_parse_schedstat(buf, &ss))
		return;
	if (row->have_runtime && ss.runtime_ns > row->runtime_ns)
		row->unaccounted_ns += ss.runtime_ns - row->runtime_ns;
	row->runtime_ns = ss.runtime_ns;
	row->have_runtime = true;
	/* a thread not sampled yet (made at its birth, read at its exit or
	 * at the end) has CPU too: the pool of the short-lived threads takes
	 * it, with no key made for it */
	if (row->unaccounted_ns && id->key == UINT32_MAX) {
		recorder_account_unnamed_cpu(ps->rec, row->unaccounted_ns);
		row->unaccounted_ns = 0;
	}
	if (row->unaccounted_ns && id->key != UINT32_MAX) {
		recorder_account_cpu(ps->rec, id->key, row->unaccounted_ns);
		row->unaccounted_ns = 0;
	}
	if (row->clock_fd >= 0)
		ps_arrivals_account(ps, row, &ss, now);
}

/* ---- a thread's own clocks -------------------------------------------------- */

static int *row_own_fds(struct perf_sampler *ps, const struct thread_row *row)
{
	return &ps->own_fds[(size_t)(row - ps->rows) * ps->ncpus];
}

/* ROW's run time now: its schedstat's, or, gone, the last read (at its
 * exit's stop). */
static uint64_t row_runtime_now(const struct perf_sampler *ps, struct thread_row *row)
{
	struct procfs_schedstat ss;
	return ps_row_schedstat(ps, row, &ss) ? ss.runtime_ns : row->runtime_ns;
}

/* The switch into ROW's thread while it had its own clocks, and its task
 * clock beside them (taskclock.h; the own clocks' counts are no measure of
 * it: on the epoll pair they came to 3% and 7% over the threads' run
 * time, where the task clock was 2.0% and 7.9% under, as the fixture's own
 * clocks said): its run time from each pick against its time on a CPU
 * from each switch in done. Read while it may run (each run time read a
 * scheduler tick behind at most). No stops: all of the span is its own. */
static void own_count_switches(struct perf_sampler *ps, struct thread_row *row)
{
	uint64_t clock;
	bool read = taskclock_read(row->clock_fd, &clock);
	close(row->clock_fd);
	row->clock_fd = -1;
	ps->own_fd_budget++;
	uint64_t run = row_runtime_now(ps, row);
	if (!read || run <= row->clock_run0_ns)
		return;
	if (row->arrivals) {
		ps_arrivals_tell(ps, row, run, clock);
		ps->stats.switch_placed_ns += row->span_told_ns;
	}
	run -= row->clock_run0_ns;
	ps->stats.switch_in_ns += run > clock ? run - clock : 0;
	ps->stats.switch_run_ns += run;
}

/* ROW's own clocks closed (what they wrote stays in the rings), the CPUs'
 * clocks given it back. */
void ps_own_close(struct perf_sampler *ps, struct thread_row *row)
{
	if (!row->own)
		return;
	int *fds = row_own_fds(ps, row);
	if (row->clock_fd >= 0)
		own_count_switches(ps, row);   /* (the span's last part told first) */
	if (row->arrivals)
		ps_arrivals_close(ps, row);
	for (unsigned c = 0; c < ps->ncpus; c++)
		if (fds[c] >= 0) {
			close(fds[c]);
			fds[c] = -1;
			ps->own_fd_budget++;
		}
	(void)ps_filter_map_set(ps->owned_map, (uint32_t)ps_row_id(ps, row)->tid, false);
	row->own = false;
	ps->stats.own_threads_now--;
}

/* Say once that thread TID and others stay on the CPUs' clocks. */
static void own_refused(struct perf_sampler *ps, pid_t tid, int err)
{
	ps->stats.own_refused++;
	if (ps->warned_own)
		return;
	ps->warned_own = true;
	struct rlimit rl;
	if ((err == EMFILE || err == 0) && getrlimit(RLIMIT_NOFILE, &rl) == 0)
		warn("the open-file limit (%llu) holds no more perf events for threads (one a CPU): "
		     "thread %d and later ones are sampled by the CPUs' clocks, which miss part of "
		     "the CPU of threads that sleep and wake thousands of times a second; raise "
		     "'ulimit -n' (the hard limit too) for a truer profile",
		     (unsigned long long)rl.rlim_cur, (int)tid);
	else
		warn("cannot give thread %d a perf event of its own (%s): it and any other refused "
		     "are sampled by the CPUs' clocks, which miss part of the CPU of threads that "
		     "sleep and wake thousands of times a second", (int)tid, strerror(err));
}

/* Give ROW's thread its own clocks: an event per CPU bound to it, written
 * into that CPU's ring; then the CPUs' clocks leave it (the owned map).
 * A thread gone meanwhile is left as it is. */
void ps_own_open(struct perf_sampler *ps, struct thread_row *row)
{
	pid_t tid = ps_row_id(ps, row)->tid;
	int *fds = row_own_fds(ps, row);
	unsigned rings = 0;
	for (unsigned c = 0; c < ps->ncpus; c++)
		rings += ps->rings[c].fd >= 0;
	if (ps->own_fd_budget < rings) {
		row->own_refused = true;
		own_refused(ps, tid, 0);
		return;
	}
	int err = 0;
	for (unsigned c = 0; c < ps->ncpus && !err; c++) {
		if (ps->rings[c].fd < 0)
			continue;
		fds[c] = ps_perf_event_open(&ps->attr, tid, (int)c, -1, PERF_FLAG_FD_CLOEXEC);
		if (fds[c] < 0 || ioctl(fds[c], PERF_EVENT_IOC_SET_OUTPUT, ps->rings[c].fd) < 0)
			err = errno;
	}
	if (!err && ps_filter_map_set(ps->owned_map, (uint32_t)tid, true) < 0)
		err = errno;
	if (err) {
		for (unsigned c = 0; c < ps->ncpus; c++)
			if (fds[c] >= 0) {
				close(fds[c]);
				fds[c] = -1;
			}
		if (err == ESRCH)
			return;   /* the thread ended: its exit event releases the row */
		row->own_refused = true;
		own_refused(ps, tid, err);
		return;
	}
	ps->own_fd_budget -= rings;
	row->own = true;
	/* its task clock, where a descriptor is left: the switch into it */
	if (ps->own_fd_budget > 0 && (row->clock_fd = taskclock_open(tid)) >= 0) {
		ps->own_fd_budget--;
		/* (its switches over its run from here choose its arrivals'
		 * period: none without them) */
		struct procfs_schedstat ss;
		row->arrivals_refused = !ps_row_schedstat(ps, row, &ss);
		row->clock_run0_ns = row->arrivals_refused ? row->runtime_ns : ss.runtime_ns;
		row->clock_arrivals0 = row->arrivals_refused ? 0 : ss.arrivals;
	}
	ps->stats.own_threads++;
	ps->stats.own_threads_now++;
}

/* The open-file limit less what is open and a reserve: the descriptors the
 * threads' own events may take. */
size_t ps_own_fd_budget(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 0;
	size_t limit = rl.rlim_cur == RLIM_INFINITY ? SIZE_MAX / 2 : (size_t)rl.rlim_cur;
	size_t open = procfs_open_fds();
	size_t used = open + OWN_FD_RESERVE;
	return limit > used ? limit - used : 0;
}

void ps_row_release(struct perf_sampler *ps, struct thread_row *row)
{
	ps_own_close(ps, row);
	ps_row_account(ps, row, clock_monotonic_ns());
	if (row->schedstat_fd >= 0) {
		close(row->schedstat_fd);
		row->schedstat_fd = -1;
		ps->own_fd_budget++;
	}
	recorder_unfollow_thread(ps->rec, (uint32_t)(row - ps->rows));
}

void ps_rows_of_process_release(struct perf_sampler *ps, pid_t pid)
{
	for (size_t i = 0; i < ps->rows_cap; i++) {
		const struct recorder_followed *id = recorder_followed(ps->rec, (uint32_t)i);
		if (id->tid && id->pid == pid)
			ps_row_release(ps, &ps->rows[i]);
	}
}

/* ROW's key: made at its first sample, and again when its name changed
 * (read from /proc at most once a second). UINT32_MAX out of memory. */
static uint32_t row_name(struct perf_sampler *ps, struct thread_row *row, uint64_t now)
{
	const struct recorder_followed *id = ps_row_id(ps, row);
	uint32_t key = id->key;
	if (key == UINT32_MAX || now - row->named_ns >= RENAME_CHECK_NS) {
		row->named_ns = now;
		char comm[16];
		bool named = true;
		if (procfs_read_file(id->pid, id->tid, "comm", comm, sizeof comm) > 0)
			comm[strcspn(comm, "\n")] = '\0';
		else if (key == UINT32_MAX)  /* gone before its first sample was read */
			memcpy(comm, id->proc->comm, sizeof comm - 1);
		else
			named = false;   /* gone: keeps its name */
		comm[sizeof comm - 1] = '\0';
		if (named)
			key = recorder_name_thread(ps->rec, (uint32_t)(row - ps->rows), comm);
	}
	return key;
}

/* ROW's key (row_name); its CPU told at most every ACCOUNT_EVERY_NS. */
uint32_t ps_row_key(struct perf_sampler *ps, struct thread_row *row)
{
	uint64_t now = clock_monotonic_ns();
	uint32_t key = row_name(ps, row, now);
	if (key != UINT32_MAX && (!row->have_runtime || now - row->read_ns >= ACCOUNT_EVERY_NS))
		ps_row_account(ps, row, now);
	return key;
}

