/* Unit tests for blocked_parse: the three shapes the kernel prints in
 * /proc/TID/syscall (in a call: number, six arguments, sp, pc; blocked
 * outside one: -1, sp, pc; "running"), and text it never prints refused:
 * too few or too many fields, trailing garbage, a number out of range. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "blocked.h"

static void test_in_a_call(void **state)
{
	struct blocked_syscall bs;
	(void)state;
	assert_int_equal(blocked_parse("232 0x5 0x7ffd1c2b3a40 0x1 0xc8 0x0 0x0 "
				       "0x7f72f1ffed08 0x7f72f2902f36\n", &bs),
			 BLOCKED_IN_KERNEL);
	assert_int_equal(bs.nr, 232);
	assert_int_equal(bs.args[0], 5);
	assert_int_equal(bs.args[1], 0x7ffd1c2b3a40ULL);
	assert_int_equal(bs.args[3], 200);
	assert_int_equal(bs.sp, 0x7f72f1ffed08ULL);
	assert_int_equal(bs.pc, 0x7f72f2902f36ULL);
	/* read(0, ...) is call number 0 */
	assert_int_equal(blocked_parse("0 0x3 0x7ffc00 0x10 0x0 0x0 0x0 0x7ffc10 0x401000\n", &bs),
			 BLOCKED_IN_KERNEL);
	assert_int_equal(bs.nr, 0);
	assert_int_equal(bs.pc, 0x401000);
}

static void test_outside_a_call(void **state)
{
	struct blocked_syscall bs;
	(void)state;
	assert_int_equal(blocked_parse("-1 0x7ffd1c2b3a40 0x55d0c0de1234\n", &bs), BLOCKED_IN_KERNEL);
	assert_int_equal(bs.nr, -1);
	assert_int_equal(bs.sp, 0x7ffd1c2b3a40ULL);
	assert_int_equal(bs.pc, 0x55d0c0de1234ULL);
	assert_int_equal(bs.args[0], 0);
}

static void test_running(void **state)
{
	struct blocked_syscall bs;
	(void)state;
	assert_int_equal(blocked_parse("running\n", &bs), BLOCKED_RUNNING);
}

static void test_refused(void **state)
{
	struct blocked_syscall bs;
	(void)state;
	assert_int_equal(blocked_parse("", &bs), BLOCKED_MALFORMED);
	assert_int_equal(blocked_parse("232 0x5 0x1\n", &bs), BLOCKED_MALFORMED);
	assert_int_equal(blocked_parse("-1 0x1\n", &bs), BLOCKED_MALFORMED);
	assert_int_equal(blocked_parse("-1 0x1 0x2 0x3\n", &bs), BLOCKED_MALFORMED);
	assert_int_equal(blocked_parse("-2 0x1 0x2\n", &bs), BLOCKED_MALFORMED);
	assert_int_equal(blocked_parse("5000 0x1 0x2 0x3 0x4 0x5 0x6 0x7 0x8\n", &bs),
			 BLOCKED_MALFORMED);
	assert_int_equal(blocked_parse("1 0x1 0x2 0x3 0x4 0x5 0x6 0x7 0x8 0x9\n", &bs),
			 BLOCKED_MALFORMED);
	assert_int_equal(blocked_parse("1 0x1 0x2 0x3 0x4 0x5 0x6 0x7 0x8 junk\n", &bs),
			 BLOCKED_MALFORMED);
	assert_int_equal(blocked_parse("1 0x1 0x2 0x3 0x4 0x5 0x6 0x7 0x8zz\n", &bs),
			 BLOCKED_MALFORMED);
	assert_int_equal(blocked_parse("99999999999999999999999 0x1 0x2 0x3 0x4 0x5 0x6 0x7 0x8\n",
				       &bs), BLOCKED_MALFORMED);
	assert_int_equal(blocked_parse("- 0x1 0x2\n", &bs), BLOCKED_MALFORMED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_a_call),
		cmocka_unit_test(test_outside_a_call),
		cmocka_unit_test(test_running),
		cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
