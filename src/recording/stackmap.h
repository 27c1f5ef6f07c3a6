/* stackmap: bounded counting of stacks (pure: no ptrace, no libraries).
 *
 * A fixed table of NBUCKETS buckets x SLOTS slots, sized from max_stacks at
 * creation; the address pool is allocated once too, so stackmap_insert never
 * allocates. Key = (thread key, flags, address array). Inserting an existing key
 * adds to its count. When the key's bucket is full, the entry with
 * the smallest count (the new one included) is appended to a spill file in
 * $TMPDIR, unlinked at creation, so nothing is left behind after a crash.
 * stackmap_foreach merges the spill back exactly: every key is reported once
 * with the sum of all its counts (invariant: totals are exact).
 *
 * Bounded memory: addresses live in an arena of 16-address chunks chained per
 * entry, sized for min(max_depth, 48) addresses per slot on average (and at
 * least two max_depth stacks); when it has too few free chunks for a new
 * entry, a clock hand over the buckets spills the smallest entry of each
 * bucket it passes. Spill records go through a write buffer allocated at
 * creation; the file is opened at the first eviction. If a write fails, the
 * new observation is dropped (stats.lost) and the residents stay.
 * stackmap_foreach merges in passes partitioned by hash range: a temporary
 * table as large as the resident capacity collects the residents and spill
 * records of [lo, hi]; when it fills, hi drops to the median hash held and
 * the keys above are left to the next pass. So foreach needs about twice the
 * resident memory and reads the spill file once per pass. */
#ifndef CSAMPLER_STACKMAP_H
#define CSAMPLER_STACKMAP_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Flags carried in the key (part of identity). */
#define STACK_TRUNCATED_DEPTH  0x1u  /* hit --max-depth */
#define STACK_TRUNCATED_WINDOW 0x2u  /* walked off the copied stack window */
#define STACK_UNWIND_ERROR     0x4u  /* unwinder stopped on an error before main/_start */
#define STACK_NOT_CAPTURED     0x8u  /* --idle: a blocked thread we may not interrupt
                                       * and have no earlier stack for (depth 0) */
#define STACK_NO_USER_CONTEXT  0x10u /* --backend=perf: sampled in the kernel with no
                                       * user registers (an exec replacing the
                                       * program, a thread not started yet) (depth 0) */
#define STACK_UNWIND_NO_INFO   0x20u /* with STACK_UNWIND_ERROR: no unwind information
                                       * where it stopped, and no frame pointer */
#define STACK_COPY_SHORT       0x40u /* with STACK_TRUNCATED_WINDOW: the kernel's copy
                                       * (--backend=perf) ended at a page not in memory */
#define STACK_NOT_STOPPED      0x80u /* a thread with child processes that is not
                                       * stopped (target_thread_stoppable) (depth 0) */
#define STACK_WAKE             0x100u /* on-CPU, ptrace: a stop of a thread not
                                       * running at the tick, at the exit of a call
                                       * that waits (where it came back from a wait);
                                       * it stands for the switch into the thread,
                                       * not for a period (stackmap_add_span) */
#define STACK_PREEMPT          0x200u /* the same elsewhere (where it was preempted) */
#define STACK_ARRIVAL (STACK_WAKE | STACK_PREEMPT)

struct stackmap;

struct stackmap_entry {
	uint32_t thread_key;
	uint32_t flags;
	uint32_t depth;          /* number of addresses */
	const uint64_t *addrs;   /* leaf first; see address.h */
	uint64_t count;          /* periods sampled */
};

struct stackmap_stats {
	uint64_t inserts;        /* calls to stackmap_insert */
	uint64_t samples;        /* sum of counts inserted */
	uint64_t spilled;        /* entries written to the spill file */
	size_t resident;         /* entries in memory now */
	size_t capacity;         /* entries memory can hold */
	uint64_t lost;           /* samples dropped because the spill file failed */
};

/* max_stacks: entries kept in memory (>= 1); max_depth: longest stack stored.
 * Returns NULL with errno set on failure. */
struct stackmap *stackmap_new(size_t max_stacks, unsigned max_depth);
void stackmap_free(struct stackmap *m);

/* Count COUNT periods of a stack. depth > max_depth is cut to max_depth and
 * STACK_TRUNCATED_DEPTH is set. Returns 0, or -1 with errno if the spill file
 * could not be written (the sample is then lost and counted in stats). */
int stackmap_insert(struct stackmap *m, uint32_t thread_key, uint32_t flags,
		    const uint64_t *addrs, unsigned depth, uint64_t count);

/* Call fn once per distinct key with merged totals (memory + spill), in no
 * particular order. fn returning non-zero stops the walk and is returned.
 * Returns -1 with errno on a spill read error. The map is unchanged. */
int stackmap_foreach(struct stackmap *m,
		     int (*fn)(void *ctx, const struct stackmap_entry *e), void *ctx);

void stackmap_get_stats(const struct stackmap *m, struct stackmap_stats *out);

/* The kernel's account of each thread's CPU (both backends read it from
 * schedstat), kept per thread key beside the counts, so that a thread's
 * total in every output is the CPU the kernel says it used while this map
 * counted, however its samples fell (a busy host, a shared CPU, a tick that
 * came late): its stacks keep the shares sampling gave them, scaled to that
 * total, rounded so the scaled counts add up to it exactly.
 * The threads counted fewer than STACKMAP_SCALE_MIN periods whose CPU is
 * under as many periods (short-lived, or never sampled at all: one with a
 * few samples of much CPU, its stops dropped, keeps its own) are scaled
 * together, one pool for the map (never below their count where the
 * account may have come out short, stackmap_set_account_whole): the
 * pool's stacks to the pool's CPU, so the CPU of a thread never sampled is
 * not lost (its sample chance is its CPU's: the samples of those sampled
 * stand for it) and the total is the kernel's: a shell loop of 1,500
 * /bin/true at 999 Hz shows 0.84 s (ptrace) and 0.92 s (perf) of the
 * kernel's 0.88-0.90 s (counted as sampled: 0.98 and 1.06 s; pooled per
 * process, each /bin/true a pool of one rounded to 0 or 1 period: 0.42 and
 * 0.72 s). A map never accounted (wall-clock profiles, a converted one)
 * counts as sampled; in a map that is, a key with no CPU accounted used
 * none (its samples stood for CPU outside the window: before an exec,
 * before the first read).
 * stackmap_reserve_keys makes room for keys [0, N) (between ticks, so that
 * inserting and accounting never allocate); a key beyond the room is
 * neither counted per key nor scaled. -1 out of memory. */
#define STACKMAP_SCALE_MIN 8u
int stackmap_reserve_keys(struct stackmap *m, size_t n);
/* KEY STACKMAP_POOL_KEY: the CPU of a thread that has no key (it ended
 * never sampled: a key each would grow with a thread-making target), the
 * pool's. */
#define STACKMAP_POOL_KEY UINT32_MAX
void stackmap_add_cpu(struct stackmap *m, uint32_t key, uint64_t ns);
/* WHOLE: every thread's CPU is accounted to its end (ptrace on-CPU,
 * attached throughout: each thread's exit is read before it is gone), so
 * the pool is scaled to its account even below its count: a thread per
 * request, several sampled in one period (each a whole one), had its pool
 * counted 8,294 periods for the 6,474 its threads used, and the process
 * 10.1 s of CPU in 10 s for the kernel's 8.4. Else (the default) a short
 * pool keeps its count: threads that ended unread while csampler had no
 * CPU would scale their samples away. */
void stackmap_set_account_whole(struct stackmap *m, bool whole);
/* The switch into KEY's thread (issue 44: the kernel charges the switch
 * into a thread to the thread, and no sample lands in it): NS of its CPU
 * account was the switch where it came back from its waits (CLASS
 * STACK_WAKE: its voluntary switches'), or where it was preempted
 * (STACK_PREEMPT), given to its stacks of that flag in their proportions,
 * the rest of its account to its other stacks. A class with fewer than
 * STACKMAP_WAKE_MIN periods of such stacks, or a pooled thread, has it
 * spread over all its stacks; those stacks count nothing then, and
 * nothing in a map never accounted. */
#define STACKMAP_WAKE_MIN 4u
void stackmap_add_span(struct stackmap *m, uint32_t key, uint32_t class, uint64_t ns);
/* KEY's account in M (and the map's: its room, whether any CPU was
 * accounted, the CPU of threads with no key), for the scaler. */
struct stackmap_account {
	uint64_t counted, cpu_ns;       /* KEY's: periods counted, CPU */
	uint64_t woken, span_ns;        /* KEY's STACK_WAKE periods, and the CPU
	                                 * stackmap_add_span gave them */
	uint64_t preempted, preempt_span_ns;  /* the same of STACK_PREEMPT */
	size_t nkeys;
	bool accounted;
	bool whole;                     /* stackmap_set_account_whole */
	uint64_t pool_cpu_ns;
};
void stackmap_key_account(const struct stackmap *m, uint32_t key, struct stackmap_account *out);
/* A walk of M's entries that gives each its share of its key's (or the
 * pool's) total (stackmap_scale_share), keeping what was given so far: the
 * profile builder and --top count with it. PERIOD_NS 0: counts as sampled
 * (wall-clock). Init returns -1 out of memory. */
struct stackmap_scaler {
	const struct stackmap *map;
	uint64_t period_ns;
	uint64_t *seen;          /* by key: periods walked so far */
	uint64_t *seen_woken;    /* by key: STACK_WAKE periods walked so far */
	uint64_t *seen_preempted; /* by key: STACK_PREEMPT periods walked so far */
	uint64_t pool_total, pool_counted, pool_seen;
	size_t nkeys;
};
int stackmap_scaler_init(struct stackmap_scaler *sc, const struct stackmap *m, uint64_t period_ns);
/* KEY's total in periods after scaling (its share of the pool's for a
 * pooled key, rounded), and its count as sampled (*COUNTED, STACK_ARRIVAL
 * periods left out). The count of a stack of FLAGS after scaling. */
uint64_t stackmap_scaler_key_total(const struct stackmap_scaler *sc, uint32_t key,
				   uint64_t *counted);
uint64_t stackmap_scaler_count(struct stackmap_scaler *sc, uint32_t key, uint32_t flags,
			       uint64_t count);
void stackmap_scaler_fini(struct stackmap_scaler *sc);

/* The part of a key's total that falls to its stacks counted so far: with
 * SEEN_BEFORE periods of the key's stacks already emitted and COUNT more
 * now, how many of the key's TOTAL periods (of COUNTED) go to these. Summed
 * over all of a key's stacks in any order, exactly TOTAL. */
uint64_t stackmap_scale_share(uint64_t seen_before, uint64_t count, uint64_t total,
			      uint64_t counted);

#endif
