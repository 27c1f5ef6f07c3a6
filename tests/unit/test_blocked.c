/* Unit tests for blocked_parse: the three shapes the kernel prints in
 * /proc/TID/syscall (in a call: number, six arguments, sp, pc; blocked
 * outside one: -1, sp, pc; "running"), and text it never prints refused:
 * too few or too many fields, trailing garbage, a number out of range.
 * blocked_call_waits: the waits (with the return value of their timeout),
 * polls that never sleep, reads that wait on a pipe but not on a file, and
 * calls that compute. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

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
	/* a negative number past INT64_MIN's magnitude (here 2^63 in octal, a
	 * fuzz finding) is refused, not negated */
	assert_int_equal(blocked_parse("-000001000000000000000000000", &bs), BLOCKED_MALFORMED);
	assert_int_equal(blocked_parse("-9223372036854775808 0x1 0x2\n", &bs), BLOCKED_MALFORMED);
	assert_int_equal(blocked_parse("-18446744073709551615 0x1 0x2 0x3 0x4 0x5 0x6 0x7 0x8\n",
				       &bs), BLOCKED_MALFORMED);
}

static bool waits(long nr, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, int64_t *ret)
{
	struct user_regs_struct r;
	memset(&r, 0, sizeof r);
	r.rdi = a0;
	r.rsi = a1;
	r.rdx = a2;
	r.r10 = a3;
	return blocked_call_waits(getpid(), nr, &r, ret);
}

static void test_call_waits(void **state)
{
	(void)state;
	int64_t ret;
	/* futex: the wait operations time out with -ETIMEDOUT, a wake computes */
	assert_true(waits(SYS_futex, 0, 0 /* FUTEX_WAIT */, 0, 0, &ret));
	assert_int_equal(ret, -110);
	assert_true(waits(SYS_futex, 0, 128 + 9 /* WAIT_BITSET_PRIVATE */, 0, 0, &ret));
	assert_false(waits(SYS_futex, 0, 1 /* FUTEX_WAKE */, 0, 0, &ret));
	/* epoll_wait and poll: a zero timeout is a poll that never sleeps */
	assert_true(waits(SYS_epoll_wait, 3, 0, 1, 100, &ret));
	assert_int_equal(ret, 0);
	assert_false(waits(SYS_epoll_wait, 3, 0, 1, 0, &ret));
	assert_true(waits(SYS_poll, 0, 1, 100, 0, &ret));
	assert_false(waits(SYS_poll, 0, 1, 0, 0, &ret));
	assert_true(waits(SYS_nanosleep, 0, 0, 0, 0, &ret));
	assert_int_equal(ret, 0);
	assert_true(waits(SYS_rt_sigtimedwait, 0, 0, 0, 0, &ret));
	assert_int_equal(ret, -11);
	/* waits without a timeout to tell by */
	assert_true(waits(SYS_accept4, 0, 0, 0, 0, &ret));
	assert_true(ret == INT64_MIN);
	assert_true(waits(SYS_clone, 0, 0, 0, 0, &ret));
	/* read waits on a pipe, computes on a file */
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	assert_true(waits(SYS_read, (uint64_t)fds[0], 0, 0, 0, &ret));
	int f = open("/proc/self/stat", O_RDONLY);
	assert_true(f >= 0);
	assert_false(waits(SYS_read, (uint64_t)f, 0, 0, 0, &ret));
	assert_false(waits(SYS_read, (uint64_t)-1, 0, 0, 0, &ret));
	close(f);
	close(fds[0]);
	close(fds[1]);
	/* calls that compute */
	assert_false(waits(SYS_getpid, 0, 0, 0, 0, &ret));
	assert_false(waits(SYS_write, 1, 0, 0, 0, &ret));
	assert_false(waits(SYS_mmap, 0, 0, 0, 0, &ret));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_a_call),
		cmocka_unit_test(test_outside_a_call),
		cmocka_unit_test(test_running),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_call_waits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
