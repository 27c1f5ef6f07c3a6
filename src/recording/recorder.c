/* recorder: see recorder.h. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "address.h"
#include "ksyms.h"
#include "array.h"
#include "clock.h"
#include "error.h"
#include "procfs.h"
#include "recorder.h"
#include "runtimes.h"
#include "tempfile.h"
#include "tidmap.h"
#include "timeline.h"

/* A log-linear histogram of pause times: 8 sub-buckets per power of two. */
#define PAUSE_BUCKETS (64 * 8)

struct recorder_sink {
	struct stackmap *map;
	struct timeline *timeline;      /* or NULL: no time-ordered record */
	bool warned_spill;              /* a failed spill was reported */
	bool warned_timeline;           /* a failed timeline write was reported */
	uint64_t open_gen;              /* the recorder's gen when it began counting */
};

/* What the recorder knows of a thread key besides what it stands for. */
struct key_meta {
	uint64_t gen;                   /* the recorder's gen when last counted, made or kept */
	uint32_t next_free;             /* a freed key: the next freed one */
};
#define NO_KEY UINT32_MAX

struct recorder {
	struct recorder_sink sinks[RECORDER_MAX_SINKS]; /* sinks[0]: set_stackmap's */
	size_t nsinks;
	struct recorder_config cfg;

	struct recorder_process **procs;
	size_t nprocs, procs_cap;
	struct procmaps_files *files;   /* the processes' mapped files, each opened once */

	struct recorder_thread *threads; /* by key; a freed key's tid is 0 */
	size_t nthreads, threads_cap;    /* keys made (freed ones included) */
	struct key_meta *meta;           /* by key */
	size_t meta_cap;
	uint32_t free_key;               /* the freed keys, linked; NO_KEY: none */
	size_t nfree;
	uint64_t made;                   /* keys made in all */
	uint64_t gen;                    /* one more at each new sink (a window begins) */
	bool account_whole;              /* recorder_set_account_whole */

	struct recorder_followed *followed; /* by slot; tid 0: a free slot */
	size_t followed_cap, nfollowed;
	uint32_t *free_slots;            /* a stack: the lowest slot on top after a growth */
	size_t nfree_slots;
	struct tidmap followed_tids;     /* tid -> slot */

	uint64_t *addrs;                /* the last unwound stack */
	struct ksyms *kernel;           /* /proc/kallsyms, read at recorder_new
	                                 * (cfg.kernel_in_place); NULL: none placed */
	uint64_t pause_hist[PAUSE_BUCKETS];
	uint64_t pause_count;
	struct recorder_stats stats;
	unsigned runtime_said[RUNTIME_KINDS]; /* the reasons said of each runtime, once a run */
};

static unsigned pause_bucket(uint64_t ns)
{
	if (ns < 8)
		return (unsigned)ns;
	unsigned msb = 63u - (unsigned)__builtin_clzll(ns);
	unsigned sub = (unsigned)((ns >> (msb - 3)) & 7u);
	unsigned b = (msb - 2) * 8 + sub;
	return b < PAUSE_BUCKETS ? b : PAUSE_BUCKETS - 1;
}

static uint64_t pause_bucket_value(unsigned b)
{
	if (b < 8)
		return b;
	unsigned msb = b / 8 + 2, sub = b % 8;
	return ((uint64_t)(8 + sub) << (msb - 3));
}

static uint64_t pause_percentile(const struct recorder *r, double q)
{
	if (r->pause_count == 0)
		return 0;
	uint64_t want = (uint64_t)(q * (double)r->pause_count);
	uint64_t seen = 0;
	for (unsigned b = 0; b < PAUSE_BUCKETS; b++) {
		seen += r->pause_hist[b];
		if (seen > want)
			return pause_bucket_value(b);
	}
	return pause_bucket_value(PAUSE_BUCKETS - 1);
}

/* Say N through the config's teller, if any. */
static void tell(const struct recorder *r, const struct recorder_notice *n)
{
	if (r->cfg.tell)
		r->cfg.tell(n);
}

struct recorder *recorder_new(struct stackmap *m, const struct recorder_config *cfg)
{
	struct recorder *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	r->sinks[0].map = m;
	r->nsinks = 1;
	r->free_key = NO_KEY;
	r->cfg = *cfg;
	r->addrs = malloc(cfg->max_depth * sizeof *r->addrs);
	r->files = procmaps_files_new();
	if (!r->addrs || !r->files) {
		recorder_free(r);
		return NULL;
	}
	char line[128];
	if (cfg->kernel_in_place && procfs_read("/proc/thread-self/stack", line, sizeof line) > 0)
		r->kernel = ksyms_load();
	return r;
}

const struct ksyms *recorder_kernel_symbols(const struct recorder *r)
{
	return r->kernel;
}

void recorder_free(struct recorder *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nprocs; i++) {
		unwind_free(r->procs[i]->unwinder);
		procmaps_free(r->procs[i]->maps);
		free(r->procs[i]);
	}
	free(r->procs);
	procmaps_files_free(r->files);
	free(r->threads);
	free(r->meta);
	free(r->followed);
	free(r->free_slots);
	tidmap_free(&r->followed_tids);
	free(r->addrs);
	ksyms_free(r->kernel);
	free(r);
}

/* M made ready to count into: room for the keys made (out of memory, its
 * keys are counted as sampled) and told whether the accounts are whole */
static void adopt_map(const struct recorder *r, struct stackmap *m)
{
	if (!m)
		return;
	(void)stackmap_reserve_keys(m, r->threads_cap);
	stackmap_set_account_whole(m, r->account_whole);
}

void recorder_set_stackmap(struct recorder *r, struct stackmap *m)
{
	adopt_map(r, m);
	r->sinks[0].map = m;
	r->sinks[0].open_gen = ++r->gen;
	r->nsinks = 1;
}

void recorder_set_timeline(struct recorder *r, struct timeline *tl)
{
	r->sinks[0].timeline = tl;
}

int recorder_add_sink(struct recorder *r, struct stackmap *m, struct timeline *tl)
{
	/* a first sink replaces an empty sinks[0] (a recorder made without a map) */
	if (r->nsinks == 1 && !r->sinks[0].map && !r->sinks[0].timeline)
		r->nsinks = 0;
	if (r->nsinks == RECORDER_MAX_SINKS)
		return -1;
	adopt_map(r, m);
	r->sinks[r->nsinks++] = (struct recorder_sink){ .map = m, .timeline = tl, .open_gen = ++r->gen };
	return 0;
}

void recorder_remove_sink(struct recorder *r, const struct stackmap *m)
{
	for (size_t i = 0; i < r->nsinks; i++)
		if (r->sinks[i].map == m) {
			r->sinks[i] = r->sinks[--r->nsinks];
			r->gen++;  /* what is counted from now on, it never held */
			return;
		}
}

/* ---- processes ------------------------------------------------------------- */

struct recorder_process *recorder_find_process(struct recorder *r, pid_t pid)
{
	for (size_t i = 0; i < r->nprocs; i++)
		if (r->procs[i]->pid == pid && r->procs[i]->alive)
			return r->procs[i];
	return NULL;
}

struct recorder_process *recorder_add_process(struct recorder *r, pid_t pid)
{
	struct recorder_process *p = recorder_find_process(r, pid);
	if (p)
		return p;
	if (array_grow(&r->procs, &r->procs_cap, r->nprocs + 1, sizeof *r->procs, 4) < 0)
		return NULL;
	p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->pid = pid;
	p->alive = true;
	p->index = r->nprocs;
	procfs_read_comm(pid, p->comm, sizeof p->comm);
	p->maps = procmaps_new_shared(pid, r->files);
	if (!p->maps) {
		free(p);
		return NULL;
	}
	if (procmaps_refresh(p->maps) < 0 && r->cfg.verbose)
		tell(r, &(struct recorder_notice){ .kind = RECORDER_NOTICE_MAPS, .pid = pid,
						   .comm = p->comm, .err = errno });
	procmaps_load_perf_map(p->maps);
	p->unwinder = unwind_new(p->maps, r->cfg.max_depth, r->cfg.python);
	if (!p->unwinder) {
		procmaps_free(p->maps);
		free(p);
		return NULL;
	}
	unwind_set_window(p->unwinder, r->cfg.stack_window);
	r->procs[r->nprocs++] = p;
	return p;
}

void recorder_process_exec(struct recorder *r, struct recorder_process *p)
{
	(void)r;
	procmaps_load_perf_map(p->maps);  /* the old image's JIT symbols, before they go */
	procmaps_exec(p->maps);
	procmaps_refresh(p->maps);
	unwind_flush(p->unwinder);
	procfs_read_comm(p->pid, p->comm, sizeof p->comm);
}

void recorder_process_exit(struct recorder *r, struct recorder_process *p)
{
	(void)r;
	procmaps_load_perf_map(p->maps);
	p->alive = false;
	procmaps_gone(p->maps);
}

void recorder_release_gone(struct recorder *r)
{
	for (size_t i = 0; i < r->nprocs; i++)
		if (!r->procs[i]->alive && r->procs[i]->unwinder) {
			unwind_free(r->procs[i]->unwinder);
			r->procs[i]->unwinder = NULL;
			if (!r->procs[i]->sampled)
				procmaps_trim(r->procs[i]->maps);
		}
}

/* ---- thread keys ------------------------------------------------------------- */

/* Room for keys 0 .. WANT - 1 (the entries and their meta). */
static int grow_keys(struct recorder *r, size_t want)
{
	if (want >= NO_KEY)
		return -1;
	if (array_grow(&r->threads, &r->threads_cap, want, sizeof *r->threads, 64) < 0 ||
	    array_grow(&r->meta, &r->meta_cap, want, sizeof *r->meta, 64) < 0)
		return -1;
	for (size_t i = 0; i < r->nsinks; i++)
		if (r->sinks[i].map && stackmap_reserve_keys(r->sinks[i].map, r->threads_cap) < 0)
			return -1;
	return 0;
}

uint32_t recorder_thread_key(struct recorder *r, const struct recorder_process *p, pid_t tid,
			     const char *comm, uint32_t current)
{
	if (current < r->nthreads) {
		const struct recorder_thread *cur = &r->threads[current];
		if (cur->tid == tid && cur->pid == p->pid && strcmp(cur->name, comm) == 0 &&
		    strcmp(cur->process, p->comm) == 0)
			return current;
	}
	uint32_t key = r->free_key;
	if (key != NO_KEY) {
		r->free_key = r->meta[key].next_free;
		r->nfree--;
	} else {
		if (grow_keys(r, r->nthreads + 1) < 0)
			return NO_KEY;
		key = (uint32_t)r->nthreads++;
	}
	struct recorder_thread *th = &r->threads[key];
	memset(th, 0, sizeof *th);
	th->pid = p->pid;
	th->tid = tid;
	snprintf(th->name, sizeof th->name, "%s", comm);
	snprintf(th->process, sizeof th->process, "%s", p->comm);
	r->meta[key].gen = r->gen;
	r->made++;
	return key;
}

void recorder_forget_threads(struct recorder *r)
{
	for (size_t i = 0; i < r->followed_cap; i++)
		r->followed[i].key = NO_KEY;
	r->nthreads = 0;
	r->free_key = NO_KEY;
	r->nfree = 0;
}

void recorder_collect_threads(struct recorder *r)
{
	/* a followed thread counts with its key again: kept */
	for (size_t i = 0; i < r->followed_cap; i++)
		if (r->followed[i].tid && r->followed[i].key < r->nthreads)
			r->meta[r->followed[i].key].gen = r->gen;
	uint64_t oldest = r->gen;  /* no sink: only what was made or kept since */
	for (size_t i = 0; i < r->nsinks; i++)
		if ((r->sinks[i].map || r->sinks[i].timeline) && r->sinks[i].open_gen < oldest)
			oldest = r->sinks[i].open_gen;
	for (size_t k = 0; k < r->nthreads; k++) {
		if (r->threads[k].tid == 0 || r->meta[k].gen >= oldest)
			continue;
		memset(&r->threads[k], 0, sizeof r->threads[k]);
		r->meta[k].next_free = r->free_key;
		r->free_key = (uint32_t)k;
		r->nfree++;
	}
}

void recorder_account_cpu(struct recorder *r, uint32_t key, uint64_t ns)
{
	for (size_t i = 0; i < r->nsinks; i++)
		if (r->sinks[i].map)
			stackmap_add_cpu(r->sinks[i].map, key, ns);
}

void recorder_account_span(struct recorder *r, uint32_t key, uint32_t class, uint64_t ns)
{
	for (size_t i = 0; i < r->nsinks; i++)
		if (r->sinks[i].map)
			stackmap_add_span(r->sinks[i].map, key, class, ns);
}

void recorder_account_unnamed_cpu(struct recorder *r, uint64_t ns)
{
	for (size_t i = 0; i < r->nsinks; i++)
		if (r->sinks[i].map)
			stackmap_add_cpu(r->sinks[i].map, STACKMAP_POOL_KEY, ns);
}

void recorder_set_account_whole(struct recorder *r)
{
	r->account_whole = true;
	for (size_t i = 0; i < r->nsinks; i++)
		if (r->sinks[i].map)
			stackmap_set_account_whole(r->sinks[i].map, true);
}

void recorder_reserve_keys(struct recorder *r, size_t more)
{
	if (more > r->nfree)
		(void)grow_keys(r, r->nthreads + more - r->nfree);
}

/* ---- the threads followed ------------------------------------------------------- */

int recorder_reserve_threads(struct recorder *r, size_t more)
{
	if (r->nfree_slots >= more)
		return 0;
	size_t cap = r->followed_cap ? r->followed_cap : 16;
	while (cap - r->nfollowed < more)
		cap *= 2;
	if (cap >= RECORDER_NO_SLOT)
		return -1;
	struct recorder_followed *f = realloc(r->followed, cap * sizeof *f);
	if (!f)
		return -1;
	r->followed = f;
	uint32_t *fs = realloc(r->free_slots, cap * sizeof *fs);
	if (!fs)
		return -1;
	r->free_slots = fs;
	memset(f + r->followed_cap, 0, (cap - r->followed_cap) * sizeof *f);
	for (size_t i = cap; i-- > r->followed_cap;)
		r->free_slots[r->nfree_slots++] = (uint32_t)i;
	r->followed_cap = cap;
	return tidmap_reserve(&r->followed_tids, cap);
}

size_t recorder_thread_slots(const struct recorder *r)
{
	return r->followed_cap;
}

uint32_t recorder_follow_thread(struct recorder *r, struct recorder_process *p, pid_t tid)
{
	if (r->nfree_slots == 0 || tid <= 0)
		return RECORDER_NO_SLOT;
	uint32_t slot = r->free_slots[--r->nfree_slots];
	r->followed[slot] = (struct recorder_followed){ .pid = p->pid, .tid = tid, .proc = p,
							.key = NO_KEY };
	(void)tidmap_put(&r->followed_tids, tid, slot);  /* reserved: no allocation */
	r->nfollowed++;
	return slot;
}

uint32_t recorder_followed_slot(const struct recorder *r, pid_t tid)
{
	uint32_t slot;
	return tidmap_get(&r->followed_tids, tid, &slot) ? slot : RECORDER_NO_SLOT;
}

const struct recorder_followed *recorder_followed(const struct recorder *r, uint32_t slot)
{
	return &r->followed[slot];
}

void recorder_unfollow_thread(struct recorder *r, uint32_t slot)
{
	if (slot >= r->followed_cap || !r->followed[slot].tid)
		return;
	struct recorder_process *p = r->followed[slot].proc;
	if (p && p->unwinder)
		unwind_forget_thread(p->unwinder, r->followed[slot].tid);
	tidmap_remove(&r->followed_tids, r->followed[slot].tid);
	r->followed[slot] = (struct recorder_followed){ 0 };
	r->free_slots[r->nfree_slots++] = slot;
	r->nfollowed--;
}

uint32_t recorder_name_thread(struct recorder *r, uint32_t slot, const char *comm)
{
	struct recorder_followed *f = &r->followed[slot];
	f->key = recorder_thread_key(r, f->proc, f->tid, comm, f->key);
	return f->key;
}

size_t recorder_nfollowed(const struct recorder *r)
{
	return r->nfollowed;
}

/* ---- capture and count ------------------------------------------------------------ */

static void read_maps_at_stop(struct recorder_process *p);

int recorder_capture(struct recorder *r, struct recorder_process *p, pid_t tid,
		     const struct user_regs_struct *regs, struct unwind_snapshot *snap)
{
	read_maps_at_stop(p);
	if (unwind_capture(p->unwinder, tid, regs, snap) == 0)
		return 0;
	/* The process refuses us its memory (it made itself non-dumpable, or
	 * runs a set-user-ID program, and we lack CAP_SYS_PTRACE): say so
	 * once, or the profile is silently empty. */
	if (errno == EPERM && r->stats.unreadable++ == 0)
		tell(r, &(struct recorder_notice){ .kind = RECORDER_NOTICE_UNREADABLE,
						   .pid = p->pid, .comm = p->comm, .err = EPERM });
	return -1;
}

/* Count one sample in sink K; whether it was counted (not lost to a spill
 * file that could not be written). */
static bool sink_count(const struct recorder *r, struct recorder_sink *k, uint32_t key,
		       uint32_t flags, const uint64_t *addrs, unsigned depth, unsigned count,
		       uint64_t now_ns)
{
	int ret = k->map ? stackmap_insert(k->map, key, flags, addrs, depth, count) : 0;
	if (ret < 0 && !k->warned_spill) {
		k->warned_spill = true;
		tell(r, &(struct recorder_notice){ .kind = RECORDER_NOTICE_SPILL, .err = errno });
	}
	if (ret != 0)
		return false;
	if (!k->timeline)
		return true;
	struct timeline_entry e = {
		.time_ns = now_ns,
		.thread_key = key, .flags = flags, .count = count, .depth = depth, .addrs = addrs,
	};
	if (timeline_add(k->timeline, &e) < 0 && !k->warned_timeline) {
		k->warned_timeline = true;
		tell(r, &(struct recorder_notice){ .kind = RECORDER_NOTICE_TIMELINE, .err = errno });
	}
	return true;
}

void recorder_count(struct recorder *r, uint32_t key, uint32_t flags, const uint64_t *addrs,
		    unsigned depth, unsigned count)
{
	if (key >= r->nthreads)
		return;
	r->meta[key].gen = r->gen;
	bool counted = r->nsinks == 0;
	uint64_t now = 0;
	for (size_t i = 0; i < r->nsinks; i++) {
		if (r->sinks[i].timeline && !now)
			now = clock_monotonic_ns();
		counted |= sink_count(r, &r->sinks[i], key, flags, addrs, depth, count, now);
	}
	if (!counted)
		return;
	if (flags & STACK_ARRIVAL) {
		r->stats.arrivals += count;
		return;
	}
	r->stats.samples += count;
	/* every stack the outputs mark [truncated]: cut by depth or window, or
	 * stopped by the unwinder before its root */
	if (flags & (STACK_TRUNCATED_DEPTH | STACK_TRUNCATED_WINDOW | STACK_UNWIND_ERROR))
		r->stats.truncated += count;
}

/* How often a sampled process's mappings are read again: a library can be
 * unloaded and another loaded at its address without any address of ours
 * falling outside the mappings known (which is what makes the unwinder
 * read them). Every 100 reads' time (10 ms to 1 s: 1% of a CPU at most);
 * once a process unloaded code, or for MAPS_WATCH_NS after it last loaded
 * code (a library loaded: another may follow where it is; and after it was
 * first seen: a process attached to may be doing so; not after anonymous or
 * data mappings, which a malloc-heavy program changes all the time), at each
 * stop of one of its threads, while it is stopped (recorder_capture: read
 * at the unwinding, after it resumed, they were what it mapped since, and
 * a library loaded where another was named 5% of swaplibs' samples by the
 * other); where its quickest read took more CPU than MAPS_STOP_READ_MAX_NS
 * (thousands of mappings), before each sample every 20 reads' time at
 * least (and 1 ms). A read's time is the CPU it took, not the wall time:
 * on a loaded host a read that waited for a CPU turned the reads at each
 * stop off, or put off the next read up to a second, and every sample in
 * between was named by the library mapped then (sym_dlopen_reuse attached,
 * CI at load 346: 0% alpha one run, 99.7% another, where it spends 50%). */
#define MAPS_CHECK_MIN_NS 10000000ull
#define MAPS_CHECK_MAX_NS 1000000000ull
#define MAPS_CHURN_NS 1000000ull
#define MAPS_STOP_READ_MAX_NS 200000ull
#define MAPS_WATCH_NS 1000000000ull
/* The quickest read is judged against MAPS_STOP_READ_MAX_NS only once this
 * many reads were timed: a first read can cost far more than the next (cold
 * caches, the table growing, a sanitizer build on a busy host: swaplibs'
 * first took 290 us where its later ones took under 200), and judged on it
 * alone the reads at each stop were off after an unload, its samples named
 * by the library mapped before (sym_dlopen_reuse under ASAN beside two busy
 * loops: *_padding in 4 runs of 12). */
#define MAPS_COST_READS 8u

static void read_maps_if_due(struct recorder_process *p)
{
	uint64_t now = clock_monotonic_ns(), cost = p->maps_read_cost_ns;
	uint64_t every;
	if (procmaps_code_unloaded(p->maps)) {
		every = 20 * cost > MAPS_CHURN_NS ? 20 * cost : MAPS_CHURN_NS;
	} else {
		every = 100 * cost;
		every = every < MAPS_CHECK_MIN_NS ? MAPS_CHECK_MIN_NS :
			every > MAPS_CHECK_MAX_NS ? MAPS_CHECK_MAX_NS : every;
	}
	if (now - p->maps_read_ns < every)
		return;
	uint64_t cpu = clock_thread_cpu_ns();
	(void)procmaps_refresh(p->maps);
	p->maps_read_ns = clock_monotonic_ns();
	p->maps_read_cost_ns = clock_thread_cpu_ns() - cpu;
	if (!p->maps_read_least_ns || p->maps_read_cost_ns < p->maps_read_least_ns)
		p->maps_read_least_ns = p->maps_read_cost_ns;
	if (p->maps_reads < MAPS_COST_READS)
		p->maps_reads++;
}

/* A thread of P is stopped: if P unloaded code, its mappings as they are
 * now (see read_maps_if_due). */
static void read_maps_at_stop(struct recorder_process *p)
{
	uint64_t now = clock_monotonic_ns(), gen = procmaps_code_generation(p->maps);
	if (gen != p->maps_generation) {
		p->maps_generation = gen;
		p->maps_watch_until_ns = now + MAPS_WATCH_NS;
	}
	if (!procmaps_code_unloaded(p->maps) && now >= p->maps_watch_until_ns)
		return;
	if (p->maps_reads < MAPS_COST_READS || p->maps_read_least_ns <= MAPS_STOP_READ_MAX_NS)
		p->maps_read_ns = 0;   /* (due now) */
	read_maps_if_due(p);
}

void recorder_read_maps(struct recorder *r)
{
	for (size_t i = 0; i < r->nprocs; i++) {
		struct recorder_process *p = r->procs[i];
		if (!p->alive)
			continue;
		if (p->sampled && !procmaps_code_unloaded(p->maps))
			read_maps_if_due(p);
		/* a new thread's stack found inside the next tick takes no
		 * allocation (unwind.c rereads the mappings for it) */
		procmaps_reserve(p->maps);
	}
}

/* P loaded a library where another had been: each code address of a stack
 * carries the tag of the mapping it was in (address.h), so it is
 * symbolized by that library, not by the one there at the end. */
static void tag_addresses(struct recorder_process *p, uint64_t *addrs, unsigned depth)
{
	for (unsigned i = 0; i < depth; i++) {
		if (addr_is_runtime(addrs[i]))
			continue;
		const struct procmaps_entry *e = procmaps_find(p->maps, addr_lookup_pc(addrs[i]));
		if (e && e->executable)
			addrs[i] = addr_with_tag(addrs[i], e->tag);
	}
}

static uint32_t flags_for_result(enum unwind_result res)
{
	switch (res) {
	case UNWIND_OK: return 0;
	case UNWIND_DEPTH: return STACK_TRUNCATED_DEPTH;
	case UNWIND_WINDOW: return STACK_TRUNCATED_WINDOW;
	case UNWIND_NO_INFO: return STACK_UNWIND_ERROR | STACK_UNWIND_NO_INFO;
	default: return STACK_UNWIND_ERROR;
	}
}

/* What each runtime found in P allows, said (runtime.h's describe): how
 * its state is read, with -v once a process; why it is not (or, for the
 * kernel's samples of KERNEL_COPY, cannot be), once a run for each reason. */
static void tell_runtimes(struct recorder *r, struct recorder_process *p, bool kernel_copy)
{
	for (unsigned k = 0; k < RUNTIME_KINDS; k++) {
		struct runtime_found f;
		if (p->runtime_told[k] || !unwind_runtime(p->unwinder, k, &f))
			continue;
		p->runtime_told[k] = true;
		char text[512];
		unsigned reason = 0;
		enum runtime_say say = runtime_ops_of(k)->describe(&f, kernel_copy, &reason, text,
								   sizeof text);
		reason %= 32;
		if (say == RUNTIME_SAY_NOTHING || (say == RUNTIME_SAY_VERBOSE && !r->cfg.verbose) ||
		    (say == RUNTIME_SAY_ONCE && (r->runtime_said[k] & (1u << reason))))
			continue;
		if (say == RUNTIME_SAY_ONCE)
			r->runtime_said[k] |= 1u << reason;
		struct recorder_notice n = { .kind = RECORDER_NOTICE_RUNTIME, .pid = p->pid,
					     .comm = p->comm, .text = text };
		tell(r, &n);
	}
}

/* SNAP's kernel frames (address.h), at most MAX, into ADDRS: how many. */
static unsigned kernel_frames(const struct unwind_snapshot *snap, uint64_t *addrs, unsigned max)
{
	unsigned n = 0;
	for (size_t i = 0; i < snap->kernel_n && n < max; i++) {
		uint64_t ip;
		memcpy(&ip, snap->kernel_chain + 8 * i, sizeof ip);
		if (addr_kernel(ip, n == 0 && !snap->kernel_returns, &addrs[n]))
			n++;
	}
	return n;
}

void recorder_count_kernel(struct recorder *r, uint32_t key, uint32_t flags,
			   const struct unwind_snapshot *snap, unsigned count)
{
	unsigned depth = kernel_frames(snap, r->addrs, r->cfg.max_depth);
	recorder_count(r, key, flags, r->addrs, depth, count);
}

bool recorder_places_kernel(const struct recorder *r)
{
	return r->kernel && !ksyms_hidden(r->kernel);
}

size_t recorder_kernel_stack(struct recorder *r, const char *text, size_t len, uint64_t *out,
			     size_t max)
{
	return ksyms_stack(r->kernel, text, len, out, max);
}

void recorder_count_snapshot(struct recorder *r, struct recorder_process *p, uint32_t key,
			     const struct unwind_snapshot *snap, unsigned count,
			     const uint64_t **addrs, unsigned *depth, uint32_t *flags)
{
	/* (a stop at an arrival stands for no period: no period's counters) */
	uint32_t add = *flags;
	unsigned periods = (add & STACK_ARRIVAL) ? 0 : count;
	*depth = 0;
	p->sampled = true;
	/* (the mappings of a process that unloaded code are read before each
	 * of its samples: at the stop (recorder_capture), or here for a
	 * sample the kernel took (--backend=perf); the others' between ticks:
	 * recorder_read_maps) */
	if (procmaps_code_unloaded(p->maps) && snap->kernel_copy)
		read_maps_if_due(p);
	tell_runtimes(r, p, snap->kernel_copy);
	/* the kernel's frames (--backend=perf) above the user stack */
	unsigned nk = kernel_frames(snap, r->addrs, r->cfg.max_depth / 2);
	uint64_t *user = r->addrs + nk;
	unsigned max = r->cfg.max_depth - nk;
	enum unwind_result res = unwind_stack(p->unwinder, snap, user, max, depth);
	/* (the kernel's copy ends with the stack in use: a Go stack goes on
	 * by the kernel's frame-pointer chain of the same sample) */
	if (res != UNWIND_OK && snap->fp_chain_n &&
	    unwind_fp_continue(p->unwinder, snap, user, depth, max)) {
		res = UNWIND_OK;
		r->stats.fp_continued += periods;
	}
	if (unwind_snapshot_runtime_frames(snap, RUNTIME_PYTHON))
		r->stats.python += periods;
	if (procmaps_has_reuse(p->maps))
		tag_addresses(p, user, *depth);
	*depth += nk;
	r->stats.unwind_results[res] += periods;   /* (periods, as samples and truncated) */
	if (res == UNWIND_WINDOW) {
		size_t w = unwind_widen(p->unwinder, snap);
		if (w > r->cfg.stack_window && w > r->stats.window_widest)
			r->stats.window_widest = w;
	}
	*flags = flags_for_result(res) | add;
	/* (a window cut before the window's end: the kernel's copy was short) */
	if (res == UNWIND_WINDOW && snap->kernel_copy && snap->stack_len < snap->stack_cap)
		*flags |= STACK_COPY_SHORT;
	*addrs = r->addrs;
	recorder_count(r, key, *flags, r->addrs, *depth, count);
}

void recorder_record_pause(struct recorder *r, uint64_t from_ns, uint64_t done_ns)
{
	r->pause_hist[pause_bucket(done_ns - from_ns)]++;
	r->pause_count++;
}

/* ---- what was recorded --------------------------------------------------------- */

size_t recorder_nthreads(const struct recorder *r)
{
	return r->nthreads - r->nfree;
}

const struct recorder_thread *recorder_thread(const struct recorder *r, uint32_t key)
{
	return key < r->nthreads && r->threads[key].tid != 0 ? &r->threads[key] : NULL;
}

size_t recorder_nprocesses(const struct recorder *r)
{
	return r->nprocs;
}

struct procmaps *recorder_process_maps(const struct recorder *r, size_t i)
{
	return i < r->nprocs ? r->procs[i]->maps : NULL;
}

void recorder_get_stats(const struct recorder *r, struct recorder_stats *out)
{
	*out = r->stats;
	out->keys_held = r->nthreads - r->nfree;
	out->keys_made = r->made;
	out->pause_p50_ns = pause_percentile(r, 0.50);
	out->pause_p99_ns = pause_percentile(r, 0.99);
}
