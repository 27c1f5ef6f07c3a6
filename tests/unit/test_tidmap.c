/* Unit tests for tidmap: put/get/replace; removal under heavy collisions
 * (tids that share a home slot, and runs that wrap around the table's end)
 * keeps every other entry findable, checked against a plain array model
 * through 200,000 random operations; reserve makes room up front so puts
 * and removes after it never move the table; tid 0 is refused; clear keeps
 * the room. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>

#include "tidmap.h"

static void test_put_get_replace(void **state)
{
	struct tidmap m = TIDMAP_INIT;
	uint32_t v = 0;
	(void)state;

	assert_false(tidmap_get(&m, 42, &v));
	assert_int_equal(tidmap_put(&m, 42, 7), 0);
	assert_true(tidmap_get(&m, 42, &v));
	assert_int_equal(v, 7);
	assert_int_equal(tidmap_put(&m, 42, 9), 0);
	assert_true(tidmap_get(&m, 42, &v));
	assert_int_equal(v, 9);
	assert_int_equal(m.count, 1);
	assert_false(tidmap_get(&m, 43, &v));
	tidmap_remove(&m, 43);            /* absent: no-op */
	assert_int_equal(m.count, 1);
	tidmap_remove(&m, 42);
	assert_false(tidmap_get(&m, 42, &v));
	assert_int_equal(m.count, 0);
	tidmap_free(&m);
}

static void test_tid_zero_refused(void **state)
{
	struct tidmap m = TIDMAP_INIT;
	uint32_t v;
	(void)state;

	errno = 0;
	assert_int_equal(tidmap_put(&m, 0, 1), -1);
	assert_int_equal(errno, EINVAL);
	assert_false(tidmap_get(&m, 0, &v));
	tidmap_free(&m);
}

/* tids that all hash to the same home slot of a 16-slot table: the hash is
 * tid * 2654435761 mod 2^k, so tids 16 apart share the low bits' home. */
static void test_remove_in_collision_runs(void **state)
{
	struct tidmap m = TIDMAP_INIT;
	uint32_t v;
	(void)state;

	assert_int_equal(tidmap_reserve(&m, 8), 0);
	assert_int_equal(m.cap, 16);
	pid_t tids[8];
	for (int i = 0; i < 8; i++) {
		tids[i] = 13 + 16 * i;   /* home slot 13: the run wraps past the end */
		assert_int_equal(tidmap_put(&m, tids[i], (uint32_t)i), 0);
	}
	assert_int_equal(m.cap, 16);
	/* remove from the middle, the start and the end of the run */
	int order[8] = { 3, 0, 7, 5, 1, 6, 2, 4 };
	for (int k = 0; k < 8; k++) {
		tidmap_remove(&m, tids[order[k]]);
		for (int j = 0; j < 8; j++) {
			bool gone = false;
			for (int q = 0; q <= k; q++)
				gone |= order[q] == j;
			assert_int_equal(tidmap_get(&m, tids[j], &v), !gone);
			if (!gone)
				assert_int_equal(v, (uint32_t)j);
		}
	}
	assert_int_equal(m.count, 0);
	tidmap_free(&m);
}

static void test_random_against_model(void **state)
{
	enum { RANGE = 3000, OPS = 200000 };
	static uint32_t model[RANGE + 1];   /* 0: absent, else value + 1 */
	struct tidmap m = TIDMAP_INIT;
	uint64_t x = 88172645463325252ull;
	size_t count = 0;
	(void)state;

	for (int op = 0; op < OPS; op++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		pid_t tid = (pid_t)(1 + x % RANGE);
		uint32_t v;
		if ((x >> 32) % 3 == 0) {
			count -= model[tid] != 0;
			tidmap_remove(&m, tid);
			model[tid] = 0;
		} else {
			count += model[tid] == 0;
			assert_int_equal(tidmap_put(&m, tid, (uint32_t)(x >> 40)), 0);
			model[tid] = (uint32_t)(x >> 40) + 1;
		}
		assert_int_equal(m.count, count);
		assert_true(m.count <= m.cap / 2);
		if (op % 1000 == 0)
			for (pid_t t = 1; t <= RANGE; t++) {
				assert_int_equal(tidmap_get(&m, t, &v), model[t] != 0);
				if (model[t])
					assert_int_equal(v, model[t] - 1);
			}
	}
	tidmap_free(&m);
}

static void test_reserve_then_no_move(void **state)
{
	struct tidmap m = TIDMAP_INIT;
	(void)state;

	assert_int_equal(tidmap_reserve(&m, 1000), 0);
	struct tidmap_slot *slots = m.slots;
	size_t cap = m.cap;
	assert_true(cap >= 2000);
	for (pid_t t = 1; t <= 1000; t++)
		assert_int_equal(tidmap_put(&m, t * 7919, (uint32_t)t), 0);
	for (pid_t t = 1; t <= 1000; t += 2)
		tidmap_remove(&m, t * 7919);
	for (pid_t t = 1; t <= 1000; t += 2)
		assert_int_equal(tidmap_put(&m, t * 7919, (uint32_t)t), 0);
	assert_ptr_equal(m.slots, slots);
	assert_int_equal(m.cap, cap);
	/* clear keeps the room */
	tidmap_clear(&m);
	uint32_t v;
	assert_int_equal(m.count, 0);
	assert_false(tidmap_get(&m, 7919, &v));
	assert_ptr_equal(m.slots, slots);
	tidmap_free(&m);
	assert_null(m.slots);
}

/* Rows by tid: two tids a power of two apart keep their own rows (a table
 * by tid modulo N made them take each other's), a forgotten thread's row
 * is made again, zeroed, for the next, and no more than MAX are made. */
static void test_tidrows(void **state)
{
	(void)state;
	struct tidrows t = TIDROWS_INIT(sizeof(uint64_t), 64);
	bool made;
	for (pid_t tid = 100; tid < 100 + 40 * 4096; tid += 4096) {
		uint64_t *row = tidrows_get(&t, tid, true, &made);
		assert_non_null(row);
		assert_true(made);
		assert_int_equal(*row, 0);
		*row = (uint64_t)tid;
	}
	for (pid_t tid = 100; tid < 100 + 40 * 4096; tid += 4096) {
		uint64_t *row = tidrows_get(&t, tid, false, &made);
		assert_non_null(row);
		assert_false(made);
		assert_int_equal(*row, (uint64_t)tid);
	}
	assert_int_equal(tidrows_count(&t), 40);
	assert_null(tidrows_get(&t, 7, false, &made));
	tidrows_forget(&t, 100);
	assert_null(tidrows_get(&t, 100, false, &made));
	uint64_t *again = tidrows_get(&t, 5, true, &made);
	assert_non_null(again);
	assert_int_equal(*again, 0);
	for (pid_t tid = 1; tid <= 24; tid++)
		(void)tidrows_get(&t, 1000000 + tid, true, &made);
	assert_int_equal(tidrows_count(&t), 64);
	assert_null(tidrows_get(&t, 2000000, true, &made));
	assert_null(tidrows_get(&t, 0, true, &made));
	tidrows_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_get_replace),
		cmocka_unit_test(test_tid_zero_refused),
		cmocka_unit_test(test_remove_in_collision_runs),
		cmocka_unit_test(test_random_against_model),
		cmocka_unit_test(test_reserve_then_no_move),
		cmocka_unit_test(test_tidrows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
