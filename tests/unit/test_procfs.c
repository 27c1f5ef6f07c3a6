/* Unit tests for procfs_parse_stat: a real /proc/self/stat line (state R,
 * a CPU, PF_ flags); a comm holding ") (", spaces and a newline, taken
 * from the first '(' to the last ')'; a comm longer than the field, cut;
 * lines cut short (no cpu: -1, no state: refused); non-numeric and
 * negative fields; a cpu field that overflows. procfs_parse_schedstat
 * (overflow, short and negative lines), procfs_status_field/long, and the
 * readers on this process's own files (status, comm, cmdline, task and
 * process directories, a pipe that waits). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>

#include "procfs.h"

/* 52 fields as Linux 6.1 writes them, comm given, cpu 1, flags 4194560 */
static void stat_line(char *buf, size_t size, const char *comm, const char *cpu)
{
	snprintf(buf, size,
		 "1234 (%s) S 1 1234 1234 0 -1 4194560 100 0 0 0 5 6 0 0 20 0 1 0 777 "
		 "2000000 300 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 %s 0 0 0 0 0 "
		 "0 0 0 0 0 0 0 0\n", comm, cpu);
}

static void test_self(void **state)
{
	(void)state;
	char buf[1024];
	int fd = open("/proc/self/stat", O_RDONLY);
	assert_true(fd >= 0);
	assert_true(procfs_pread_text(fd, buf, sizeof buf) > 0);
	close(fd);
	struct procfs_stat st;
	assert_true(procfs_parse_stat(buf, &st));
	assert_int_equal(st.state, 'R');
	assert_true(st.cpu >= 0);
	assert_true(st.cpu < 4096);
	assert_int_equal(st.flags & 0x00200000, 0);   /* PF_KTHREAD: not us */
	assert_int_equal(st.ppid, getppid());
	assert_true(st.comm[0] != '\0');
}

static void test_fields(void **state)
{
	(void)state;
	char buf[1024];
	struct procfs_stat st;
	stat_line(buf, sizeof buf, "worker", "1");
	assert_true(procfs_parse_stat(buf, &st));
	assert_string_equal(st.comm, "worker");
	assert_int_equal(st.state, 'S');
	assert_int_equal(st.cpu, 1);
	assert_int_equal(st.flags, 4194560);
	assert_int_equal(st.ppid, 1);
	assert_int_equal(st.utime, 5);
	assert_int_equal(st.stime, 6);
	/* a line cut before them: 0, as flags and ppid past its end */
	assert_true(procfs_parse_stat("12 (x) R 1 2 3 4 5 6 7 8 9 10", &st));
	assert_int_equal(st.utime, 0);
	assert_int_equal(st.stime, 0);
	assert_true(procfs_parse_stat("12 (x) R 1 2 3 4 5 6 7 8 9 10 42 -3", &st));
	assert_int_equal(st.utime, 42);
	assert_int_equal(st.stime, 0);                 /* (not a count) */
}

static void test_hostile_comm(void **state)
{
	(void)state;
	char buf[1024];
	struct procfs_stat st;
	stat_line(buf, sizeof buf, "a) R 9 (b", "3");
	assert_true(procfs_parse_stat(buf, &st));
	assert_string_equal(st.comm, "a) R 9 (b");
	assert_int_equal(st.state, 'S');
	assert_int_equal(st.cpu, 3);
	stat_line(buf, sizeof buf, "x\ny) Z 1", "0");
	assert_true(procfs_parse_stat(buf, &st));
	assert_string_equal(st.comm, "x\ny) Z 1");
	assert_int_equal(st.state, 'S');
	assert_int_equal(st.cpu, 0);
	char longname[200];
	memset(longname, 'n', sizeof longname - 1);
	longname[sizeof longname - 1] = '\0';
	stat_line(buf, sizeof buf, longname, "7");
	assert_true(procfs_parse_stat(buf, &st));
	assert_int_equal(strlen(st.comm), PROCFS_COMM_SIZE - 1);
	assert_int_equal(st.cpu, 7);
}

static void test_short_and_bad(void **state)
{
	(void)state;
	struct procfs_stat st;
	assert_false(procfs_parse_stat("", &st));
	assert_false(procfs_parse_stat("12 (x)", &st));
	assert_false(procfs_parse_stat("12 (x) ", &st));
	assert_false(procfs_parse_stat("12 )x( S", &st));
	assert_false(procfs_parse_stat("12 (x)S 1", &st));
	assert_true(procfs_parse_stat("12 (x) R", &st));
	assert_int_equal(st.state, 'R');
	assert_int_equal(st.cpu, -1);
	assert_int_equal(st.flags, 0);
	assert_true(procfs_parse_stat("12 (x) R 1 2 3 4 5 64", &st));
	assert_int_equal(st.flags, 64);
	assert_int_equal(st.cpu, -1);

	char buf[1024];
	stat_line(buf, sizeof buf, "w", "-1");
	assert_true(procfs_parse_stat(buf, &st));
	assert_int_equal(st.cpu, -1);
	stat_line(buf, sizeof buf, "w", "99999999999999999999999");
	assert_true(procfs_parse_stat(buf, &st));
	assert_int_equal(st.cpu, -1);
	stat_line(buf, sizeof buf, "w", "4294967296");
	assert_true(procfs_parse_stat(buf, &st));
	assert_int_equal(st.cpu, -1);
	stat_line(buf, sizeof buf, "w", "1x");
	assert_true(procfs_parse_stat(buf, &st));
	assert_int_equal(st.cpu, -1);
	/* a word in an earlier field is skipped, the count goes on */
	assert_true(procfs_parse_stat("1 (w) S a b c d e 77", &st));
	assert_int_equal(st.flags, 77);
	/* two spaces: the line is not what Linux writes, fields stop there */
	assert_true(procfs_parse_stat("1 (w) S 1  2 3 4 5 77", &st));
	assert_int_equal(st.flags, 0);
}

static void test_schedstat(void **state)
{
	(void)state;
	struct procfs_schedstat ss;
	assert_true(procfs_parse_schedstat("123 456 7\n", &ss));
	assert_true(ss.runtime_ns == 123 && ss.run_delay_ns == 456 && ss.arrivals == 7);
	assert_true(procfs_parse_schedstat("18446744073709551615 0 0", &ss));
	assert_true(ss.runtime_ns == UINT64_MAX);
	assert_false(procfs_parse_schedstat("18446744073709551616 0 0", &ss));
	assert_false(procfs_parse_schedstat("1 2", &ss));
	assert_false(procfs_parse_schedstat("1 -2 3", &ss));
	assert_false(procfs_parse_schedstat("", &ss));
	assert_false(procfs_parse_schedstat("a b c", &ss));
	/* this very thread's, read through a kept-open descriptor */
	int fd = procfs_open_task_file(-1, getpid(), getpid(), "schedstat");
	assert_true(fd >= 0);
	assert_true(procfs_read_schedstat(fd, &ss));
	assert_true(ss.runtime_ns > 0 && ss.arrivals > 0);
	close(fd);
}

static void test_status(void **state)
{
	(void)state;
	const char *text = "Name:\tx\nState:\tS (sleeping)\nTracerPid:\t42\nUid: 1\nBad:\tz\n";
	assert_string_equal(procfs_status_field(text, "State"), "S (sleeping)\nTracerPid:\t42\nUid: 1\nBad:\tz\n");
	assert_null(procfs_status_field(text, "Tracer"));
	assert_null(procfs_status_field(text, "ate"));
	assert_int_equal(procfs_status_long(text, "TracerPid", -1), 42);
	assert_int_equal(procfs_status_long(text, "Bad", -1), -1);
	assert_int_equal(procfs_status_long(text, "Gone", -7), -7);
	assert_int_equal(procfs_status_long("", "Uid", 3), 3);
}

/* Which pending signals would reach a thread that is not traced: the
 * kernel drops SIGCHLD, SIGURG, SIGWINCH and SIGCONT at SIG_DFL, and any
 * ignored one, as they come; the others (caught, or terminating, stopping,
 * dumping at SIG_DFL) reach it. */
static void test_signals_that_reach(void **state)
{
	(void)state;
	const uint64_t chld = 1ull << (17 - 1), term = 1ull << (15 - 1), usr1 = 1ull << (10 - 1);
	const uint64_t urg = 1ull << (23 - 1), winch = 1ull << (28 - 1), cont = 1ull << (18 - 1);
	const uint64_t rt = 1ull << (34 - 1);
	/* nothing caught or ignored */
	const char *dfl = "SigPnd:\t0\nSigBlk:\t0\nSigIgn:\t0000000000000000\nSigCgt:\t0000000000000000\n";
	assert_int_equal(procfs_signals_that_reach(dfl, chld), 0);
	assert_int_equal(procfs_signals_that_reach(dfl, urg | winch | cont), 0);
	assert_int_equal(procfs_signals_that_reach(dfl, chld | term), term);
	assert_int_equal(procfs_signals_that_reach(dfl, rt), rt);
	/* SIGCHLD caught (a shell, postgres's postmaster): it reaches */
	const char *caught = "SigIgn:\t0000000000000000\nSigCgt:\t0000000000010000\n";
	assert_int_equal(procfs_signals_that_reach(caught, chld), chld);
	/* SIGUSR1 and SIGTERM ignored */
	const char *ign = "SigIgn:\t0000000000004200\nSigCgt:\t0000000000000000\n";
	assert_int_equal(procfs_signals_that_reach(ign, usr1 | term | rt), rt);
	/* unknown: all of them */
	assert_int_equal(procfs_signals_that_reach("Name:\tx\n", chld | urg), chld | urg);
}

static void test_files(void **state)
{
	(void)state;
	char buf[4096];
	/* our own status and comm */
	assert_true(procfs_read_file(getpid(), 0, "status", buf, sizeof buf) > 0);
	assert_int_equal(procfs_status_long(buf, "Pid", -1), getpid());
	assert_true(procfs_read_file(getpid(), getpid(), "status", buf, sizeof buf) > 0);
	assert_int_equal(procfs_status_long(buf, "Pid", -1), getpid());
	char comm[64];
	procfs_read_comm(getpid(), comm, sizeof comm);
	assert_string_equal(comm, "test_procfs");
	/* cmdline: arguments joined with spaces, cut to the buffer */
	size_t n = procfs_read_cmdline(getpid(), buf, sizeof buf);
	assert_true(n > 0 && strstr(buf, "test_procfs") != NULL && strlen(buf) == n);
	assert_int_equal(procfs_read_cmdline(getpid(), buf, 4), 3);
	assert_int_equal(strlen(buf), 3);
	/* a process that does not exist */
	assert_true(procfs_read_file(INT32_MAX, 0, "status", buf, sizeof buf) < 0);
	procfs_read_comm(INT32_MAX, comm, sizeof comm);
	assert_string_equal(comm, "");
	assert_int_equal(procfs_read_cmdline(INT32_MAX, buf, sizeof buf), 0);
	/* our threads, and we are among the processes */
	struct procfs_dir d;
	assert_true(procfs_dir_open(&d, getpid()));
	assert_int_equal(procfs_dir_next(&d), getpid());
	assert_int_equal(procfs_dir_next(&d), 0);
	procfs_dir_close(&d);
	bool found = false;
	assert_true(procfs_dir_open(&d, 0));
	for (pid_t p; (p = procfs_dir_next(&d)) > 0;)
		found |= p == getpid();
	procfs_dir_close(&d);
	assert_true(found);
	assert_false(procfs_dir_open(&d, INT32_MAX));
	assert_int_equal(procfs_dir_next(&d), 0);
	procfs_dir_close(&d);
	/* a pipe waits; a file does not */
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	assert_true(procfs_fd_waits(getpid(), fds[0]));
	close(fds[0]);
	close(fds[1]);
	int f = open("/proc/self/status", O_RDONLY);
	assert_false(procfs_fd_waits(getpid(), f));
	close(f);
	assert_false(procfs_fd_waits(getpid(), -1));
	/* an eventfd waits; a perf event's counter does not */
	int e = eventfd(0, 0);
	assert_true(e >= 0);
	assert_true(procfs_fd_waits(getpid(), e));
	close(e);
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .size = sizeof a,
				     .config = PERF_COUNT_SW_TASK_CLOCK };
	int pe = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (pe >= 0) {   /* (perf events may be refused here) */
		assert_false(procfs_fd_waits(getpid(), pe));
		close(pe);
	}
}

/* se.exec_start of /proc/.../sched: milliseconds with six decimals, as
 * nanoseconds; anything else refused */
static void test_exec_start(void **state)
{
	(void)state;
	uint64_t ns = 1;
	assert_true(procfs_parse_exec_start("head (29040, #threads: 1)\n-------\n"
					    "se.exec_start                                :      "
					    "37349505.151700\nse.vruntime : 1.000000\n", &ns));
	assert_true(ns == 37349505151700ull);
	assert_true(procfs_parse_exec_start("x\nse.exec_start : 0.000042\n", &ns));
	assert_true(ns == 42);
	ns = 7;
	/* not at a line's start, no colon, too few or too many decimals, no
	 * decimals, a sign, an overflow, absent */
	assert_false(procfs_parse_exec_start("x\nnot.se.exec_start : 1.000000\n", &ns));
	assert_false(procfs_parse_exec_start("x\nse.exec_start 1.000000\n", &ns));
	assert_false(procfs_parse_exec_start("x\nse.exec_start : 1.00000\n", &ns));
	assert_false(procfs_parse_exec_start("x\nse.exec_start : 1.0000000\n", &ns));
	assert_false(procfs_parse_exec_start("x\nse.exec_start : 1\n", &ns));
	assert_false(procfs_parse_exec_start("x\nse.exec_start : -1.000000\n", &ns));
	assert_false(procfs_parse_exec_start("x\nse.exec_start : 99999999999999999999.000000\n", &ns));
	assert_false(procfs_parse_exec_start("x\nse.exec_start : 18446744073709.551615\n", &ns));
	assert_false(procfs_parse_exec_start("se.exec_start : 1.000000\n", &ns));
	assert_false(procfs_parse_exec_start("", &ns));
	assert_true(ns == 7);
	/* our own, where the kernel has the file (CONFIG_SCHED_DEBUG) */
	int fd = open("/proc/thread-self/sched", O_RDONLY);
	if (fd >= 0) {
		assert_true(procfs_read_exec_start(fd, &ns));
		assert_true(ns > 0);
		close(fd);
	}
}

/* A children file's list: pids separated by spaces, a trailing space. */
static void test_list_has(void **state)
{
	(void)state;
	assert_true(procfs_list_has("123 456 ", 456));
	assert_true(procfs_list_has("123 456 ", 123));
	assert_true(procfs_list_has("7", 7));
	assert_false(procfs_list_has("123 456 ", 45));
	assert_false(procfs_list_has("123 456 ", 1234));
	assert_false(procfs_list_has("", 1));
	assert_false(procfs_list_has(" \n", 0));
	/* an overlong number is no pid, and does not wrap into one */
	assert_false(procfs_list_has("99999999999999999999 ", 0));
	assert_false(procfs_list_has("4294967297 ", 1));
	assert_true(procfs_list_has("4294967297 5 ", 5));
	/* text that is not a list stops the search */
	assert_false(procfs_list_has("12 x 34", 34));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_hostile_comm),
		cmocka_unit_test(test_short_and_bad),
		cmocka_unit_test(test_schedstat),
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_signals_that_reach),
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_exec_start),
		cmocka_unit_test(test_list_has),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
