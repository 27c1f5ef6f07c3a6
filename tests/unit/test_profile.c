/* Unit tests for profile: interning of every table, sample merging, string
 * copies, thread labels, argument checks and growth past many rehashes. */
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

static void test_sample_merging(void **state)
{
	struct profile *p = *state;
	uint32_t f = profile_add_function(p, "f", "f", "", 0);
	struct profile_line l = { f, 1 };
	uint32_t l0 = profile_add_location(p, 0x10, PROFILE_NONE, &l, 1, false);
	uint32_t l1 = profile_add_location(p, 0x20, PROFILE_NONE, &l, 1, false);
	uint32_t t0 = profile_add_thread(p, 1, 1, "main", "x");
	uint32_t t1 = profile_add_thread(p, 1, 2, "other", "x");
	uint32_t s01[] = { l0, l1 }, s10[] = { l1, l0 };
	uint32_t a, b;

	a = profile_add_sample(p, t0, s01, 2, 0, 3, 300);
	assert_int_equal(a, 0);
	b = profile_add_sample(p, t0, s01, 2, 0, 4, 50);
	assert_int_equal(b, a);
	assert_int_equal(p->samples[a].count, 7);
	assert_int_equal(p->samples[a].cpu_ns, 350);
	assert_int_equal(profile_add_sample(p, t0, s10, 2, 0, 1, 0), 1);
	assert_int_equal(profile_add_sample(p, t1, s01, 2, 0, 1, 0), 2);
	assert_int_equal(profile_add_sample(p, t0, s01, 2, PROFILE_SAMPLE_TRUNCATED, 1, 0), 3);
	assert_int_equal(profile_add_sample(p, t0, s01, 1, 0, 1, 0), 4);
	assert_int_equal(profile_add_sample(p, t0, NULL, 0, 0, 2, 0), 5);
	assert_int_equal(profile_add_sample(p, t0, NULL, 0, 0, 2, 0), 5);
	assert_int_equal(p->samples[5].nlocs, 0);
	assert_int_equal(p->total_samples, 7 + 1 + 1 + 1 + 1 + 4);
	assert_int_equal(p->nsample_locs, 2 + 2 + 2 + 2 + 1);
	assert_int_equal(p->sample_locs[p->samples[1].first_loc], l1);

	errno = 0;
	assert_int_equal(profile_add_sample(p, 9, s01, 2, 0, 1, 0), PROFILE_NONE);
	assert_int_equal(errno, EINVAL);
	s01[1] = 1000;
	assert_int_equal(profile_add_sample(p, t0, s01, 2, 0, 1, 0), PROFILE_NONE);
	assert_int_equal(p->total_samples, 15);
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
		assert_int_equal(profile_add_sample(p, t, stack, 2, 0, 1, 0), i);
	}
	for (uint32_t i = 0; i < N; i += 7) {
		snprintf(name, sizeof name, "fn%u", i);
		assert_int_equal(profile_add_function(p, name, name, "f.c", i), i);
		uint32_t stack[2] = { i, i ? i - 1 : i };
		assert_int_equal(profile_add_sample(p, t, stack, 2, 0, 1, 0), i);
	}
	assert_int_equal(p->nfunctions, N);
	assert_int_equal(p->nsamples, N);
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
		cmocka_unit_test_setup_teardown(test_sample_merging, setup, teardown),
		cmocka_unit_test_setup_teardown(test_command, setup, teardown),
		cmocka_unit_test_setup_teardown(test_growth, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
