/* Unit tests for syscalls: each row's number is the C library's for its
 * name (<sys/syscall.h>), numbers out of the table have none, and the
 * facts the samplers act on (waits, timeouts, restarts) are as the rows
 * say. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/syscall.h>
#include <cmocka.h>

#include "syscalls.h"

#define ROW(name) { SYS_##name, #name }
static const struct { long nr; const char *name; } known[] = {
	ROW(read), ROW(write), ROW(poll), ROW(pread64), ROW(pwrite64), ROW(readv), ROW(writev),
	ROW(select), ROW(sched_yield), ROW(pause), ROW(nanosleep), ROW(sendfile), ROW(connect),
	ROW(accept), ROW(sendto), ROW(recvfrom), ROW(sendmsg), ROW(recvmsg), ROW(clone),
	ROW(fork), ROW(vfork), ROW(wait4), ROW(semop), ROW(msgsnd), ROW(msgrcv), ROW(fcntl),
	ROW(flock), ROW(fsync), ROW(fdatasync), ROW(rt_sigtimedwait), ROW(rt_sigsuspend),
	ROW(futex), ROW(io_getevents), ROW(restart_syscall), ROW(semtimedop),
	ROW(clock_nanosleep), ROW(epoll_wait), ROW(mq_timedsend), ROW(mq_timedreceive),
	ROW(waitid), ROW(pselect6), ROW(ppoll), ROW(splice), ROW(tee), ROW(vmsplice),
	ROW(epoll_pwait), ROW(accept4), ROW(preadv), ROW(pwritev), ROW(recvmmsg), ROW(sendmmsg),
	ROW(preadv2), ROW(pwritev2), ROW(io_pgetevents), ROW(io_uring_enter), ROW(clone3),
	ROW(epoll_pwait2),
};

/* Every row is the C library's number of its name, and every number up to
 * 1024 with a row is one of these. */
static void test_numbers(void **state)
{
	(void)state;
	size_t rows = 0;
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
		const char *name = syscall_name(known[i].nr);
		assert_non_null(name);
		assert_string_equal(name, known[i].name);
	}
	for (long nr = 0; nr < 1024; nr++)
		rows += syscall_info(nr) != NULL;
	assert_int_equal(rows, sizeof known / sizeof known[0]);
	const long out[] = { -1, -4096, LONG_MIN, LONG_MAX, 442, 4095, SYS_getpid, SYS_mmap };
	for (size_t i = 0; i < sizeof out / sizeof out[0]; i++)
		assert_null(syscall_info(out[i]));
}

static void test_facts(void **state)
{
	(void)state;
	/* waits and what their timeouts return */
	assert_int_equal(syscall_info(SYS_futex)->wait, SYSCALL_WAITS_FUTEX);
	assert_true(syscall_timeout_ret(syscall_info(SYS_futex)->timeout) == -ETIMEDOUT);
	assert_true(syscall_timeout_ret(syscall_info(SYS_rt_sigtimedwait)->timeout) == -EAGAIN);
	assert_true(syscall_timeout_ret(syscall_info(SYS_epoll_wait)->timeout) == 0);
	assert_true(syscall_timeout_ret(syscall_info(SYS_accept)->timeout) == INT64_MIN);
	assert_int_equal(syscall_info(SYS_epoll_wait)->wait, SYSCALL_WAITS_IF_R10);
	assert_int_equal(syscall_info(SYS_poll)->wait, SYSCALL_WAITS_IF_RDX);
	assert_int_equal(syscall_info(SYS_read)->wait, SYSCALL_WAITS_ON_FD);
	assert_int_equal(syscall_info(SYS_write)->wait, SYSCALL_RUNS);
	assert_int_equal(syscall_info(SYS_fdatasync)->wait, SYSCALL_RUNS);
	assert_int_equal(syscall_info(SYS_clone3)->wait, SYSCALL_WAITS);
	/* restarts: the transfers and waits that did nothing; not the sleeps
	 * (the kernel restarts them itself) nor futex */
	assert_true(syscall_info(SYS_read)->restartable);
	assert_true(syscall_info(SYS_connect)->restartable);
	assert_true(syscall_info(SYS_io_uring_enter)->restartable);
	assert_false(syscall_info(SYS_nanosleep)->restartable);
	assert_false(syscall_info(SYS_futex)->restartable);
	assert_false(syscall_info(SYS_poll)->restartable);
	/* futex's wait operations, with or without the private and clock flags */
	assert_true(syscall_futex_op_waits(0));
	assert_true(syscall_futex_op_waits(128 | 9));
	assert_true(syscall_futex_op_waits(256 | 128 | 13));
	assert_false(syscall_futex_op_waits(1));
	assert_false(syscall_futex_op_waits(128 | 5));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_facts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
