/* Unit tests for stackmap: exact totals against a reference counter, with
 * eviction forced by tiny tables and deep stacks, truncation, early stop,
 * statistics and spill failures. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "stackmap.h"

/* ---- a reference counter -------------------------------------------------- */

struct ref_stack {
	uint32_t thread_key, flags;
	unsigned depth;
	uint64_t addrs[400];
	uint64_t count;
	unsigned seen;           /* times foreach reported it */
};

struct ref {
	struct ref_stack *s;
	size_t n;
	uint64_t total_count;
	uint64_t seen_count;
	size_t reported;
	int unknown;             /* foreach reported a key not in the reference */
};

static uint64_t rng_next(uint64_t *state)
{
	uint64_t x = *state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return x;
}

/* N distinct stacks; depths in [min_depth, max_depth]. */
static void ref_make(struct ref *r, size_t n, unsigned min_depth, unsigned max_depth, uint64_t seed)
{
	memset(r, 0, sizeof(*r));
	r->s = calloc(n, sizeof(*r->s));
	assert_non_null(r->s);
	r->n = n;
	uint64_t st = seed;
	for (size_t i = 0; i < n; i++) {
		struct ref_stack *s = &r->s[i];
		s->thread_key = (uint32_t)(rng_next(&st) % 4);
		s->flags = (uint32_t)(rng_next(&st) % 3) == 0 ? STACK_UNWIND_ERROR : 0;
		s->depth = min_depth + (unsigned)(rng_next(&st) % (max_depth - min_depth + 1));
		if (s->depth == 0 && i > 0)
			s->depth = 1;    /* one empty stack only: all empty ones are equal */
		/* Shared prefixes and suffixes like real stacks; the index keeps
		 * every stack distinct. */
		for (unsigned d = 0; d < s->depth; d++)
			s->addrs[d] = 0x400000 + (rng_next(&st) % 64) * 16;
		if (s->depth > 0)
			s->addrs[0] = 0x7f0000000000 + i;
	}
}

static int ref_check_entry(void *ctx, const struct stackmap_entry *e)
{
	struct ref *r = ctx;
	r->reported++;
	r->seen_count += e->count;
	for (size_t i = 0; i < r->n; i++) {
		struct ref_stack *s = &r->s[i];
		if (s->thread_key == e->thread_key && s->flags == e->flags && s->depth == e->depth &&
		    !memcmp(s->addrs, e->addrs, e->depth * sizeof(uint64_t))) {
			s->seen++;
			if (s->count != e->count)
				r->unknown++;
			return 0;
		}
	}
	r->unknown++;
	return 0;
}

static void ref_verify(struct stackmap *m, struct ref *r)
{
	for (size_t i = 0; i < r->n; i++)
		r->s[i].seen = 0;
	r->seen_count = 0;
	r->reported = 0;
	r->unknown = 0;
	assert_int_equal(stackmap_foreach(m, ref_check_entry, r), 0);
	assert_int_equal(r->unknown, 0);
	assert_int_equal(r->seen_count, r->total_count);
	size_t distinct = 0;
	for (size_t i = 0; i < r->n; i++) {
		if (r->s[i].count) {
			distinct++;
			assert_int_equal(r->s[i].seen, 1);
		} else {
			assert_int_equal(r->s[i].seen, 0);
		}
	}
	assert_int_equal(r->reported, distinct);
}

/* Zipf-like choice: low indices much more frequent. */
static size_t pick_skewed(uint64_t *st, size_t n)
{
	double u = (double)(rng_next(st) >> 11) / (double)(UINT64_C(1) << 53);
	size_t i = (size_t)((double)n * u * u * u);
	return i < n ? i : n - 1;
}

static void run_stream(size_t max_stacks, unsigned max_depth, size_t nstacks, unsigned min_d,
		       unsigned max_d, size_t ninserts, uint64_t seed)
{
	struct ref r;
	ref_make(&r, nstacks, min_d, max_d, seed);
	struct stackmap *m = stackmap_new(max_stacks, max_depth);
	assert_non_null(m);
	uint64_t st = seed * 7 + 1;
	for (size_t k = 0; k < ninserts; k++) {
		struct ref_stack *s = &r.s[pick_skewed(&st, nstacks)];
		uint64_t count = 1 + (rng_next(&st) % 8 == 0 ? rng_next(&st) % 5 : 0);
		assert_int_equal(stackmap_insert(m, s->thread_key, s->flags, s->addrs, s->depth,
						 count), 0);
		s->count += count;
		r.total_count += count;
		if (k == ninserts / 2)
			ref_verify(m, &r);   /* foreach in the middle changes nothing */
	}
	ref_verify(m, &r);
	ref_verify(m, &r);

	struct stackmap_stats stats;
	stackmap_get_stats(m, &stats);
	assert_int_equal(stats.inserts, ninserts);
	assert_int_equal(stats.samples, r.total_count);
	assert_int_equal(stats.lost, 0);
	assert_true(stats.resident <= stats.capacity);
	assert_true(stats.capacity >= max_stacks);
	assert_true(stats.capacity < max_stacks + 8);
	if (nstacks > stats.capacity)
		assert_true(stats.spilled > 0);
	stackmap_free(m);
	free(r.s);
}

static void test_stream_tiny_table(void **state)
{
	(void)state;
	run_stream(1, 64, 500, 0, 30, 20000, 1);
	run_stream(8, 64, 2000, 1, 40, 40000, 2);
	run_stream(100, 64, 3000, 1, 60, 60000, 3);
}

static void test_stream_deep_stacks_arena_eviction(void **state)
{
	(void)state;
	/* 16 slots but deep stacks: the chunk arena, not the slots, runs out. */
	run_stream(16, 400, 600, 150, 400, 20000, 4);
	run_stream(64, 300, 1000, 0, 300, 30000, 5);
}

static void test_stream_no_eviction(void **state)
{
	(void)state;
	run_stream(4096, 128, 200, 0, 100, 10000, 6);
}

static void test_stream_many_passes(void **state)
{
	(void)state;
	/* 20000 distinct keys against a 64-entry merge table: many passes. */
	run_stream(8, 32, 20000, 1, 20, 100000, 7);
}

static int count_calls(void *ctx, const struct stackmap_entry *e)
{
	(void)e;
	int *calls = ctx;
	return ++*calls == 3 ? 7 : 0;
}

static void test_foreach_early_stop(void **state)
{
	(void)state;
	for (size_t max_stacks = 4; max_stacks <= 1024; max_stacks *= 256) {
		/* 4: merged path (spilled); 1024: memory only. */
		struct stackmap *m = stackmap_new(max_stacks, 16);
		assert_non_null(m);
		for (uint64_t i = 0; i < 100; i++)
			assert_int_equal(stackmap_insert(m, 1, 0, &i, 1, 1), 0);
		int calls = 0;
		assert_int_equal(stackmap_foreach(m, count_calls, &calls), 7);
		assert_int_equal(calls, 3);
		stackmap_free(m);
	}
}

struct one {
	int n;
	struct stackmap_entry e;
	uint64_t addrs[16];
};

static int keep_entries(void *ctx, const struct stackmap_entry *e)
{
	struct one *o = ctx;
	if (o[0].n < 4) {
		o[o[0].n].e = *e;
		memcpy(o[o[0].n].addrs, e->addrs, e->depth * sizeof(uint64_t));
	}
	o[0].n++;
	return 0;
}

static void test_depth_truncation(void **state)
{
	(void)state;
	struct stackmap *m = stackmap_new(64, 4);
	assert_non_null(m);
	uint64_t a[10] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
	assert_int_equal(stackmap_insert(m, 9, 0, a, 10, 2), 0);
	assert_int_equal(stackmap_insert(m, 9, 0, a, 7, 1), 0);   /* same after the cut */
	struct one o[4] = { { 0 } };
	assert_int_equal(stackmap_foreach(m, keep_entries, o), 0);
	assert_int_equal(o[0].n, 1);
	assert_int_equal(o[0].e.depth, 4);
	assert_int_equal(o[0].e.flags, STACK_TRUNCATED_DEPTH);
	assert_int_equal(o[0].e.thread_key, 9);
	assert_int_equal(o[0].e.count, 3);
	assert_memory_equal(o[0].addrs, a, 4 * sizeof(uint64_t));

	/* The same four addresses, not truncated, are another key. */
	assert_int_equal(stackmap_insert(m, 9, 0, a, 4, 1), 0);
	memset(o, 0, sizeof(o));
	assert_int_equal(stackmap_foreach(m, keep_entries, o), 0);
	assert_int_equal(o[0].n, 2);
	stackmap_free(m);
}

static void test_key_parts(void **state)
{
	(void)state;
	/* thread key, flags, depth and every address are part of the identity. */
	struct stackmap *m = stackmap_new(64, 8);
	assert_non_null(m);
	uint64_t a[3] = { 1, 2, 3 }, b[3] = { 1, 2, 4 };
	assert_int_equal(stackmap_insert(m, 1, 0, a, 3, 1), 0);
	assert_int_equal(stackmap_insert(m, 2, 0, a, 3, 1), 0);
	assert_int_equal(stackmap_insert(m, 1, STACK_TRUNCATED_WINDOW, a, 3, 1), 0);
	assert_int_equal(stackmap_insert(m, 1, 0, a, 2, 1), 0);
	assert_int_equal(stackmap_insert(m, 1, 0, b, 3, 1), 0);
	assert_int_equal(stackmap_insert(m, 1, 0, a, 0, 1), 0);
	assert_int_equal(stackmap_insert(m, 1, 0, a, 3, 1), 0);
	struct one o[4] = { { 0 } };
	assert_int_equal(stackmap_foreach(m, keep_entries, o), 0);
	assert_int_equal(o[0].n, 6);
	struct stackmap_stats st;
	stackmap_get_stats(m, &st);
	assert_int_equal(st.inserts, 7);
	assert_int_equal(st.samples, 7);
	assert_int_equal(st.resident, 6);
	assert_int_equal(st.spilled, 0);
	assert_int_equal(st.capacity, 64);
	stackmap_free(m);
}

static void test_stats_eviction_policy(void **state)
{
	(void)state;
	/* One bucket of 8 slots. */
	struct stackmap *m = stackmap_new(1, 4);
	assert_non_null(m);
	for (uint64_t i = 0; i < 8; i++)
		assert_int_equal(stackmap_insert(m, 0, 0, &i, 1, 10), 0);
	struct stackmap_stats st;
	stackmap_get_stats(m, &st);
	assert_int_equal(st.capacity, 8);
	assert_int_equal(st.resident, 8);
	assert_int_equal(st.spilled, 0);
	/* A newcomer smaller than every resident spills itself. */
	uint64_t x = 100;
	assert_int_equal(stackmap_insert(m, 0, 0, &x, 1, 1), 0);
	stackmap_get_stats(m, &st);
	assert_int_equal(st.resident, 8);
	assert_int_equal(st.spilled, 1);
	/* A heavier newcomer takes the place of the smallest resident. */
	x = 101;
	assert_int_equal(stackmap_insert(m, 0, 0, &x, 1, 50), 0);
	stackmap_get_stats(m, &st);
	assert_int_equal(st.resident, 8);
	assert_int_equal(st.spilled, 2);
	assert_int_equal(st.samples, 8 * 10 + 1 + 50);
	assert_int_equal(st.inserts, 10);
	stackmap_free(m);
}

static int sum_counts(void *ctx, const struct stackmap_entry *e)
{
	uint64_t *sum = ctx;
	sum[0] += e->count;
	sum[1]++;
	return 0;
}

static void test_spill_failure_is_counted(void **state)
{
	(void)state;
	const char *old = getenv("TMPDIR");
	char *saved = old ? strdup(old) : NULL;
	setenv("TMPDIR", "/nonexistent/csampler-test", 1);
	struct stackmap *m = stackmap_new(1, 4);
	if (saved)
		setenv("TMPDIR", saved, 1);
	else
		unsetenv("TMPDIR");
	free(saved);
	assert_non_null(m);
	uint64_t total = 0, failed = 0;
	for (uint64_t i = 0; i < 20; i++) {
		int r = stackmap_insert(m, 0, 0, &i, 1, 2);
		total += 2;
		if (r < 0)
			failed += 2;
	}
	assert_int_equal(failed, 12 * 2);
	struct stackmap_stats st;
	stackmap_get_stats(m, &st);
	assert_int_equal(st.samples, total);
	assert_int_equal(st.lost, failed);
	assert_int_equal(st.resident, 8);
	uint64_t sum[2] = { 0, 0 };
	assert_int_equal(stackmap_foreach(m, sum_counts, sum), 0);
	assert_int_equal(sum[0], total - st.lost);
	assert_int_equal(sum[1], 8);
	stackmap_free(m);
}

static void test_invalid_arguments(void **state)
{
	(void)state;
	assert_null(stackmap_new(0, 10));
	assert_null(stackmap_new(10, 0));
	stackmap_free(NULL);
}

/* The kernel's account per key: a key counted enough periods, or a few of
 * much CPU, gets its own CPU in periods (rounded); the short-lived keys are
 * one pool, scaled to their CPU together (a key never sampled gives its CPU
 * to the others); in
 * an accounted map a key with no CPU used none; a map never accounted, or
 * a wall-clock walk, counts as sampled. The scaled shares of a key's (or
 * the pool's) stacks, in any order and of any sizes, add up to its total
 * exactly, and each is within one period of count x ratio. */
static void test_cpu_scaling(void **state)
{
	(void)state;
	const uint64_t period = 10000000;  /* 10 ms */
	struct stackmap *m = stackmap_new(64, 8);
	assert_non_null(m);
	assert_int_equal(stackmap_reserve_keys(m, 8), 0);
	uint64_t a[1] = { 0x1000 }, b[1] = { 0x2000 }, c[1] = { 0x3000 };
	struct stackmap_scaler sc;
	uint64_t counted;

	/* never accounted: every key as sampled */
	assert_int_equal(stackmap_insert(m, 0, 0, a, 1, 17), 0);
	assert_int_equal(stackmap_insert(m, 0, 0, b, 1, 13), 0);
	assert_int_equal(stackmap_scaler_init(&sc, m, period), 0);
	assert_int_equal(stackmap_scaler_key_total(&sc, 0, &counted), 30);
	assert_int_equal(stackmap_scaler_count(&sc, 0, 0, 17), 17);
	stackmap_scaler_fini(&sc);

	/* key 0: 30 counted, the kernel says 12.34 periods */
	stackmap_add_cpu(m, 0, 123400000);
	/* key 2: 40 counted, no CPU accounted; key 200: beyond the room */
	assert_int_equal(stackmap_insert(m, 2, 0, c, 1, 40), 0);
	assert_int_equal(stackmap_insert(m, 200, 0, c, 1, 7), 0);
	stackmap_add_cpu(m, 200, 500000000);
	/* key 1: 5 counted of 90 periods (its stops were dropped): its own;
	 * the pool, 4 counted, 12 periods: keys 3, 4 and 5 (1, 2 and 0
	 * counted, 3 + 3 + 6 periods), key 6 (1 counted, no CPU: it stood for
	 * CPU outside the window) */
	assert_int_equal(stackmap_insert(m, 1, 0, c, 1, 5), 0);
	stackmap_add_cpu(m, 1, 900000000);
	assert_int_equal(stackmap_insert(m, 3, 0, a, 1, 1), 0);
	assert_int_equal(stackmap_insert(m, 4, 0, a, 1, 1), 0);
	assert_int_equal(stackmap_insert(m, 4, 0, b, 1, 1), 0);
	stackmap_add_cpu(m, 3, 30000000);
	stackmap_add_cpu(m, 4, 30000000);
	stackmap_add_cpu(m, 5, 60000000);
	assert_int_equal(stackmap_insert(m, 6, 0, c, 1, 1), 0);

	assert_int_equal(stackmap_scaler_init(&sc, m, period), 0);
	assert_int_equal(stackmap_scaler_key_total(&sc, 0, &counted), 12);
	assert_int_equal(counted, 30);
	assert_int_equal(stackmap_scaler_key_total(&sc, 2, &counted), 0);
	assert_int_equal(counted, 40);
	assert_int_equal(stackmap_scaler_key_total(&sc, 200, &counted), 0);
	assert_int_equal(stackmap_scaler_key_total(&sc, 1, &counted), 90);
	assert_int_equal(counted, 5);
	assert_int_equal(stackmap_scaler_key_total(&sc, 3, &counted), 3);
	assert_int_equal(stackmap_scaler_key_total(&sc, 4, &counted), 6);
	assert_int_equal(stackmap_scaler_key_total(&sc, 5, &counted), 0);
	assert_int_equal(stackmap_scaler_key_total(&sc, 6, &counted), 3);
	/* the walk: the pool's stacks share its 12 periods, whatever the key */
	uint64_t pool = 0;
	pool += stackmap_scaler_count(&sc, 4, 0, 1);
	pool += stackmap_scaler_count(&sc, 3, 0, 1);
	pool += stackmap_scaler_count(&sc, 4, 0, 1);
	pool += stackmap_scaler_count(&sc, 6, 0, 1);
	assert_int_equal(stackmap_scaler_count(&sc, 200, 0, 7), 7);
	assert_int_equal(stackmap_scaler_count(&sc, 1, 0, 5), 90);
	assert_int_equal(pool, 12);
	assert_int_equal(stackmap_scaler_count(&sc, 0, 0, 17) + stackmap_scaler_count(&sc, 0, 0, 13), 12);
	assert_int_equal(stackmap_scaler_count(&sc, 2, 0, 40), 0);
	stackmap_scaler_fini(&sc);
	/* a thread that ended never sampled: its CPU with no key, the pool's */
	stackmap_add_cpu(m, STACKMAP_POOL_KEY, 90000000);
	assert_int_equal(stackmap_scaler_init(&sc, m, period), 0);
	assert_int_equal(stackmap_scaler_key_total(&sc, 4, &counted), 11);  /* 2 of 4, of 21 */
	assert_int_equal(stackmap_scaler_key_total(&sc, 0, &counted), 12);
	stackmap_scaler_fini(&sc);
	stackmap_free(m);
	/* a pool whose account came out short keeps its count sampled */
	m = stackmap_new(64, 8);
	assert_non_null(m);
	assert_int_equal(stackmap_reserve_keys(m, 8), 0);
	assert_int_equal(stackmap_insert(m, 3, 0, a, 1, 5), 0);
	stackmap_add_cpu(m, 3, 10000000);
	assert_int_equal(stackmap_scaler_init(&sc, m, period), 0);
	assert_int_equal(stackmap_scaler_key_total(&sc, 3, &counted), 5);
	stackmap_scaler_fini(&sc);
	/* ...unless the account is whole (every thread read at its end): then
	 * its CPU, 1 period for the 5 counted (threads sampled beside others
	 * in one period, each a whole one) */
	stackmap_set_account_whole(m, true);
	assert_int_equal(stackmap_scaler_init(&sc, m, period), 0);
	assert_int_equal(stackmap_scaler_key_total(&sc, 3, &counted), 1);
	assert_int_equal(counted, 5);
	assert_int_equal(stackmap_scaler_count(&sc, 3, 0, 5), 1);
	stackmap_scaler_fini(&sc);
	stackmap_set_account_whole(m, false);
	stackmap_insert(m, 0, 0, a, 1, 17);
	stackmap_insert(m, 0, 0, b, 1, 13);
	/* wall-clock (period 0): counts as sampled */
	assert_int_equal(stackmap_scaler_init(&sc, m, 0), 0);
	assert_int_equal(stackmap_scaler_key_total(&sc, 0, &counted), 30);
	assert_int_equal(stackmap_scaler_count(&sc, 3, 0, 1), 1);
	stackmap_scaler_fini(&sc);
	stackmap_free(m);

	/* shares: random stacks of one key, in random order */
	uint64_t rng = 0x12345;
	for (int round = 0; round < 200; round++) {
		uint64_t counts[50], total_counted = 0;
		size_t n = 1 + rng_next(&rng) % 50;
		for (size_t i = 0; i < n; i++)
			total_counted += counts[i] = 1 + rng_next(&rng) % 300;
		uint64_t total = rng_next(&rng) % (3 * total_counted + 1);
		uint64_t seen = 0, sum = 0;
		for (size_t i = 0; i < n; i++) {
			uint64_t share = stackmap_scale_share(seen, counts[i], total, total_counted);
			double want = (double)counts[i] * (double)total / (double)total_counted;
			assert_true((double)share > want - 1.0 && (double)share < want + 1.0);
			seen += counts[i];
			sum += share;
		}
		assert_int_equal(sum, total);
	}
	/* unscaled: the count itself */
	assert_int_equal(stackmap_scale_share(4, 7, 20, 20), 7);
}

/* The switch into a thread put where it arrived (stackmap_add_span): its
 * STACK_WAKE stacks share the span of its wake-ups, its STACK_PREEMPT
 * stacks that of its preemptions, its other stacks the rest of its
 * account; a class with too few periods, a pooled thread and a map never
 * accounted count those stacks as nothing. */
static void test_arrival_span(void **state)
{
	(void)state;
	const uint64_t period = 10000000;  /* 10 ms */
	struct stackmap *m = stackmap_new(64, 8);
	assert_non_null(m);
	assert_int_equal(stackmap_reserve_keys(m, 8), 0);
	uint64_t a[1] = { 0x1000 }, b[1] = { 0x2000 }, w[1] = { 0x3000 }, x[1] = { 0x4000 };
	struct stackmap_scaler sc;
	uint64_t counted;

	/* never accounted: arrivals are nothing, the rest as sampled */
	assert_int_equal(stackmap_insert(m, 0, 0, a, 1, 30), 0);
	assert_int_equal(stackmap_insert(m, 0, 0, b, 1, 10), 0);
	assert_int_equal(stackmap_insert(m, 0, STACK_WAKE, w, 1, 6), 0);
	assert_int_equal(stackmap_insert(m, 0, STACK_WAKE, a, 1, 2), 0);
	assert_int_equal(stackmap_insert(m, 0, STACK_PREEMPT, x, 1, 3), 0);
	assert_int_equal(stackmap_scaler_init(&sc, m, period), 0);
	assert_int_equal(stackmap_scaler_count(&sc, 0, STACK_WAKE, 6), 0);
	assert_int_equal(stackmap_scaler_count(&sc, 0, 0, 30), 30);
	stackmap_scaler_fini(&sc);

	/* 100 periods of CPU, 20 of them wake-ups' (8 periods of such stops),
	 * 10 preemptions' (3 periods of such stops: too few, spread) */
	stackmap_add_cpu(m, 0, 100 * period);
	stackmap_add_span(m, 0, STACK_WAKE, 20 * period);
	stackmap_add_span(m, 0, STACK_PREEMPT, 10 * period);
	assert_int_equal(stackmap_scaler_init(&sc, m, period), 0);
	assert_int_equal(stackmap_scaler_key_total(&sc, 0, &counted), 100);
	assert_int_equal(counted, 40);  /* (arrivals left out) */
	assert_int_equal(stackmap_scaler_count(&sc, 0, STACK_WAKE, 6), 15);
	assert_int_equal(stackmap_scaler_count(&sc, 0, 0, 30), 60);
	assert_int_equal(stackmap_scaler_count(&sc, 0, STACK_PREEMPT, 3), 0);
	assert_int_equal(stackmap_scaler_count(&sc, 0, STACK_WAKE, 2), 5);
	assert_int_equal(stackmap_scaler_count(&sc, 0, 0, 10), 20);
	stackmap_scaler_fini(&sc);

	/* a fourth period of preemption stops: the class is placed too */
	assert_int_equal(stackmap_insert(m, 0, STACK_PREEMPT, x, 1, 1), 0);
	assert_int_equal(stackmap_scaler_init(&sc, m, period), 0);
	assert_int_equal(stackmap_scaler_count(&sc, 0, STACK_PREEMPT, 4), 10);
	assert_int_equal(stackmap_scaler_count(&sc, 0, STACK_WAKE, 8), 20);
	assert_int_equal(stackmap_scaler_count(&sc, 0, 0, 40), 70);
	stackmap_scaler_fini(&sc);

	/* a span over the account: the arrivals get all of it, in order */
	stackmap_add_span(m, 0, STACK_WAKE, 200 * period);
	assert_int_equal(stackmap_scaler_init(&sc, m, period), 0);
	assert_int_equal(stackmap_scaler_count(&sc, 0, STACK_WAKE, 8), 100);
	assert_int_equal(stackmap_scaler_count(&sc, 0, STACK_PREEMPT, 4), 0);
	assert_int_equal(stackmap_scaler_count(&sc, 0, 0, 40), 0);
	stackmap_scaler_fini(&sc);

	/* a pooled thread (few periods, little CPU): its arrivals are nothing */
	assert_int_equal(stackmap_insert(m, 3, 0, a, 1, 2), 0);
	assert_int_equal(stackmap_insert(m, 3, STACK_WAKE, w, 1, 5), 0);
	stackmap_add_cpu(m, 3, 4 * period);
	stackmap_add_span(m, 3, STACK_WAKE, 2 * period);
	assert_int_equal(stackmap_scaler_init(&sc, m, period), 0);
	assert_int_equal(stackmap_scaler_count(&sc, 3, STACK_WAKE, 5), 0);
	assert_int_equal(stackmap_scaler_count(&sc, 3, 0, 2), 4);
	/* a key beyond the room: as sampled, arrivals nothing */
	assert_int_equal(stackmap_scaler_count(&sc, 200, STACK_WAKE, 5), 0);
	assert_int_equal(stackmap_scaler_count(&sc, 200, 0, 5), 5);
	stackmap_scaler_fini(&sc);
	stackmap_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_parts),
		cmocka_unit_test(test_depth_truncation),
		cmocka_unit_test(test_foreach_early_stop),
		cmocka_unit_test(test_stats_eviction_policy),
		cmocka_unit_test(test_spill_failure_is_counted),
		cmocka_unit_test(test_invalid_arguments),
		cmocka_unit_test(test_stream_no_eviction),
		cmocka_unit_test(test_stream_tiny_table),
		cmocka_unit_test(test_stream_deep_stacks_arena_eviction),
		cmocka_unit_test(test_stream_many_passes),
		cmocka_unit_test(test_cpu_scaling),
		cmocka_unit_test(test_arrival_span),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
