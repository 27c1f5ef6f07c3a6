/* Unit tests for array_grow: nothing done while WANT fits, the doubling
 * sequence from FIRST, a jump past several doublings at once, contents kept
 * across growth, and a size that would overflow refused with ENOMEM and the
 * array and its capacity left as they were; array_grow_each: parallel
 * arrays of different sizes grown to one length, contents kept, new
 * elements zeroed, an overflow refused. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>

#include "array.h"

struct pair {
	uint64_t a, b;
};

static void test_doubling_keeps_contents(void **state)
{
	struct pair *items = NULL;
	size_t n = 0, cap = 0;
	size_t caps_seen[8], ncaps = 0;
	(void)state;

	for (uint64_t i = 0; i < 100; i++) {
		size_t before = cap;
		assert_int_equal(array_grow(&items, &cap, n + 1, sizeof *items, 4), 0);
		if (cap != before) {
			assert_true(ncaps < 8);
			caps_seen[ncaps++] = cap;
		}
		items[n++] = (struct pair){ i, i * i };
	}
	/* 4, 8, 16, 32, 64, 128 */
	assert_int_equal(ncaps, 6);
	for (size_t k = 0; k < ncaps; k++)
		assert_int_equal(caps_seen[k], (size_t)4 << k);
	for (uint64_t i = 0; i < 100; i++) {
		assert_int_equal(items[i].a, i);
		assert_int_equal(items[i].b, i * i);
	}
	free(items);
}

static void test_want_fits_or_jumps(void **state)
{
	char **names = NULL;
	size_t cap = 0;
	static char hello[] = "hello";
	(void)state;

	assert_int_equal(array_grow(&names, &cap, 1, sizeof *names, 1), 0);
	assert_int_equal(cap, 1);
	names[0] = hello;
	char **kept = names;
	/* WANT fits: nothing moves */
	assert_int_equal(array_grow(&names, &cap, 1, sizeof *names, 1), 0);
	assert_int_equal(cap, 1);
	assert_ptr_equal(names, kept);
	/* several doublings at once: 1 -> 16 for 9 */
	assert_int_equal(array_grow(&names, &cap, 9, sizeof *names, 1), 0);
	assert_int_equal(cap, 16);
	assert_ptr_equal(names[0], hello);
	free(names);
}

static void test_overflow_refused(void **state)
{
	uint64_t *items = NULL;
	size_t cap = 0;
	(void)state;

	assert_int_equal(array_grow(&items, &cap, 1, sizeof *items, 2), 0);
	uint64_t *before = items;
	items[0] = 7;

	/* doubling would need more bytes than a size_t holds */
	size_t huge = SIZE_MAX / sizeof *items / 2 + 1;
	cap = huge;
	errno = 0;
	assert_int_equal(array_grow(&items, &cap, huge + 1, sizeof *items, 2), -1);
	assert_int_equal(errno, ENOMEM);
	assert_int_equal(cap, huge);
	assert_ptr_equal(items, before);

	/* the capacity itself would wrap */
	cap = SIZE_MAX / 2 + 1;
	errno = 0;
	assert_int_equal(array_grow(&items, &cap, SIZE_MAX, 1, 2), -1);
	assert_int_equal(errno, ENOMEM);
	assert_ptr_equal(items, before);
	assert_int_equal(items[0], 7);
	free(items);
}

static void test_grow_each(void **state)
{
	(void)state;
	uint32_t *small = NULL;
	struct pair *big = NULL;
	size_t cap = 0;
	void *const arrays[] = { &small, &big };
	const size_t sizes[] = { sizeof *small, sizeof *big };
	assert_int_equal(array_grow_each(arrays, sizes, 2, &cap, 3, 4), 0);
	assert_int_equal(cap, 4);
	for (size_t i = 0; i < cap; i++) {
		assert_int_equal(small[i], 0);
		assert_int_equal(big[i].a | big[i].b, 0);
		small[i] = (uint32_t)i + 1;
		big[i] = (struct pair){ i, 2 * i };
	}
	assert_int_equal(array_grow_each(arrays, sizes, 2, &cap, 4, 4), 0);   /* fits */
	assert_int_equal(cap, 4);
	assert_int_equal(array_grow_each(arrays, sizes, 2, &cap, 13, 4), 0);
	assert_int_equal(cap, 16);
	for (size_t i = 0; i < cap; i++) {
		assert_int_equal(small[i], i < 4 ? i + 1 : 0);
		assert_int_equal(big[i].b, i < 4 ? 2 * i : 0);
	}
	errno = 0;
	assert_int_equal(array_grow_each(arrays, sizes, 2, &cap, SIZE_MAX / 8, 4), -1);
	assert_int_equal(errno, ENOMEM);
	assert_int_equal(cap, 16);
	assert_int_equal(small[3], 4);
	free(small);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_doubling_keeps_contents),
		cmocka_unit_test(test_want_fits_or_jumps),
		cmocka_unit_test(test_overflow_refused),
		cmocka_unit_test(test_grow_each),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
