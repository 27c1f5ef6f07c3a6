/* sampler: see sampler.h.
 *
 * Per thread we keep /proc files open and read them with pread: schedstat
 * (run time, run delay and arrivals on a CPU) from the start; stat (state
 * and comm) once it is a candidate; syscall (--idle) once it is read where
 * it waits.
 *
 * On-CPU mode estimates where CPU time goes, unbiased by construction:
 *   - A tick is a random instant of its period (clock.h), and csampler runs
 *     SCHED_FIFO, so the tick acts at that instant and not when a busy
 *     target thread leaves the CPU.
 *   - At the tick, a thread is a candidate if it may be running now: it
 *     arrived on a CPU or ran since its last read, or was running ('R') at
 *     its last read. (Run time alone cannot tell: the kernel updates a
 *     running thread's total only at scheduler ticks and switches.) The
 *     candidates whose stat says 'R' are stopped together, at most one per
 *     CPU, those with the most unsampled CPU time first.
 *   - Each sample counts one period: the expected count of a thread and
 *     code location is its CPU time there divided by the period. Every
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
 *     wheel for the tick of its next read, so a tick costs the threads it
 *     reads, not every thread.
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
 *     the thread slept. A stop at a preemption point in user code is kept:
 *     the thread was executing there.
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
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "blocked.h"
#include "clock.h"
#include "error.h"
#include "procfs.h"
#include "recorder.h"
#include "sampler.h"
#include "tempfile.h"
#include "tidmap.h"

/* Idle threads are all read every tick while their reads stay within
 * IDLE_READS_PER_SEC (a read costs about 3 us: 4000 a second are 1.2% of a
 * core); with more, an idle one is read with probability 2^-k (see
 * schedule_read), k at most the level that keeps the expected idle reads
 * within that, and so that 2^k <= IDLE_MAX_SKIP and 2^k periods <=
 * IDLE_MAX_SKIP_NS (the most one sample may stand for: it bounds the
 * variance). 10,000 sleeping threads at 999 Hz: k = 10, ~10 reads a tick. */
#define IDLE_READS_PER_SEC 4000u
#define IDLE_MAX_LEVEL 10
#define IDLE_MAX_SKIP (1u << IDLE_MAX_LEVEL)
#define IDLE_MAX_SKIP_NS 2000000000u

/* The timing wheel of reads: a thread due at tick k is in bucket k mod
 * WHEEL (one due later stays there for another turn). */
#define WHEEL 4096u
#define NO_SLOT UINT32_MAX

struct thread_state {
	pid_t pid, tid;               /* tid 0: free slot */
	int schedstat_fd, stat_fd, syscall_fd;
	uint64_t runtime_ns;          /* last read */
	uint64_t arrivals;            /* times it got a CPU, as of the last read */
	int64_t unsampled_ns;         /* run time not yet stood for by samples */
	uint64_t late_until_ns;       /* a late stop is expected until then */
	bool idle;                    /* did not run at its last read, nor was running */
	unsigned level;               /* its next read was drawn with p = 2^-level */
	bool woke;                    /* it ran while we sampled (level grows by one) */
	unsigned weight;              /* periods this tick's sample counts */
	uint64_t due;                 /* the tick of its next read */
	uint32_t wnext, wprev;        /* its wheel bucket's list (slots), or NO_SLOT */
	bool queued;                  /* in the wheel */
	bool running;                 /* its stat said 'R' at the last read */
	int cpu;                      /* the CPU its stat named at that read, -1: unknown */
	bool ran;                     /* its run time or arrivals moved at the last read */
	bool fresh;                   /* not read yet */
	uint64_t run_delay_ns;        /* time it waited for a CPU, as of the tick's read */
	uint64_t seen_ns, done_ns;    /* the round saw it stopped, then was done copying */
	uint32_t key;                 /* current thread key */
	struct recorder_process *proc;
	/* --idle: the last captured stack, reused while the thread sleeps */
	uint64_t *last_stack;
	unsigned last_depth;
	uint32_t last_flags;
	bool has_last;
	bool retired;                 /* gone during a tick; released after it */
};

/* A tick samples in at most this many rounds (see the choice in the tick). */
#define MAX_ROUNDS 3

/* Descriptors left to everything but the threads' /proc files (mappings,
 * the spill file, symbolizing and writing start after those are closed). */
#define FD_RESERVE 96

/* Threads whose /proc entry was found gone in one tick, told to target
 * after it (more wait for the next tick). */
#define GONE_PER_TICK 16

struct sampler {
	struct target *target;
	struct recorder *rec;           /* processes, thread keys, unwinding and counting */
	struct sampler_config cfg;
	uint64_t period_ns;
	unsigned max_per_tick;
	unsigned max_skip_level;       /* an idle thread is read with p >= 2^-level */
	unsigned idle_level;           /* this tick: idle threads go up to this level */
	size_t nidle;                  /* threads idle as of their last read */
	double log_miss[IDLE_MAX_LEVEL + 1]; /* log(1 - 2^-level): geometric gaps */
	uint32_t wheel[WHEEL];         /* bucket heads (slots), NO_SLOT if empty */
	uint32_t *due;                 /* scratch: the slots due this tick */
	unsigned ncpus;                /* online CPUs */
	uint64_t rng;                  /* xorshift64: which idle threads are read */

	int *task_dirs;                /* by process index: /proc/PID/task while it is
	                                * alive (-1: none) */
	size_t task_dirs_cap;
	int no_task_dir;               /* task_dir_of a process without room */

	struct thread_state *threads;  /* slots; tid 0 = free */
	size_t nthreads_cap, nused;
	uint32_t *free_slots;          /* stack of free slots */
	size_t nfree;
	struct tidmap tids;            /* tid -> slot */
	struct target_thread *pending; /* threads seen by target, added at the next tick */
	size_t npending, pending_cap;
	bool pending_lost;             /* out of memory for pending: take target's list */

	/* per tick scratch, grown at warm-up */
	size_t scratch_cap;
	pid_t *chosen_tids;
	struct thread_state **chosen;
	bool *captured;                /* the round stopped and copied it */
	size_t round_base;             /* chosen[] index of the round's first thread */
	size_t round_dropped;          /* stops of the round found waiting */
	struct unwind_snapshot *snaps;  /* one per thread of a round (chosen index) */
	size_t nsnaps;
	struct unwind_snapshot late_snap;  /* the late stop being sampled */
	struct unwind_snapshot blocked_snap; /* --idle: a blocked thread read in place */
	struct thread_state *late_thread;  /* its thread, between capture and done */
	uint64_t late_seen_ns;

	bool in_tick;                  /* target events now are deferred */
	pid_t gone[GONE_PER_TICK];     /* listed by target, /proc entry gone: told after the tick */
	size_t nfds, max_fds;          /* threads' /proc files open, and the most the fd
	                                * limit allows (leaving FD_RESERVE) */
	size_t ngone;
	size_t nretired;               /* threads marked retired in this tick */
	uint64_t tick_start_ns;
	uint64_t round_start_ns;
	uint64_t next_tick_ns;         /* the next tick's instant, 0: none */
	int round_cpu;                 /* the CPU csampler ran the round on (-1: unknown) */
	struct sampler_stats stats;
};


static void close_task_file(struct sampler *s, int *fd);

/* ---- processes --------------------------------------------------------------- */

/* Process P's /proc/PID/task descriptor (-1: none). */
static int *task_dir_of(struct sampler *s, const struct recorder_process *p)
{
	if (p->index >= s->task_dirs_cap) {
		s->no_task_dir = -1;  /* (no room was made for it: out of memory) */
		return &s->no_task_dir;
	}
	return &s->task_dirs[p->index];
}

/* The live process PID (the recorder's), with its task directory open. */
static struct recorder_process *process_get(struct sampler *s, pid_t pid)
{
	struct recorder_process *p = recorder_add_process(s->rec, pid);
	if (!p)
		return NULL;
	if (p->index >= s->task_dirs_cap) {
		size_t was = s->task_dirs_cap;
		if (array_grow(&s->task_dirs, &s->task_dirs_cap, p->index + 1, sizeof *s->task_dirs,
			       4) < 0)
			return NULL;
		for (size_t i = was; i < s->task_dirs_cap; i++)
			s->task_dirs[i] = -2;  /* not opened yet */
	}
	int *dir = task_dir_of(s, p);
	if (*dir == -2) {
		*dir = s->nfds < s->max_fds ? procfs_open_task_dir(pid) : -1;
		s->nfds += *dir >= 0;
	}
	return p;
}

/* ---- threads ------------------------------------------------------------------ */

static uint32_t slot_of(const struct sampler *s, const struct thread_state *t)
{
	return (uint32_t)(t - s->threads);
}

static struct thread_state *thread_find(struct sampler *s, pid_t tid)
{
	uint32_t slot;
	return tidmap_get(&s->tids, tid, &slot) ? &s->threads[slot] : NULL;
}

/* ---- the wheel of reads ------------------------------------------------------------ */

static void wheel_insert(struct sampler *s, struct thread_state *t, uint64_t due)
{
	uint32_t slot = slot_of(s, t), *head = &s->wheel[due % WHEEL];
	t->due = due;
	t->wprev = NO_SLOT;
	t->wnext = *head;
	if (*head != NO_SLOT)
		s->threads[*head].wprev = slot;
	*head = slot;
	t->queued = true;
}

static void wheel_remove(struct sampler *s, struct thread_state *t)
{
	if (!t->queued)
		return;
	if (t->wprev != NO_SLOT)
		s->threads[t->wprev].wnext = t->wnext;
	else
		s->wheel[t->due % WHEEL] = t->wnext;
	if (t->wnext != NO_SLOT)
		s->threads[t->wnext].wprev = t->wprev;
	t->queued = false;
}

/* Take the threads due at tick NOW out of the wheel into s->due. */
static size_t wheel_take_due(struct sampler *s, uint64_t now)
{
	uint32_t slot = s->wheel[now % WHEEL];
	size_t n = 0;
	while (slot != NO_SLOT) {
		struct thread_state *t = &s->threads[slot];
		uint32_t next = t->wnext;
		if (t->due <= now) {
			wheel_remove(s, t);
			s->due[n++] = slot;
		}
		slot = next;
	}
	return n;
}

/* When to read T next, after a read at tick NOW that found it idle or not.
 * A thread that ran is read at the next tick. An idle one goes one level
 * up (to the tick's cap): its next read is drawn with probability 2^-level
 * at each tick, as a geometric gap, so the draw is made before the thread
 * is looked at and a sample then counts 2^level periods (Horvitz-Thompson:
 * the expectation stays its CPU time). The longer a thread sleeps, the
 * seldomer it is read: a process with 10,000 sleeping threads costs a few
 * dozen reads per tick. */
static void schedule_read(struct sampler *s, struct thread_state *t, uint64_t now)
{
	uint64_t gap = 1;
	if (t->ran)
		t->woke = true;
	if (s->cfg.idle || !t->idle) {
		t->level = 0;
	} else {
		/* A thread found asleep that we never saw run (a process met
		 * with thousands of them) goes to the top level at once. */
		if (t->level < s->idle_level && t->woke)
			t->level++;
		else
			t->level = s->idle_level;
		if (t->level > 0) {
			/* u in (0, 1]: the gap is 1 + floor(log(u) / log(1 - p)) */
			double u = (double)((clock_xorshift64(&s->rng) >> 11) + 1) / 9007199254740992.0;
			double g = log(u) / s->log_miss[t->level];
			gap = g < (double)(1u << 30) ? 1 + (uint64_t)g : 1u << 30;
		}
	}
	wheel_insert(s, t, now + gap);
}

/* A thread cannot be followed for want of file descriptors: say so once. */
static void warn_fd_short(struct sampler *s, pid_t tid)
{
	struct rlimit rl;
	s->stats.fd_short++;
	if (s->stats.fd_short > 1)
		return;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		warn("cannot follow thread %d and others: out of file descriptors (the limit is "
		     "%llu; csampler keeps 1 per thread, 2 for one that runs): raise it with "
		     "'ulimit -n' (as root, also the hard limit)", (int)tid,
		     (unsigned long long)rl.rlim_cur);
	else
		warn_errno("cannot follow thread %d and others", (int)tid);
}

/* Open NAME of thread T's /proc directory into *FD, within the budget. */
static bool open_task_file(struct sampler *s, struct thread_state *t, const char *name, int *fd)
{
	if (*fd >= 0)
		return true;
	if (s->nfds >= s->max_fds) {
		warn_fd_short(s, t->tid);
		errno = EMFILE;
		return false;
	}
	*fd = procfs_open_task_file(*task_dir_of(s, t->proc), t->pid, t->tid, name);
	if (*fd < 0) {
		if (errno == EMFILE || errno == ENFILE)
			warn_fd_short(s, t->tid);
		return false;
	}
	s->nfds++;
	return true;
}

static void close_task_file(struct sampler *s, int *fd)
{
	if (*fd < 0)
		return;
	close(*fd);
	*fd = -1;
	s->nfds--;
}

static void thread_close_files(struct sampler *s, struct thread_state *t)
{
	close_task_file(s, &t->schedstat_fd);
	close_task_file(s, &t->stat_fd);
	close_task_file(s, &t->syscall_fd);
}

static void thread_release(struct sampler *s, struct thread_state *t)
{
	if (!t->tid)
		return;
	thread_close_files(s, t);
	wheel_remove(s, t);
	tidmap_remove(&s->tids, t->tid);
	s->nidle -= t->idle;
	free(t->last_stack);
	memset(t, 0, sizeof *t);
	t->schedstat_fd = t->stat_fd = t->syscall_fd = -1;
	s->free_slots[s->nfree++] = slot_of(s, t);
	s->nused--;
}

static int grow_scratch(struct sampler *s, size_t want)
{
	if (want <= s->scratch_cap)
		return 0;
	size_t cap = s->scratch_cap ? s->scratch_cap : 8;
	while (cap < want)
		cap *= 2;
	pid_t *tids = realloc(s->chosen_tids, cap * sizeof *tids);
	if (tids)
		s->chosen_tids = tids;
	struct thread_state **ch = realloc(s->chosen, cap * sizeof *ch);
	if (ch)
		s->chosen = ch;
	bool *cp = realloc(s->captured, cap * sizeof *cp);
	if (cp)
		s->captured = cp;
	uint32_t *due = realloc(s->due, cap * sizeof *due);
	if (due)
		s->due = due;
	if (!tids || !ch || !cp || !due)
		return -1;
	s->scratch_cap = cap;
	return 0;
}

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

/* Make room for WANT more threads up front: thread_add must not move the
 * table while a tick holds pointers into it. */
static int reserve_thread_slots(struct sampler *s, size_t want)
{
	if (s->nfree >= want)
		return 0;
	size_t cap = s->nthreads_cap ? s->nthreads_cap : 16;
	while (cap - s->nused < want)
		cap *= 2;
	struct thread_state *nt = realloc(s->threads, cap * sizeof *nt);
	if (!nt)
		return -1;
	s->threads = nt;
	uint32_t *fs = realloc(s->free_slots, cap * sizeof *fs);
	if (!fs)
		return -1;
	s->free_slots = fs;
	memset(nt + s->nthreads_cap, 0, (cap - s->nthreads_cap) * sizeof *nt);
	/* the new slots are taken lowest first */
	for (size_t i = cap; i-- > s->nthreads_cap;)
		s->free_slots[s->nfree++] = (uint32_t)i;
	s->nthreads_cap = cap;
	if (tidmap_reserve(&s->tids, cap) < 0 || grow_scratch(s, cap) < 0)
		return -1;
	return 0;
}

/* Room for what the next tick may add: a slot per queued thread, a key per
 * thread it may read (new, or renamed), and queue space for threads that
 * start during it. Made between ticks, never while a tick holds pointers
 * into the slots, so a tick allocates nothing however threads churn; where
 * this fails, the tick tries again itself. */
static void reserve_next_tick(struct sampler *s)
{
	if (s->in_tick)
		return;
	(void)reserve_thread_slots(s, s->npending);
	recorder_reserve_keys(s->rec, s->nused + s->npending + 64);
	if (s->npending + 64 > s->pending_cap)
		(void)array_grow(&s->pending, &s->pending_cap, s->npending + 64, sizeof *s->pending, 64);
}

static struct thread_state *thread_add(struct sampler *s, pid_t pid, pid_t tid)
{
	struct recorder_process *proc = process_get(s, pid);
	if (!proc || s->nfree == 0)
		return NULL;  /* (reserve_thread_slots was called) */
	struct thread_state *t = &s->threads[s->free_slots[s->nfree - 1]];
	memset(t, 0, sizeof *t);
	t->pid = pid;
	t->tid = tid;
	t->proc = proc;
	t->key = UINT32_MAX;
	t->schedstat_fd = t->stat_fd = t->syscall_fd = -1;
	t->cpu = -1;
	if (!open_task_file(s, t, "schedstat", &t->schedstat_fd)) {
		/* Gone already: keep nothing, and make sure target knows. */
		if (errno == ENOENT && s->ngone < GONE_PER_TICK)
			s->gone[s->ngone++] = tid;
		t->tid = 0;
		return NULL;
	}
	if (s->cfg.idle) {
		t->last_stack = malloc(s->cfg.max_depth * sizeof *t->last_stack);
		if (!t->last_stack) {
			close_task_file(s, &t->schedstat_fd);
			t->tid = 0;
			return NULL;
		}
	}
	s->nfree--;
	s->nused++;
	tidmap_put(&s->tids, tid, slot_of(s, t));  /* reserved: no allocation */
	/* Whether it runs now, the next read of its state tells; its first
	 * read (read_thread) takes its run time as it is. */
	t->fresh = true;
	t->running = true;
	s->stats.threads_seen++;
	return t;
}

/* Target saw thread TID of PID: add it at the next tick. */
static void queue_thread(struct sampler *s, pid_t pid, pid_t tid)
{
	if (array_grow(&s->pending, &s->pending_cap, s->npending + 1, sizeof *s->pending, 64) < 0) {
		s->pending_lost = true;
		return;
	}
	s->pending[s->npending++] = (struct target_thread){ .pid = pid, .tid = tid };
}

/* Target says TID (or every thread of PID, TID 0) is gone: forget it if it
 * waits to be added (a thread that lived less than a tick). */
static void unqueue_thread(struct sampler *s, pid_t pid, pid_t tid)
{
	for (size_t i = s->npending; i-- > 0;)
		if (tid ? s->pending[i].tid == tid : s->pending[i].pid == pid)
			s->pending[i] = s->pending[--s->npending];
}

/* Add the threads target saw since the last tick, each read at once. */
static int add_pending(struct sampler *s, uint64_t now)
{
	if (s->pending_lost) {
		/* a list was lost to memory: take target's whole list */
		const struct target_thread *tl;
		size_t n = target_threads(s->target, &tl);
		s->npending = 0;
		s->pending_lost = false;
		for (size_t i = 0; i < n; i++)
			if (!thread_find(s, tl[i].tid))
				queue_thread(s, tl[i].pid, tl[i].tid);
	}
	if (reserve_thread_slots(s, s->npending) < 0)
		return -1;
	for (size_t i = 0; i < s->npending; i++) {
		pid_t pid = s->pending[i].pid, tid = s->pending[i].tid;
		struct thread_state *t = thread_find(s, tid);
		if (t && t->pid == pid)
			continue;
		if (t)
			thread_release(s, t);  /* its tid was taken by another process */
		t = thread_add(s, pid, tid);
		if (t)
			wheel_insert(s, t, now);
	}
	s->npending = 0;
	return 0;
}

static void capture_late(void *ctx, pid_t tid);
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
		s->cfg.rate = 99;
	s->period_ns = 1000000000u / s->cfg.rate;
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
	struct rlimit rl;
	s->max_fds = SIZE_MAX;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		s->max_fds = rl.rlim_cur > FD_RESERVE ? (size_t)(rl.rlim_cur - FD_RESERVE) : 0;
	if (grow_scratch(s, 16) < 0 || grow_snaps(s, MAX_ROUNDS * s->max_per_tick) < 0 ||
	    unwind_snapshot_init(&s->late_snap, s->cfg.stack_window) < 0 ||
	    unwind_snapshot_init(&s->blocked_snap, s->cfg.stack_window) < 0) {
		sampler_free(s);
		return NULL;
	}
	target_set_late_sample(t, capture_late, count_late, s);
	/* the threads attached before we were made; later ones come as events */
	const struct target_thread *tl;
	size_t n = target_threads(t, &tl);
	for (size_t i = 0; i < n; i++)
		queue_thread(s, tl[i].pid, tl[i].tid);
	return s;
}

void sampler_free(struct sampler *s)
{
	if (!s)
		return;
	target_set_late_sample(s->target, NULL, NULL, NULL);
	for (size_t i = 0; i < s->nthreads_cap; i++)
		if (s->threads[i].tid) {
			thread_close_files(s, &s->threads[i]);
			free(s->threads[i].last_stack);
		}
	free(s->threads);
	free(s->free_slots);
	tidmap_free(&s->tids);
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
		close_task_file(s, &s->task_dirs[i]);
	free(s->task_dirs);
	free(s);
}

void sampler_close_threads(struct sampler *s)
{
	for (size_t i = 0; i < s->nthreads_cap; i++)
		if (s->threads[i].tid)
			thread_close_files(s, &s->threads[i]);
	for (size_t i = 0; i < s->task_dirs_cap; i++)
		close_task_file(s, &s->task_dirs[i]);
}

/* A thread is gone (event). During a tick the thread may be among the chosen
 * ones, so it is only marked and released when the tick ends. */
static void thread_retire(struct sampler *s, struct thread_state *t)
{
	if (!s->in_tick) {
		thread_release(s, t);
	} else if (!t->retired) {
		t->retired = true;
		s->nretired++;
	}
}

static void release_retired(struct sampler *s)
{
	if (!s->nretired)
		return;
	for (size_t i = 0; i < s->nthreads_cap; i++)
		if (s->threads[i].tid && s->threads[i].retired)
			thread_release(s, &s->threads[i]);
	s->nretired = 0;
}

void sampler_on_event(struct sampler *s, const struct target_event *ev)
{
	struct recorder_process *p;
	struct thread_state *t;

	switch (ev->kind) {
	case TARGET_EV_PROCESS_NEW:
		process_get(s, ev->pid);
		break;
	case TARGET_EV_EXEC:
		p = recorder_find_process(s->rec, ev->pid);
		if (!p) {
			process_get(s, ev->pid);
			break;
		}
		recorder_process_exec(s->rec, p);
		/* The surviving thread may have changed its tid to the pid and its
		 * /proc files now describe the new image: add it again. */
		for (size_t i = 0; i < s->nthreads_cap; i++)
			if (s->threads[i].tid && s->threads[i].pid == ev->pid)
				thread_retire(s, &s->threads[i]);
		unqueue_thread(s, ev->pid, 0);
		queue_thread(s, ev->pid, ev->pid);
		break;
	case TARGET_EV_PROCESS_EXIT:
		p = recorder_find_process(s->rec, ev->pid);
		if (p) {
			recorder_process_exit(s->rec, p);
			close_task_file(s, task_dir_of(s, p));
		}
		for (size_t i = 0; i < s->nthreads_cap; i++)
			if (s->threads[i].tid && s->threads[i].pid == ev->pid)
				thread_retire(s, &s->threads[i]);
		unqueue_thread(s, ev->pid, 0);
		if (!s->in_tick)
			recorder_release_gone(s->rec);
		break;
	case TARGET_EV_THREAD_NEW:
		queue_thread(s, ev->pid, ev->tid);
		reserve_next_tick(s);
		break;
	case TARGET_EV_THREAD_EXIT:
		t = thread_find(s, ev->tid);
		if (t)
			thread_retire(s, t);
		else
			unqueue_thread(s, ev->pid, ev->tid);
		break;
	}
}

void sampler_note_missed(struct sampler *s, uint64_t missed)
{
	s->stats.ticks_missed += missed;
}

/* Count T's unwound stack, standing for COUNT periods. */
static void count_stack(struct sampler *s, const struct thread_state *t, uint32_t flags,
			const uint64_t *addrs, unsigned depth, unsigned count)
{
	recorder_count(s->rec, t->key, flags, addrs, depth, count);
}

/* Refresh a thread's state, CPU and name from its stat file. false if gone. */
static bool thread_read_stat(struct sampler *s, struct thread_state *t, char *state)
{
	char buf[512];
	struct procfs_stat st;
	if (!open_task_file(s, t, "stat", &t->stat_fd) ||
	    procfs_pread_text(t->stat_fd, buf, sizeof buf) <= 0 || !procfs_parse_stat(buf, &st))
		return false;
	*state = st.state;
	t->cpu = st.cpu;
	t->key = recorder_thread_key(s->rec, t->proc, t->tid, st.comm, t->key);
	return true;
}

static void count_captured(struct sampler *s, struct thread_state *t,
			   const struct unwind_snapshot *snap);

/* --idle: T is not running. Copy it where it waits, without a stop (no
 * blocked call is interrupted), and count it. Returns false if it runs now
 * (or kept running during the tries): the caller stops it then. */
static bool sample_in_place(struct sampler *s, struct thread_state *t)
{
	struct blocked_syscall bs;
	/* (without its syscall file, it is counted as if it could not be read:
	 * never stopped where it may wait) */
	enum blocked_state st = BLOCKED_MALFORMED;
	if (open_task_file(s, t, "syscall", &t->syscall_fd))
		st = blocked_capture(t->proc->unwinder, t->tid, t->syscall_fd, t->schedstat_fd,
				     &s->blocked_snap, &bs);
	if (st == BLOCKED_RUNNING)
		return false;
	if (st == BLOCKED_IN_KERNEL) {
		s->stats.in_place++;
		count_captured(s, t, &s->blocked_snap);
	} else if (t->has_last) {
		count_stack(s, t, t->last_flags, t->last_stack, t->last_depth, 1);
	} else {
		count_stack(s, t, STACK_NOT_CAPTURED, NULL, 0, 1);
		s->stats.not_captured++;
	}
	return true;
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

/* Whether syscall NR (x86_64 numbers) of thread T waits for something or
 * was held by ptrace: its exit is where a thread wakes up or is let go, not
 * where it computes. TIMEOUT_RET: the return value that says the wait ran
 * out (INT64_MIN: none tells). A wait with a zero timeout (a poll) never
 * sleeps. read/readv wait only on pipes, sockets and the like: on files
 * they are work, and a thread in one was running. */
static bool syscall_waits(const struct thread_state *t, long nr, const struct user_regs_struct *r,
			  int64_t *timeout_ret)
{
	*timeout_ret = INT64_MIN;
	switch (nr) {
	case 0:   /* read */
	case 19:  /* readv */
		return procfs_fd_waits(t->pid, (long)r->rdi);
	case 35:  /* nanosleep */
	case 230: /* clock_nanosleep */
		*timeout_ret = 0;
		return true;
	case 202: /* futex: the wait operations */
		switch (r->rsi & 127) {
		case 0: case 6: case 9: case 11: case 13:
			*timeout_ret = -110; /* ETIMEDOUT */
			return true;
		}
		return false;
	case 232: /* epoll_wait */
	case 281: /* epoll_pwait */
		*timeout_ret = 0;
		return (long)r->r10 != 0;
	case 441: /* epoll_pwait2 */
		*timeout_ret = 0;
		return true;
	case 7:   /* poll */
		*timeout_ret = 0;
		return (long)r->rdx != 0;
	case 23:  /* select */
	case 270: /* pselect6 */
	case 271: /* ppoll */
	case 208: /* io_getevents */
	case 333: /* io_pgetevents */
		*timeout_ret = 0;
		return true;
	case 128: /* rt_sigtimedwait */
	case 220: /* semtimedop */
		*timeout_ret = -11; /* EAGAIN */
		return true;
	case 243: /* mq_timedreceive */
		*timeout_ret = -110;
		return true;
	case 24:  /* sched_yield: gave its CPU away */
	case 34:  /* pause */
	case 130: /* rt_sigsuspend */
	case 61:  /* wait4 */
	case 247: /* waitid */
	case 65:  /* semop */
	case 69:  /* msgsnd */
	case 70:  /* msgrcv */
	case 43:  /* accept */
	case 288: /* accept4 */
	case 45:  /* recvfrom */
	case 47:  /* recvmsg */
	case 299: /* recvmmsg */
	case 42:  /* connect */
	case 56:  /* clone: ptrace holds the parent at its clone event, and */
	case 57:  /* fork    the new thread or process at its first stop, */
	case 58:  /* vfork   until csampler lets them go */
	case 435: /* clone3 */
		return true;
	default:
		return false;
	}
}

/* On-CPU mode (a wall-clock profile wants the waits): see the top of this
 * file. T stopped with registers R; was it waiting rather than running at
 * the tick? t->arrivals is its schedstat arrival
 * count at the tick's read. A call our stop interrupted (EINTR, ERESTART*)
 * was being entered by a thread that ran at the tick, unless it had gone
 * to sleep in it already (then it got a CPU again to stop). */
static bool stop_was_waiting(const struct thread_state *t, const struct user_regs_struct *r)
{
	long nr = (long)r->orig_rax;
	int64_t ret = (int64_t)r->rax, timeout_ret;
	if (nr < 0)
		return false;           /* stopped in user code: it ran there */
	bool interrupted = ret == -4 || (ret >= -516 && ret <= -512);
	if (!syscall_waits(t, nr, r, &timeout_ret) && !interrupted)
		return false;
	if (ret == timeout_ret)
		return true;            /* slept until its timer fired */
	struct procfs_schedstat ss;
	return procfs_read_schedstat(t->schedstat_fd, &ss) && ss.arrivals != t->arrivals;
}

/* Unwind a captured stack of T and count it: t->weight periods (on-CPU:
 * the inverse of the probability that T was read this tick; --idle: 1). */
static void count_captured(struct sampler *s, struct thread_state *t,
			   const struct unwind_snapshot *snap)
{
	const uint64_t *addrs;
	unsigned depth;
	uint32_t flags;
	t->unsampled_ns -= (int64_t)(t->weight * s->period_ns);
	recorder_count_snapshot(s->rec, t->proc, t->key, snap, t->weight, &addrs, &depth, &flags);
	if (s->cfg.idle) {
		memcpy(t->last_stack, addrs, depth * sizeof *addrs);
		t->last_depth = depth;
		t->last_flags = flags;
		t->has_last = true;
	}
}

/* Late-sample hook, while the thread is stopped: copy it. */
static void capture_late(void *ctx, pid_t tid)
{
	struct sampler *s = ctx;
	struct thread_state *t = thread_find(s, tid);
	struct user_regs_struct regs;

	s->late_thread = NULL;
	if (!t || t->retired || !t->late_until_ns)
		return;
	s->late_seen_ns = clock_monotonic_ns();
	t->late_until_ns = 0;
	if (target_get_regs(s->target, tid, &regs) != 0)
		return;
	if (!s->cfg.idle && stop_was_waiting(t, &regs)) {
		s->stats.dropped_waking++;
		return;
	}
	if (recorder_capture(s->rec, t->proc, tid, &regs, &s->late_snap) == 0)
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
	count_captured(s, t, &s->late_snap);
}

/* target_sample_threads callback: the thread is stopped; copy and return. */
static void capture_thread(void *ctx, size_t index, pid_t tid)
{
	struct sampler *s = ctx;
	size_t i = s->round_base + index;
	uint64_t seen = clock_monotonic_ns();
	struct user_regs_struct regs;

	if (s->chosen[i]->retired)
		return;

	s->chosen[i]->late_until_ns = 0;
	s->captured[i] = false;
	if (target_get_regs(s->target, tid, &regs) != 0)
		return;
	if (!s->cfg.idle && stop_was_waiting(s->chosen[i], &regs)) {
		s->stats.dropped_waking++;
		s->round_dropped++;
	} else {
		s->captured[i] = recorder_capture(s->rec, s->chosen[i]->proc, tid, &regs,
						  &s->snaps[i]) == 0;
	}
	s->chosen[i]->seen_ns = seen;
	s->chosen[i]->done_ns = clock_monotonic_ns();
}

/* After the round: the pause of T, without the time it waited for a CPU
 * after the interrupt (it was queued since the tick read it, at the latest). */
static void record_round_pause(struct sampler *s, struct thread_state *t)
{
	uint64_t from = s->round_start_ns;

	struct procfs_schedstat ss;

	if ((t->cpu == s->round_cpu || t->seen_ns - s->round_start_ns > PAUSE_CHECK_NS) &&
	    procfs_read_schedstat(t->schedstat_fd, &ss)) {
		uint64_t delay = ss.run_delay_ns;
		uint64_t waited = delay > t->run_delay_ns ? delay - t->run_delay_ns : 0;
		uint64_t before = s->round_start_ns - s->tick_start_ns;
		uint64_t after = waited > before ? waited - before : 0;
		from += after < t->seen_ns - s->round_start_ns ? after : t->seen_ns - s->round_start_ns;
	}
	recorder_record_pause(s->rec, from, t->done_ns);
}

/* The level idle threads go up to this tick: the smallest that keeps the
 * expected reads of the idle ones within IDLE_READS_PER_SEC. */
static void set_idle_level(struct sampler *s)
{
	unsigned level = 0, budget = IDLE_READS_PER_SEC / s->cfg.rate;
	if (budget == 0)
		budget = 1;
	while (level < s->max_skip_level && (s->nidle >> level) > budget)
		level++;
	s->idle_level = level;
}


/* On-CPU mode: move to chosen[from, ...) up to WANT of the candidates
 * chosen[*scan, n) that run now ('R'), the most unsampled CPU time first.
 * Returns the end of that batch; *scan is where the next call looks. */
static size_t pick_running(struct sampler *s, size_t from, size_t n, size_t want, size_t *scan)
{
	size_t end = from;
	for (size_t i = *scan; i < n && end - from < want; i++) {
		size_t best = i;
		for (size_t j = i + 1; j < n; j++)
			if (s->chosen[j]->unsampled_ns > s->chosen[best]->unsampled_ns)
				best = j;
		struct thread_state *t = s->chosen[best];
		s->chosen[best] = s->chosen[i];
		s->chosen[i] = t;
		char state = '?';
		t->running = thread_read_stat(s, t, &state) && state == 'R';
		if (t->running) {
			s->chosen[i] = s->chosen[end];
			s->chosen[end++] = t;
		}
		*scan = i + 1;
	}
	return end;
}

/* Stop chosen[base, base + n) together; copy each as soon as it stops and
 * resume it; then unwind the copies and count them. Until its stop each one
 * is expected late (its stop may come after the round gave up on it, even
 * while the round ends). Returns how many stops were found waiting. */
static size_t sample_round(struct sampler *s, size_t base, size_t n, long long spin_ns)
{
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
		s->chosen_tids[i] = s->chosen[i]->tid;
		s->captured[i] = false;
		s->chosen[i]->late_until_ns = late_until;
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
	struct target_round round = { .tids = &s->chosen_tids[base], .n = n, .nspin = nspin,
				      .spin_ns = spin_ns, .timeout_ns = timeout,
				      .fn = capture_thread, .ctx = s };
	target_sample_threads(s->target, &round);
	for (size_t i = base; i < base + n; i++)
		if (s->captured[i] && !s->chosen[i]->retired) {
			record_round_pause(s, s->chosen[i]);
			count_captured(s, s->chosen[i], &s->snaps[i]);
		}
	return s->round_dropped;
}

/* The tick proper. Not inlined, so that it has a frame of its own in call
 * chains (sampler_no_alloc checks that no allocation happens under it). */
static __attribute__((noinline)) int sampler_tick_locked(struct sampler *s);

int sampler_tick(struct sampler *s, uint64_t next_tick_ns)
{
	s->next_tick_ns = next_tick_ns;
	s->in_tick = true;
	s->ngone = 0;
	int ret = sampler_tick_locked(s);
	s->in_tick = false;
	release_retired(s);
	recorder_release_gone(s->rec);
	/* target's table may change now: the tick holds no pointer into it */
	for (size_t i = 0; i < s->ngone; i++)
		target_thread_gone(s->target, s->gone[i]);
	reserve_next_tick(s);
	return ret;
}

/* Read thread T's run time (it is due this tick); in on-CPU mode make it a
 * candidate if it may be running; in --idle mode count it or choose it. */
static void read_thread(struct sampler *s, struct thread_state *t, uint64_t now, size_t *nchosen)
{
	struct procfs_schedstat ss;
	if (!procfs_read_schedstat(t->schedstat_fd, &ss)) {
		/* its /proc entry is gone: make sure target knows (the
		 * report of its end may be lost), and forget it */
		if (!t->retired && s->ngone < GONE_PER_TICK) {
			s->gone[s->ngone++] = t->tid;
			thread_retire(s, t);
		}
		return;
	}
	if (t->fresh) {
		/* CPU time it used before we saw it is not ours to count,
		 * unless it was born while we sample (seen after the first
		 * tick): then all of it is owed samples, or short-lived
		 * threads would lose every choice to older ones. */
		t->fresh = false;
		t->runtime_ns = ss.runtime_ns;
		t->arrivals = ss.arrivals;
		if (s->stats.ticks > 1)
			t->unsampled_ns = (int64_t)ss.runtime_ns;
	}
	/* It got a CPU or ran since the last read (a running thread's
	 * run time is updated only at scheduler events, its arrivals
	 * when it gets a CPU): it may be running now. */
	bool ran = ss.runtime_ns != t->runtime_ns || ss.arrivals != t->arrivals;
	t->unsampled_ns += (int64_t)(ss.runtime_ns - t->runtime_ns);
	t->runtime_ns = ss.runtime_ns;
	t->arrivals = ss.arrivals;
	t->run_delay_ns = ss.run_delay_ns;
	bool idle = !ran && !t->running;
	t->ran = ran;
	s->nidle += (size_t)idle - (size_t)t->idle;
	t->idle = idle;
	/* Interrupted by an earlier round, not stopped yet: its stop is
	 * sampled when it comes. A wall-clock profile counts it at this
	 * tick too, where it was last seen. */
	if (t->late_until_ns > now) {
		if (s->cfg.idle && t->has_last)
			count_stack(s, t, t->last_flags, t->last_stack, t->last_depth, 1);
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
	if (!thread_read_stat(s, t, &state))
		return;
	if (state == 'R') {
		s->chosen[(*nchosen)++] = t;
		return;
	}
	/* --idle: a sleeping thread. Reuse its stack if it has not run
	 * (its stack is as it was), else read it where it waits. */
	if (!ran && t->has_last) {
		count_stack(s, t, t->last_flags, t->last_stack, t->last_depth, 1);
		return;
	}
	if (!sample_in_place(s, t))
		s->chosen[(*nchosen)++] = t;
}

static __attribute__((noinline)) int sampler_tick_locked(struct sampler *s)
{
	uint64_t now = s->tick_start_ns = clock_monotonic_ns();
	uint64_t tick = ++s->stats.ticks;
	size_t nchosen = 0;

	if (add_pending(s, tick) < 0 || grow_scratch(s, s->nused) < 0)
		return -1;
	set_idle_level(s);

	/* 1. read the run times of the threads due, choose */
	size_t ndue = wheel_take_due(s, tick);
	for (size_t i = 0; i < ndue; i++) {
		struct thread_state *t = &s->threads[s->due[i]];
		/* this read's sample stands for 2^level periods (schedule_read) */
		t->weight = 1u << t->level;
		read_thread(s, t, now, &nchosen);
		schedule_read(s, t, tick);
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

	/* On-CPU mode: the candidates running now ('R': not asleep in a
	 * system call we would interrupt), at most max_per_tick (no more can
	 * be on a CPU at once), those with the most unsampled CPU time first,
	 * so with more busy threads than CPUs each thread's samples follow its
	 * CPU time. Only these have their stat read (state and name). A stop
	 * found waiting (see stop_was_waiting) was not on a CPU at the tick:
	 * its place goes to the next candidate, in a further round. */
	size_t scan = 0, done = 0, kept = 0;
	for (unsigned round = 0; round < MAX_ROUNDS && kept < s->max_per_tick; round++) {
		size_t end = pick_running(s, done, nchosen, s->max_per_tick - kept, &scan);
		if (end == done)
			break;
		kept += (end - done) - sample_round(s, done, end - done, spin_ns);
		done = end;
	}
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
