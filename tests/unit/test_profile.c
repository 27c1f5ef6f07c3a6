/* Unit tests for profile: interning of every table, the sample store (kept
 * in order, in memory and through its temp file), string copies, thread
 * labels, argument checks and growth past many rehashes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

static int setup(void **state)
{
	*state = profile_new();
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	profile_free(*state);
	return 0;
}

static void test_new_is_empty(void **state)
{
	struct profile *p = *state;

	assert_int_equal(p->nfunctions, 0);
	assert_int_equal(p->nsamples, 0);
	assert_int_equal(p->total_samples, 0);
	assert_string_equal(p->command, "");
	profile_free(NULL);
}

static void test_function_interning(void **state)
{
	struct profile *p = *state;
	char name[32] = "compute";
	uint32_t a = profile_add_function(p, name, "_Z7computev", "a.c", 10);
	uint32_t b, c, d;

	assert_int_equal(a, 0);
	/* strings are copied in */
	strcpy(name, "changed");
	assert_string_equal(p->functions[a].name, "compute");
	b = profile_add_function(p, "compute", "_Z7computev", "a.c", 10);
	assert_int_equal(b, a);
	c = profile_add_function(p, "compute", "_Z7computev", "a.c", 11);
	assert_int_equal(c, 1);
	d = profile_add_function(p, "compute", "_Z7computev", "b.c", 10);
	assert_int_equal(d, 2);
	assert_int_equal(profile_add_function(p, "compute", NULL, NULL, 0), 3);
	assert_string_equal(p->functions[3].system_name, "");
	assert_string_equal(p->functions[3].filename, "");
	assert_int_equal(p->nfunctions, 4);
	assert_int_equal(p->functions[1].start_line, 11);
}

static void test_mapping_interning(void **state)
{
	struct profile *p = *state;
	char path[32] = "/lib/libc.so.6";
	struct profile_mapping m = { 0x1000, 0x2000, 0, path, "abcd", false, false, false, false };
	uint32_t a = profile_add_mapping(p, &m), b;

	assert_int_equal(a, 0);
	strcpy(path, "/changed");
	assert_string_equal(p->mappings[0].filename, "/lib/libc.so.6");
	m.filename = "/lib/libc.so.6";
	m.has_functions = true;
	b = profile_add_mapping(p, &m);
	assert_int_equal(b, a);
	/* seen again knowing more: the flags accumulate */
	assert_true(p->mappings[0].has_functions);
	m.offset = 0x1000;
	assert_int_equal(profile_add_mapping(p, &m), 1);
	m.build_id = NULL;
	assert_int_equal(profile_add_mapping(p, &m), 2);
	assert_string_equal(p->mappings[2].build_id, "");
}

static void test_location_lines(void **state)
{
	struct profile *p = *state;
	uint32_t inner = profile_add_function(p, "inner", "inner", "x.c", 1);
	uint32_t outer = profile_add_function(p, "outer", "outer", "x.c", 9);
	struct profile_mapping m = { 0x400000, 0x500000, 0, "/bin/x", "", true, true, true, true };
	uint32_t map = profile_add_mapping(p, &m);
	struct profile_line lines[2] = { { inner, 3 }, { outer, 12 } };
	uint32_t a = profile_add_location(p, 0x401000, map, lines, 2, false), b, c;

	assert_int_equal(a, 0);
	assert_int_equal(p->locations[a].nlines, 2);
	assert_int_equal(p->lines[p->locations[a].first_line].function, inner);
	assert_int_equal(p->lines[p->locations[a].first_line + 1].line, 12);
	b = profile_add_location(p, 0x401000, map, lines, 2, false);
	assert_int_equal(b, a);
	assert_int_equal(p->nlines, 2);
	/* same address, other symbolization (a JIT reusing code): a new location */
	c = profile_add_location(p, 0x401000, map, lines, 1, false);
	assert_int_equal(c, 1);
	assert_int_equal(profile_add_location(p, 0x401000, map, lines, 2, true), 2);
	assert_int_equal(profile_add_location(p, 0x401000, PROFILE_NONE, NULL, 0, false), 3);
	assert_int_equal(p->locations[3].mapping, PROFILE_NONE);
	assert_int_equal(p->locations[3].nlines, 0);
	assert_int_equal(profile_add_location(p, 0x401000, PROFILE_NONE, NULL, 0, false), 3);

	/* references that do not exist are refused */
	errno = 0;
	assert_int_equal(profile_add_location(p, 1, 7, NULL, 0, false), PROFILE_NONE);
	assert_int_equal(errno, EINVAL);
	lines[0].function = 99;
	assert_int_equal(profile_add_location(p, 1, map, lines, 2, false), PROFILE_NONE);
	assert_int_equal(p->nlocations, 4);
}

static void test_threads_and_labels(void **state)
{
	struct profile *p = *state;
	char buf[64], tiny[6];
	uint32_t a = profile_add_thread(p, 10, 11, "worker", "app");
	uint32_t b = profile_add_thread(p, 10, 0, "pool", "app");

	assert_int_equal(profile_add_thread(p, 10, 11, "worker", "app"), a);
	assert_int_not_equal(profile_add_thread(p, 10, 11, "renamed", "app"), a);
	assert_string_equal(profile_thread_label(p, a, buf, sizeof buf), "worker-11");
	assert_string_equal(profile_thread_label(p, b, buf, sizeof buf), "pool");
	assert_string_equal(profile_thread_label(p, a, tiny, sizeof tiny), "worke");
	assert_string_equal(profile_thread_label(p, 77, buf, sizeof buf), "[thread 77]");
	/* the label is raw: escaping is the writers' job */
	b = profile_add_thread(p, 10, 12, "a;b\n999 77", "app");
	assert_string_equal(profile_thread_label(p, b, buf, sizeof buf), "a;b\n999 77-12");
}

/* What profile_foreach_sample reported, flattened: per sample thread, flags,
 * count, cpu, nlocs, then the locations. */
struct collected {
	uint64_t *v;
	size_t n, cap;
	size_t samples;
	size_t stop_after;       /* non-zero: return 7 after this many */
};

static void collect_value(struct collected *c, uint64_t x)
{
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 64;
		c->v = realloc(c->v, c->cap * sizeof *c->v);
		assert_non_null(c->v);
	}
	c->v[c->n++] = x;
}

static int collect_sample(void *ctx, const struct profile_sample *s)
{
	struct collected *c = ctx;
	collect_value(c, s->thread);
	collect_value(c, s->flags);
	collect_value(c, s->count);
	collect_value(c, s->nlocs);
	for (uint32_t i = 0; i < s->nlocs; i++)
		collect_value(c, s->locs[i]);
	c->samples++;
	return c->stop_after && c->samples == c->stop_after ? 7 : 0;
}

static void test_samples_in_order(void **state)
{
	struct profile *p = *state;
	uint32_t f = profile_add_function(p, "f", "f", "", 0);
	struct profile_line l = { f, 1 };
	uint32_t l0 = profile_add_location(p, 0x10, PROFILE_NONE, &l, 1, false);
	uint32_t l1 = profile_add_location(p, 0x20, PROFILE_NONE, &l, 1, false);
	uint32_t t0 = profile_add_thread(p, 1, 1, "main", "x");
	uint32_t t1 = profile_add_thread(p, 1, 2, "other", "x");
	uint32_t s01[] = { l0, l1 }, s10[] = { l1, l0 };
	struct collected c = { 0 };
	static const uint64_t expect[] = {
		0, 0, 3, 2, 0, 1,
		0, 0, 4, 2, 0, 1,         /* equal stacks are kept apart */
		0, 0, 1, 2, 1, 0,
		1, 0, 1, 2, 0, 1,
		0, 1, 1, 2, 0, 1,
		0, 0, 2, 0,
	};

	assert_int_equal(profile_add_sample(p, t0, s01, 2, 0, 3), 0);
	assert_int_equal(profile_add_sample(p, t0, s01, 2, 0, 4), 0);
	assert_int_equal(profile_add_sample(p, t0, s10, 2, 0, 1), 0);
	assert_int_equal(profile_add_sample(p, t1, s01, 2, 0, 1), 0);
	assert_int_equal(profile_add_sample(p, t0, s01, 2, PROFILE_SAMPLE_TRUNCATED, 1), 0);
	assert_int_equal(profile_add_sample(p, t0, NULL, 0, 0, 2), 0);
	assert_int_equal(p->nsamples, 6);
	assert_int_equal(p->total_samples, 12);
	assert_int_equal(profile_foreach_sample(p, collect_sample, &c), 0);
	assert_int_equal(c.n, sizeof expect / sizeof expect[0]);
	assert_memory_equal(c.v, expect, sizeof expect);

	/* fn's non-zero result stops the walk */
	c.n = c.samples = 0;
	c.stop_after = 2;
	assert_int_equal(profile_foreach_sample(p, collect_sample, &c), 7);
	assert_int_equal(c.samples, 2);
	free(c.v);

	errno = 0;
	assert_int_equal(profile_add_sample(p, 9, s01, 2, 0, 1), -1);
	assert_int_equal(errno, EINVAL);
	s01[1] = 1000;
	errno = 0;
	assert_int_equal(profile_add_sample(p, t0, s01, 2, 0, 1), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(p->total_samples, 12);
	assert_int_equal(p->nsamples, 6);
	/* the buffer is set before the first sample only */
	assert_int_equal(profile_set_sample_buffer(p, 4096), -1);
	assert_int_equal(errno, EBUSY);
}

/* A buffer far smaller than the samples: most go through the temp file,
 * some records are larger than the buffer itself, and every sample comes
 * back exactly, in order, on every walk. */
static void test_sample_store_spills(void **state)
{
	enum { N = 5000 };
	struct profile *p = *state;
	struct collected mine = { 0 }, got = { 0 };
	uint32_t f = profile_add_function(p, "f", "f", "", 0);
	struct profile_line l = { f, 1 };
	uint32_t t = profile_add_thread(p, 1, 1, "main", "x");
	uint32_t locs[300];
	uint64_t total = 0;

	assert_int_equal(profile_set_sample_buffer(p, 0), -1);
	assert_int_equal(profile_set_sample_buffer(p, 256), 0);
	for (uint32_t i = 0; i < 64; i++)
		assert_int_equal(profile_add_location(p, 0x100 + i, PROFILE_NONE, &l, 1, false), i);
	srand(7);
	for (uint32_t i = 0; i < N; i++) {
		struct profile_sample s = { .thread = t, .nlocs = (uint32_t)(rand() % 40),
					    .flags = i & 1, .count = 1 + (uint64_t)i % 5,
					    .locs = locs, .time_nanos = PROFILE_NO_TIME };
		if (i % 997 == 0)
			s.nlocs = 300;     /* 1232 bytes: more than the buffer */
		for (uint32_t k = 0; k < s.nlocs; k++)
			locs[k] = (uint32_t)rand() % 64;
		assert_int_equal(profile_add_sample(p, s.thread, s.locs, s.nlocs, s.flags, s.count),
				 0);
		collect_sample(&mine, &s);
		total += s.count;
	}
	assert_int_equal(p->total_samples, total);
	for (int pass = 0; pass < 2; pass++) {
		got.n = got.samples = 0;
		assert_int_equal(profile_foreach_sample(p, collect_sample, &got), 0);
		assert_int_equal(got.samples, N);
		assert_int_equal(got.n, mine.n);
		assert_memory_equal(got.v, mine.v, mine.n * sizeof *mine.v);
	}
	free(mine.v);
	free(got.v);
}

static void test_command(void **state)
{
	struct profile *p = *state;
	char cmd[32] = "./app -x";

	assert_int_equal(profile_set_command(p, cmd), 0);
	cmd[0] = 'X';
	assert_string_equal(p->command, "./app -x");
	assert_int_equal(profile_set_command(p, NULL), 0);
	assert_string_equal(p->command, "");
}

/* Many entries: every table rehashes several times and still finds all. */
/* --diff: the base's samples join the other profile flagged as base, their
 * counts scaled to its total exactly (the rounding carried from sample to
 * sample), its functions, mappings and threads interned there; the other's
 * total is unchanged. */
struct base_sum {
	uint64_t base, other;
	size_t nbase;
};

static int sum_base(void *ctx, const struct profile_sample *s)
{
	struct base_sum *b = ctx;
	if (s->flags & PROFILE_SAMPLE_BASE) {
		b->base += s->count;
		b->nbase++;
	} else {
		b->other += s->count;
	}
	return 0;
}

static void test_add_base(void **state)
{
	(void)state;
	struct profile *dst = profile_new(), *base = profile_new();
	assert_non_null(dst);
	assert_non_null(base);
	uint32_t f = profile_add_function(dst, "f", "f", "f.c", 1);
	struct profile_line line = { f, 10 };
	uint32_t l = profile_add_location(dst, 0x1000, PROFILE_NONE, &line, 1, false);
	uint32_t t = profile_add_thread(dst, 1, 1, "main", "prog");
	assert_int_equal(profile_add_sample(dst, t, &l, 1, 0, 1000), 0);

	uint32_t g = profile_add_function(base, "g", "g", "g.c", 5);
	uint32_t bf = profile_add_function(base, "f", "f", "f.c", 1);
	struct profile_line gl = { g, 7 }, fl = { bf, 10 };
	uint32_t bl[2] = { profile_add_location(base, 0x2000, PROFILE_NONE, &gl, 1, false),
			   profile_add_location(base, 0x1000, PROFILE_NONE, &fl, 1, false) };
	uint32_t bt = profile_add_thread(base, 2, 2, "worker", "prog");
	/* 3 x 1, then 1 x 4: 7 samples scaled to 1000 */
	for (int i = 0; i < 3; i++)
		assert_int_equal(profile_add_sample(base, bt, bl, 2, 0, 1), 0);
	assert_int_equal(profile_add_sample(base, bt, &bl[1], 1, 0, 4), 0);

	assert_int_equal(profile_add_base(dst, base), 0);
	assert_true(dst->diff);
	assert_int_equal(dst->total_samples, 1000);
	assert_int_equal(dst->base_total, 1000);
	struct base_sum sum = { 0 };
	assert_int_equal(profile_foreach_sample(dst, sum_base, &sum), 0);
	assert_int_equal(sum.base, 1000);
	assert_int_equal(sum.other, 1000);
	assert_int_equal(sum.nbase, 4);
	/* f's location is the same one; g and the worker were added */
	assert_int_equal(dst->nlocations, 2);
	assert_int_equal(dst->nfunctions, 2);
	assert_int_equal(dst->nthreads, 2);
	profile_free(dst);
	profile_free(base);
}

static void test_growth(void **state)
{
	struct profile *p = *state;
	enum { N = 20000 };
	char name[32];
	uint32_t t = profile_add_thread(p, 1, 1, "t", "t");

	for (uint32_t i = 0; i < N; i++) {
		snprintf(name, sizeof name, "fn%u", i);
		uint32_t f = profile_add_function(p, name, name, "f.c", i);
		assert_int_equal(f, i);
		struct profile_line l = { f, (int64_t)i };
		uint32_t loc = profile_add_location(p, 0x1000 + i, PROFILE_NONE, &l, 1, false);
		assert_int_equal(loc, i);
		uint32_t stack[2] = { loc, i ? loc - 1 : loc };
		assert_int_equal(profile_add_sample(p, t, stack, 2, 0, 1), 0);
	}
	for (uint32_t i = 0; i < N; i += 7) {
		snprintf(name, sizeof name, "fn%u", i);
		assert_int_equal(profile_add_function(p, name, name, "f.c", i), i);
		uint32_t stack[2] = { i, i ? i - 1 : i };
		assert_int_equal(profile_add_sample(p, t, stack, 2, 0, 1), 0);
	}
	assert_int_equal(p->nfunctions, N);
	assert_int_equal(p->nsamples, N + (N + 6) / 7);
	assert_int_equal(p->total_samples, N + (N + 6) / 7);
	assert_string_equal(p->functions[12345].name, "fn12345");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_new_is_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_function_interning, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mapping_interning, setup, teardown),
		cmocka_unit_test_setup_teardown(test_location_lines, setup, teardown),
		cmocka_unit_test_setup_teardown(test_threads_and_labels, setup, teardown),
		cmocka_unit_test_setup_teardown(test_samples_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sample_store_spills, setup, teardown),
		cmocka_unit_test_setup_teardown(test_command, setup, teardown),
		cmocka_unit_test_setup_teardown(test_growth, setup, teardown),
		cmocka_unit_test(test_add_base),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
