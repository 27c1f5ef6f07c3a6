/* sampler_threads: the threads a sampler follows (see sampler_internal.h).
 *
 * Per thread it keeps /proc files open and reads them with pread:
 * schedstat (run time, run delay and arrivals on a CPU) from the start;
 * stat (state and comm) once it is a candidate; syscall (--idle) once it
 * is read where it waits. A thread waits in a timing wheel for the tick of
 * its next read (threads_schedule_read: the coins of sampler.c's idle
 * reads are drawn as geometric gaps), so a tick costs the threads it
 * reads, not every thread. Threads are added as target reports them (at
 * attach, then as they start), at the next tick; room for what a tick may
 * add is made between ticks (threads_reserve_next_tick). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "array.h"
#include "clock.h"
#include "error.h"
#include "procfs.h"
#include "sampler_internal.h"
#include "tidmap.h"

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

struct thread_state *threads_find(struct sampler *s, pid_t tid)
{
	uint32_t slot = recorder_followed_slot(s->rec, tid);
	return slot < s->nthreads_cap ? &s->threads[slot] : NULL;
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
size_t threads_take_due(struct sampler *s, uint64_t now)
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
void threads_schedule_read(struct sampler *s, struct thread_state *t, uint64_t now)
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

/* More threads than descriptors: say so once. */
static void warn_fd_short(struct sampler *s, pid_t tid)
{
	struct rlimit rl;
	s->stats.fd_short++;
	if (s->stats.fd_short > 1)
		return;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		warn("more threads than file descriptors from thread %d on (the limit is %llu; "
		     "csampler keeps 1 per thread, 2 for one that runs): the threads that run keep "
		     "theirs, the others' files are opened at each read (slower); raise the limit "
		     "with 'ulimit -n' (as root, also the hard limit)", (int)tid,
		     (unsigned long long)rl.rlim_cur);
	else
		warn_errno("cannot keep the files of thread %d and others open", (int)tid);
}

/* Which bit of thread_state.transient FD (one of T's) is. */
static unsigned file_bit(const struct thread_state *t, const int *fd)
{
	return fd == &t->schedstat_fd ? 1u : fd == &t->stat_fd ? 2u : 4u;
}

/* Close the kept files of a thread long idle (the budget's cursor moves
 * over the slots, at most 256 a call) to make room for one that runs.
 * true if any was closed. */
static bool evict_idle(struct sampler *s, const struct thread_state *keep)
{
	for (unsigned n = 0; n < 256 && s->nthreads_cap; n++) {
		s->evict_cursor = (s->evict_cursor + 1) % s->nthreads_cap;
		struct thread_state *v = thread_at(s, s->evict_cursor);
		if (!v || v == keep || !v->idle || v->running || v->level == 0 ||
		    v->schedstat_fd < 0 || (v->transient & 1u))
			continue;
		threads_close_files(s, v);
		return true;
	}
	return false;
}

int threads_open_once(struct sampler *s, struct thread_state *t, const char *name)
{
	const struct recorder_followed *id = thread_id(s, t);
	return procfs_open_task_file(*task_dir_of(s, id->proc), id->pid, id->tid, name);
}

bool threads_open_file(struct sampler *s, struct thread_state *t, const char *name, int *fd)
{
	if (*fd >= 0)
		return true;
	const struct recorder_followed *id = thread_id(s, t);
	bool kept = s->nfds < s->max_fds;
	if (!kept)
		warn_fd_short(s, id->tid);
	*fd = procfs_open_task_file(*task_dir_of(s, id->proc), id->pid, id->tid, name);
	if (*fd < 0) {
		if (errno == EMFILE || errno == ENFILE)
			warn_fd_short(s, id->tid);
		return false;
	}
	if (kept)
		s->nfds++;
	else
		t->transient |= file_bit(t, fd);
	return true;
}

void threads_keep_files(struct sampler *s, struct thread_state *t)
{
	while (t->transient && (s->nfds < s->max_fds || evict_idle(s, t))) {
		t->transient &= t->transient - 1;  /* (one more kept) */
		s->nfds++;
	}
}

void threads_drop_transient(struct thread_state *t)
{
	int *fds[] = { &t->schedstat_fd, &t->stat_fd, &t->syscall_fd };
	for (size_t i = 0; t->transient && i < 3; i++) {
		if (!(t->transient & file_bit(t, fds[i])))
			continue;
		close(*fds[i]);
		*fds[i] = -1;
		t->transient &= ~file_bit(t, fds[i]);
	}
}

void threads_close_file(struct sampler *s, int *fd)
{
	if (*fd < 0)
		return;
	close(*fd);
	*fd = -1;
	s->nfds--;
}

void threads_close_files(struct sampler *s, struct thread_state *t)
{
	threads_drop_transient(t);
	threads_close_file(s, &t->schedstat_fd);
	threads_close_file(s, &t->stat_fd);
	threads_close_file(s, &t->syscall_fd);
}

/* A slot's state, empty but for its --idle stack buffer (kept: see
 * last_stack). */
static void thread_clear(struct thread_state *t)
{
	uint64_t *last_stack = t->last_stack;
	size_t last_cap = t->last_cap;
	memset(t, 0, sizeof *t);
	t->last_stack = last_stack;
	t->last_cap = last_cap;
	t->schedstat_fd = t->stat_fd = t->syscall_fd = t->clock_fd = -1;
}

void threads_keep_last(struct thread_state *t, const uint64_t *addrs, unsigned depth,
		       uint32_t flags)
{
	t->has_last = depth <= t->last_cap ||
		      array_grow(&t->last_stack, &t->last_cap, depth, sizeof *t->last_stack, 64) == 0;
	if (!t->has_last)
		return;
	if (depth)
		memcpy(t->last_stack, addrs, depth * sizeof *addrs);
	t->last_depth = depth;
	t->last_flags = flags;
}

static void thread_release(struct sampler *s, struct thread_state *t)
{
	if (!thread_id(s, t)->tid)
		return;
	switch_clock_close(s, t);
	threads_close_files(s, t);
	wheel_remove(s, t);
	s->nidle -= t->idle;
	thread_clear(t);
	recorder_unfollow_thread(s->rec, slot_of(s, t));
}

int threads_grow_scratch(struct sampler *s, size_t want)
{
	void *const arrays[] = { &s->chosen_tids, &s->chosen, &s->captured, &s->due };
	const size_t sizes[] = { sizeof *s->chosen_tids, sizeof *s->chosen, sizeof *s->captured,
				 sizeof *s->due };
	return array_grow_each(arrays, sizes, 4, &s->scratch_cap, want, 8);
}

/* Make room for WANT more threads up front (the recorder's slots, and the
 * states by slot as many): thread_add must not move the table while a
 * tick holds pointers into it. */
static int reserve_thread_slots(struct sampler *s, size_t want)
{
	if (recorder_reserve_threads(s->rec, want) < 0)
		return -1;
	size_t cap = recorder_thread_slots(s->rec);
	if (cap <= s->nthreads_cap)
		return 0;
	struct thread_state *nt = realloc(s->threads, cap * sizeof *nt);
	if (!nt)
		return -1;
	s->threads = nt;
	memset(nt + s->nthreads_cap, 0, (cap - s->nthreads_cap) * sizeof *nt);
	s->nthreads_cap = cap;
	return threads_grow_scratch(s, cap);
}

/* Room for what the next tick may add: a slot per queued thread, a key per
 * thread it may read (new, or renamed), and queue space for threads that
 * start during it. Made between ticks, never while a tick holds pointers
 * into the slots, so a tick allocates nothing however threads churn; where
 * this fails, the tick tries again itself. */
void threads_reserve_next_tick(struct sampler *s)
{
	if (s->in_tick)
		return;
	(void)reserve_thread_slots(s, s->npending);
	recorder_reserve_keys(s->rec, recorder_nfollowed(s->rec) + s->npending + 64);
	if (s->npending + 64 > s->pending_cap)
		(void)array_grow(&s->pending, &s->pending_cap, s->npending + 64, sizeof *s->pending, 64);
}

static struct thread_state *thread_add(struct sampler *s, pid_t pid, pid_t tid)
{
	struct recorder_process *proc = process_get(s, pid);
	uint32_t slot = proc ? recorder_follow_thread(s->rec, proc, tid) : RECORDER_NO_SLOT;
	if (slot >= s->nthreads_cap) {  /* (reserve_thread_slots was called) */
		recorder_unfollow_thread(s->rec, slot);
		return NULL;
	}
	struct thread_state *t = &s->threads[slot];
	thread_clear(t);
	t->cpu = -1;
	/* Its run time file, kept open while the budget allows (else opened
	 * at its reads: read_thread). */
	if (s->nfds < s->max_fds && !threads_open_file(s, t, "schedstat", &t->schedstat_fd)) {
		/* Gone already: keep nothing, and make sure target knows. */
		if (errno == ENOENT && s->ngone < GONE_PER_TICK)
			s->gone[s->ngone++] = tid;
		recorder_unfollow_thread(s->rec, slot);
		return NULL;
	}
	/* Whether it runs now, the next read of its state tells; its first
	 * read (read_thread) takes its run time as it is. */
	t->fresh = true;
	t->running = true;
	s->stats.threads_seen++;
	return t;
}

/* Target saw thread TID of PID: add it at the next tick (one -t did not
 * choose is not followed: never read, never interrupted). */
void threads_queue(struct sampler *s, pid_t pid, pid_t tid)
{
	if (!tids_allow(s->cfg.tids, s->cfg.ntids, tid))
		return;
	if (array_grow(&s->pending, &s->pending_cap, s->npending + 1, sizeof *s->pending, 64) < 0) {
		s->pending_lost = true;
		return;
	}
	s->pending[s->npending++] = (struct target_thread){ .pid = pid, .tid = tid };
}

bool threads_unqueue(struct sampler *s, pid_t tid)
{
	for (size_t i = 0; i < s->npending; i++)
		if (s->pending[i].tid == tid) {
			s->pending[i] = s->pending[--s->npending];
			return true;
		}
	return false;
}

/* Target says TID (or every thread of PID, TID 0) is gone: forget it if it
 * waits to be added (a thread that lived less than a tick). */
static void unqueue_thread(struct sampler *s, pid_t pid, pid_t tid)
{
	for (size_t i = s->npending; i-- > 0;)
		if (tid ? s->pending[i].tid == tid : s->pending[i].pid == pid)
			s->pending[i] = s->pending[--s->npending];
}

/* The threads found at the attach: made now, each one's run time read now,
 * so that its CPU counts from the attach and not from its first read at a
 * tick (a csampler that got no CPU between the two lost the CPU meanwhile:
 * stopped a second there, two busy threads' profile said 64% of their
 * CPU). One not read now is read at its first tick, as before; a launched
 * program's CPU counts from its birth (threads_born_while_sampled). */
void threads_take_attached(struct sampler *s)
{
	const struct target_thread *tl;
	size_t n = target_threads(s->target, &tl);
	for (size_t i = 0; i < n; i++)
		threads_queue(s, tl[i].pid, tl[i].tid);
	if (s->cfg.launched || threads_add_pending(s, 1) < 0)
		return;   /* (the first tick adds them) */
	/* one gone meanwhile: target is told now (a tick starts its list anew) */
	for (size_t i = 0; i < s->ngone; i++)
		target_thread_gone(s->target, s->gone[i]);
	s->ngone = 0;
	uint64_t now = clock_monotonic_ns();
	for (size_t i = 0; i < s->nthreads_cap; i++) {
		struct thread_state *t = thread_at(s, i);
		struct procfs_schedstat ss;
		if (!t || !t->fresh || t->schedstat_fd < 0 || !procfs_read_schedstat(t->schedstat_fd, &ss))
			continue;
		t->fresh = false;
		t->runtime_ns = ss.runtime_ns;
		t->arrivals = ss.arrivals;
		t->run_delay_ns = ss.run_delay_ns;
		t->read_ns = now;
	}
}

/* Add the threads target saw since the last tick, each read at once. */
int threads_add_pending(struct sampler *s, uint64_t now)
{
	if (s->pending_lost) {
		/* a list was lost to memory: take target's whole list */
		const struct target_thread *tl;
		size_t n = target_threads(s->target, &tl);
		s->npending = 0;
		s->pending_lost = false;
		for (size_t i = 0; i < n; i++)
			if (!threads_find(s, tl[i].tid))
				threads_queue(s, tl[i].pid, tl[i].tid);
	}
	if (reserve_thread_slots(s, s->npending) < 0)
		return -1;
	for (size_t i = 0; i < s->npending; i++) {
		pid_t pid = s->pending[i].pid, tid = s->pending[i].tid;
		struct thread_state *t = threads_find(s, tid);
		if (t && thread_id(s, t)->pid == pid)
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

void sampler_end_ticks(struct sampler *s)
{
	holders_stop(s->holders);
	s->holders = NULL;
	s->holders_tried = false;   /* (a next session's first tick starts them again) */
	s->holders_armed_ns = 0;
}

void sampler_close_threads(struct sampler *s)
{
	sampler_end_ticks(s);
	for (size_t i = 0; i < s->nthreads_cap; i++)
		if (thread_at(s, i)) {
			switch_clock_close(s, &s->threads[i]);
			threads_close_files(s, &s->threads[i]);
		}
	for (size_t i = 0; i < s->task_dirs_cap; i++)
		threads_close_file(s, &s->task_dirs[i]);
}

/* A thread is gone (event). During a tick the thread may be among the chosen
 * ones, so it is only marked and released when the tick ends. */
void threads_retire(struct sampler *s, struct thread_state *t)
{
	if (!s->in_tick) {
		thread_release(s, t);
	} else if (!t->retired) {
		t->retired = true;
		s->nretired++;
	}
}

void threads_release_retired(struct sampler *s)
{
	if (!s->nretired)
		return;
	for (size_t i = 0; i < s->nthreads_cap; i++)
		if (thread_at(s, i) && s->threads[i].retired)
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
		 * /proc files now describe the new image: add it again (the same
		 * thread: not one more seen). */
		bool seen = false;
		for (size_t i = 0; i < s->nthreads_cap; i++) {
			const struct recorder_followed *id = recorder_followed(s->rec, (uint32_t)i);
			if (id->tid && id->pid == ev->pid) {
				seen |= id->tid == ev->pid || id->tid == ev->tid;
				threads_retire(s, &s->threads[i]);
			}
		}
		if (seen && s->stats.threads_seen)
			s->stats.threads_seen--;
		unqueue_thread(s, ev->pid, 0);
		threads_queue(s, ev->pid, ev->pid);
		break;
	case TARGET_EV_PROCESS_EXIT:
		p = recorder_find_process(s->rec, ev->pid);
		if (p) {
			recorder_process_exit(s->rec, p);
			threads_close_file(s, task_dir_of(s, p));
		}
		for (size_t i = 0; i < s->nthreads_cap; i++)
			if (thread_at(s, i) && recorder_followed(s->rec, (uint32_t)i)->pid == ev->pid)
				threads_retire(s, &s->threads[i]);
		unqueue_thread(s, ev->pid, 0);
		if (!s->in_tick)
			recorder_release_gone(s->rec);
		break;
	case TARGET_EV_THREAD_NEW:
		threads_queue(s, ev->pid, ev->tid);
		threads_reserve_next_tick(s);
		break;
	case TARGET_EV_THREAD_EXITING:
		threads_account_exit(s, ev->pid, ev->tid);
		break;
	case TARGET_EV_THREAD_EXIT:
		t = threads_find(s, ev->tid);
		if (t)
			threads_retire(s, t);
		else
			unqueue_thread(s, ev->pid, ev->tid);
		break;
	}
}

/* On-CPU mode: tell the recorder the run time read for T, once T has a key
 * (the outputs give each thread the CPU the kernel says it used). */
void threads_account_cpu(struct sampler *s, struct thread_state *t)
{
	uint32_t key = thread_id(s, t)->key;
	if (t->cpu_unaccounted_ns && key != UINT32_MAX) {
		recorder_account_cpu(s->rec, key, t->cpu_unaccounted_ns);
		t->cpu_unaccounted_ns = 0;
	}
	switch_span_account(s, t);
}

/* RUNTIME_NS read for T: the CPU it used since its last read waits in
 * cpu_unaccounted_ns (on-CPU mode). At its first read, what it used before
 * is not ours to count, unless it was born while we sample (seen after the
 * first tick, or in a program started for us). */
bool threads_born_while_sampled(const struct sampler *s)
{
	return s->stats.ticks > 1 || s->cfg.launched;
}

void threads_take_runtime(struct sampler *s, struct thread_state *t, uint64_t runtime_ns)
{
	if (t->fresh) {
		t->fresh = false;
		if (threads_born_while_sampled(s) && !s->cfg.idle)
			t->cpu_unaccounted_ns = runtime_ns;
	} else if (!s->cfg.idle && runtime_ns > t->runtime_ns) {
		t->cpu_unaccounted_ns += runtime_ns - t->runtime_ns;
	}
	t->runtime_ns = runtime_ns;
}

/* The time T waited for a CPU since its last read, into stats.waited_ns.
 * Its run delay grows only when a wait ends (the thread got a CPU): a
 * thread runnable at its last read ('R') that has not run since is counted
 * as waiting the whole interval meanwhile (a starved thread's wait never
 * ends while sampled), and that part is not counted again when the wait
 * ends. */
void threads_count_wait(struct sampler *s, struct thread_state *t, const struct procfs_schedstat *ss,
		       bool fresh, bool ran, uint64_t now)
{
	uint64_t ended = ss->run_delay_ns > t->run_delay_ns ? ss->run_delay_ns - t->run_delay_ns : 0;
	if (!fresh && ended) {
		s->stats.waited_ns += ended > t->wait_counted_ns ? ended - t->wait_counted_ns : 0;
		t->wait_counted_ns = 0;
	} else if (!fresh && !ran && t->running && t->read_ns && now > t->read_ns) {
		s->stats.waited_ns += now - t->read_ns;
		t->wait_counted_ns += now - t->read_ns;
	}
	t->read_ns = now;
}

/* Refresh a thread's state, CPU and name from its stat file. false if gone. */
bool threads_read_stat(struct sampler *s, struct thread_state *t, char *state)
{
	char buf[512];
	struct procfs_stat st;
	bool ok = threads_open_file(s, t, "stat", &t->stat_fd) &&
		  procfs_pread_text(t->stat_fd, buf, sizeof buf) > 0 && procfs_parse_stat(buf, &st);
	threads_drop_transient(t);
	if (!ok)
		return false;
	*state = st.state;
	t->cpu = st.cpu;
	if (t->times_read && st.utime >= t->utime && st.stime >= t->stime) {
		s->stats.user_ticks += st.utime - t->utime;
		s->stats.kernel_ticks += st.stime - t->stime;
	}
	t->utime = st.utime;
	t->stime = st.stime;
	t->times_read = true;
	recorder_name_thread(s->rec, slot_of(s, t), st.comm);
	return true;
}

/* The level idle threads go up to this tick: the smallest that keeps the
 * expected reads of the idle ones within IDLE_READS_PER_SEC. */
void threads_set_idle_level(struct sampler *s)
{
	unsigned level = 0, budget = IDLE_READS_PER_SEC / s->cfg.rate;
	if (budget == 0)
		budget = 1;
	while (level < s->max_skip_level && (s->nidle >> level) > budget)
		level++;
	s->idle_level = level;
}

size_t threads_count_unstoppable(struct sampler *s, size_t base, size_t n)
{
	for (size_t i = base; i < base + n;) {
		struct thread_state *t = s->chosen[i];
		const struct recorder_followed *id = thread_id(s, t);
		if (target_thread_stoppable(s->target, id->tid)) {
			i++;
			continue;
		}
		recorder_count(s->rec, id->key, STACK_NOT_STOPPED, NULL, 0, t->weight);
		s->stats.not_stopped++;
		s->chosen[i] = s->chosen[base + n - 1];
		s->chosen[base + --n] = t;
	}
	return n;
}

/* threads_read_kernel_stack: see sampler_internal.h. */
void threads_read_kernel_stack(struct sampler *s, const struct recorder_followed *id,
			       struct unwind_snapshot *snap)
{
	char text[4096];
	snap->kernel_n = 0;
	snap->kernel_returns = true;
	snap->kernel_chain = (const uint8_t *)s->blocked_kernel;
	if (!s->cfg.kernel || s->kernel_refused || !recorder_places_kernel(s->rec))
		return;   /* (no file read that nothing could place) */
	errno = 0;
	if (procfs_read_file(id->pid, id->tid, "stack", text, sizeof text) <= 0) {
		s->kernel_refused = errno == EACCES || errno == EPERM;
		return;
	}
	snap->kernel_n = recorder_kernel_stack(s->rec, text, strlen(text), s->blocked_kernel,
					       SAMPLER_KERNEL_MAX);
}

/* A random subset of chosen[0, n): each kept with probability 1/w, w the
 * smallest integer that keeps the expected number within MAX; those kept
 * are moved to the front. Returns how many; *W is w. The number kept is
 * random: it is cut at SUBSET_HARD_MAX x MAX (the room made for a round),
 * which a binomial of mean MAX passes about never. */
size_t threads_take_subset(struct sampler *s, size_t n, size_t max, unsigned *w)
{
	*w = 1;
	if (n <= max)
		return n;
	*w = (unsigned)((n + max - 1) / max);
	size_t kept = 0;
	for (size_t i = 0; i < n && kept < SUBSET_HARD_MAX * max; i++)
		if (clock_xorshift64(&s->rng) % *w == 0) {
			struct thread_state *t = s->chosen[i];
			s->chosen[i] = s->chosen[kept];
			s->chosen[kept++] = t;
		}
	return kept;
}
