/* Unit tests for intern (indexes in first-seen order, one copy per string,
 * copies that never move as the table grows, a length that cuts the
 * string, hash_bytes' FNV-1a values) and addrmap ((pid, address) pairs kept
 * apart, values found again across growth, a slot left empty). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "addrmap.h"
#include "intern.h"

static void test_hash(void **state)
{
	(void)state;
	/* the published FNV-1a 64-bit test vectors */
	assert_true(hash_bytes("", 0) == UINT64_C(0xcbf29ce484222325));
	assert_true(hash_bytes("a", 1) == UINT64_C(0xaf63dc4c8601ec8c));
	assert_true(hash_bytes("foobar", 6) == UINT64_C(0x85944171f73967e8));
}

static void test_intern(void **state)
{
	(void)state;
	struct intern t = { 0 };
	assert_int_equal(intern_index(&t, "alpha", 5), 0);
	assert_int_equal(intern_index(&t, "beta", 4), 1);
	assert_int_equal(intern_index(&t, "alpha", 5), 0);
	/* a length shorter than the string: its prefix */
	assert_int_equal(intern_index(&t, "alphabet", 5), 0);
	assert_int_equal(intern_index(&t, "alphabet", 8), 2);
	assert_int_equal(intern_index(&t, "", 0), 3);
	const char *alpha = t.strs[0];
	assert_string_equal(alpha, "alpha");
	/* many more: indexes stay dense, copies stay where they are */
	char buf[32];
	for (int i = 0; i < 100000; i++) {
		snprintf(buf, sizeof buf, "name-%d", i);
		assert_int_equal(intern_index(&t, buf, strlen(buf)), 4 + i);
	}
	assert_int_equal(t.n, 100004);
	assert_ptr_equal(t.strs[0], alpha);
	assert_string_equal(t.strs[4 + 777], "name-777");
	assert_ptr_equal(intern_string(&t, "name-777", 8), t.strs[4 + 777]);
	/* a string longer than an arena chunk */
	static char big[200000];
	memset(big, 'x', sizeof big - 1);
	const char *b = intern_string(&t, big, sizeof big - 1);
	assert_non_null(b);
	assert_int_equal(strlen(b), sizeof big - 1);
	assert_ptr_equal(intern_string(&t, big, sizeof big - 1), b);
	intern_free(&t);
	assert_int_equal(t.n, 0);
	assert_null(t.strs);
}

static void test_addrmap(void **state)
{
	(void)state;
	struct addrmap m = { 0 };
	uint32_t *v = addrmap_slot(&m, 1, 0x1000);
	assert_int_equal(*v, ADDRMAP_EMPTY);
	*v = 7;
	assert_int_equal(*addrmap_slot(&m, 1, 0x1000), 7);
	/* the same address in another process is another key */
	v = addrmap_slot(&m, 2, 0x1000);
	assert_int_equal(*v, ADDRMAP_EMPTY);
	*v = 8;
	/* a slot left empty is handed out again */
	assert_int_equal(*addrmap_slot(&m, 3, 0x2000), ADDRMAP_EMPTY);
	assert_int_equal(*addrmap_slot(&m, 3, 0x2000), ADDRMAP_EMPTY);
	for (uint32_t i = 0; i < 200000; i++)
		*addrmap_slot(&m, (pid_t)(i % 7), 0x400000 + (uint64_t)i * 16) = i;
	for (uint32_t i = 0; i < 200000; i++)
		assert_int_equal(*addrmap_slot(&m, (pid_t)(i % 7), 0x400000 + (uint64_t)i * 16), i);
	assert_int_equal(*addrmap_slot(&m, 1, 0x1000), 7);
	assert_int_equal(*addrmap_slot(&m, 2, 0x1000), 8);
	addrmap_free(&m);
	assert_null(m.slots);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hash),
		cmocka_unit_test(test_intern),
		cmocka_unit_test(test_addrmap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
