/* Unit tests for progress: a phase that ends within the second draws
 * nothing; one that takes longer draws its line (elapsed time, the phase,
 * how far, what it reads, its end kept and escaped), redraws it, and erases
 * it at the end; a disabled one is NULL and every call takes it. stderr is
 * sent to a file for each test. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"

/* stderr into a scratch file: its descriptor (the old stderr in *SAVED). */
static int capture(int *saved)
{
	char path[] = "/tmp/test_progress.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	fflush(stderr);
	*saved = dup(STDERR_FILENO);
	assert_true(dup2(fd, STDERR_FILENO) >= 0);
	return fd;
}

/* What was written since capture (NUL-terminated, malloc'd); stderr back. */
static char *release(int fd, int saved)
{
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	off_t len = lseek(fd, 0, SEEK_END);
	char *buf = calloc(1, (size_t)len + 1);
	assert_non_null(buf);
	assert_int_equal(pread(fd, buf, (size_t)len, 0), len);
	close(fd);
	return buf;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0)
		;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* How many times NEEDLE is in the file FD (written so far). */
static int count_in(int fd, const char *needle)
{
	char buf[65536];
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
	int c = 0;
	buf[n > 0 ? n : 0] = '\0';
	for (const char *q = buf; (q = strstr(q, needle)) != NULL; q++)
		c++;
	return c;
}

/* Wait until NEEDLE was drawn TIMES times in FD (at most 20 s, however busy
 * the host: drawn after a second, then every quarter of one). */
static void wait_drawn(int fd, const char *needle, int times)
{
	for (int i = 0; i < 200 && count_in(fd, needle) < times; i++)
		sleep_ms(100);
}

static void test_quick_phase_draws_nothing(void **state)
{
	(void)state;
	int saved, fd = capture(&saved);
	double t0 = now_s();
	struct progress *p = progress_start(true, "naming:");
	assert_non_null(p);
	progress_count(p, 10, 100);
	progress_reading(p, "/usr/lib/libc.so.6");
	sleep_ms(200);
	progress_end(p);
	double took = now_s() - t0;
	char *out = release(fd, saved);
	/* (a host that kept this thread from a CPU for most of a second may
	 * have made the phase long: then the line is right to be there) */
	if (took < 0.9)
		assert_string_equal(out, "");
	free(out);
}

static void test_slow_phase_draws_and_erases(void **state)
{
	(void)state;
	int saved, fd = capture(&saved);
	struct progress *p = progress_start(true, "naming the samples' addresses:");
	assert_non_null(p);
	progress_count(p, 1234, 5678);
	/* a path longer than what is shown, with a control character */
	progress_reading(p, "/very/long/directory/name/that/goes/on/and/on/usr/lib/debug/"
			    ".build-id/ab/cdef\x1b[31m.debug");
	wait_drawn(fd, "1234 of 5678", 2);
	progress_end(p);
	char *out = release(fd, saved);
	/* the first draw after a second at least */
	const char *first = strstr(out, "\r\033[K[");
	assert_non_null(first);
	assert_true(atof(first + 5) >= 1.0);   /* (past the escape and the bracket) */
	assert_non_null(strstr(out, "] naming the samples' addresses: 1234 of 5678 samples, reading ..."));
	assert_non_null(strstr(out, "cdef\\x1b[31m.debug"));
	assert_null(strstr(out, "\x1b[31m"));
	/* redrawn */
	assert_non_null(strstr(strstr(out, "1234 of 5678") + 1, "1234 of 5678"));
	/* erased at the end, nothing after */
	size_t len = strlen(out);
	assert_true(len >= 4 && strcmp(out + len - 4, "\r\033[K") == 0);
	free(out);
}

static void test_writing(void **state)
{
	(void)state;
	int saved, fd = capture(&saved);
	struct progress *p = progress_start(true, "writing the profile");
	assert_non_null(p);
	progress_doing(p, "to", "/tmp/out.folded");
	wait_drawn(fd, "/tmp/out.folded", 1);
	progress_end(p);
	char *out = release(fd, saved);
	assert_non_null(strstr(out, "] writing the profile to /tmp/out.folded"));
	free(out);
}

static void test_disabled(void **state)
{
	(void)state;
	int saved, fd = capture(&saved);
	struct progress *p = progress_start(false, "naming:");
	assert_null(p);
	progress_count(p, 1, 2);
	progress_reading(p, "x");
	progress_end(p);
	char *out = release(fd, saved);
	assert_string_equal(out, "");
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quick_phase_draws_nothing),
		cmocka_unit_test(test_slow_phase_draws_and_erases),
		cmocka_unit_test(test_writing),
		cmocka_unit_test(test_disabled),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
