/* Unit tests for procfs_parse_stat: a real /proc/self/stat line (state R,
 * a CPU, PF_ flags); a comm holding ") (", spaces and a newline, taken
 * from the first '(' to the last ')'; a comm longer than the field, cut;
 * lines cut short (no cpu: -1, no state: refused); non-numeric and
 * negative fields; a cpu field that overflows. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_hostile_comm),
		cmocka_unit_test(test_short_and_bad),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
