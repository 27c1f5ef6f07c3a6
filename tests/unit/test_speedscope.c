/* Unit tests for the timeline path: recstore (records back in order across
 * temp-file flushes, records larger than the buffer, reserve then append
 * without allocating), the speedscope writer's exact output for a small
 * timed profile (gaps, overlap, truncated and empty stacks, inline frames,
 * unnamed addresses, hostile names as valid JSON, the busiest thread
 * active), threads in process and thread id order, the same output under any memory budget (threads batched and
 * streamed), and escape_json. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "profile.h"
#include "recstore.h"
#include "write.h"

/* ---- recstore ---------------------------------------------------------------- */

struct seen {
	size_t n;
	int bad;
};

static int check_record(void *ctx, const void *rec, size_t len)
{
	struct seen *s = ctx;
	/* record i: i % 97 + 1 bytes of value (unsigned char)i, except every
	 * 50th, which is 5000 bytes */
	size_t want = s->n % 50 == 49 ? 5000 : s->n % 97 + 1;
	if (len != want || ((uintptr_t)rec & 7))
		s->bad++;
	for (size_t i = 0; i < len; i++)
		if (((const unsigned char *)rec)[i] != (unsigned char)s->n)
			s->bad++;
	s->n++;
	return 0;
}

static void test_recstore_order(void **state)
{
	(void)state;
	struct recstore st;
	unsigned char buf[5000];
	recstore_init(&st, 512, "test");
	for (size_t i = 0; i < 3000; i++) {
		size_t len = i % 50 == 49 ? 5000 : i % 97 + 1;
		memset(buf, (unsigned char)i, len);
		/* split in a head and a body, as the users do */
		assert_int_equal(recstore_append(&st, buf, len / 2, buf + len / 2, len - len / 2), 0);
	}
	assert_true(st.file_bytes > 0);
	for (int pass = 0; pass < 2; pass++) {
		struct seen s = { 0, 0 };
		assert_int_equal(recstore_foreach(&st, check_record, &s), 0);
		assert_int_equal(s.n, 3000);
		assert_int_equal(s.bad, 0);
	}
	recstore_free(&st);
}

static int stop_at_third(void *ctx, const void *rec, size_t len)
{
	(void)rec;
	(void)len;
	return ++*(int *)ctx == 3 ? 7 : 0;
}

static void test_recstore_reserve(void **state)
{
	(void)state;
	struct recstore st;
	unsigned char rec[100] = { 0 };
	recstore_init(&st, 256, "test");
	assert_int_equal(recstore_reserve(&st, 1000), 0);
	unsigned char *buf = st.buf;
	assert_int_equal(st.cap, 1000);
	for (int i = 0; i < 50; i++)
		assert_int_equal(recstore_append(&st, rec, sizeof rec, NULL, 0), 0);
	/* flushes reused the reserved buffer */
	assert_ptr_equal(st.buf, buf);
	int n = 0;
	assert_int_equal(recstore_foreach(&st, stop_at_third, &n), 7);
	assert_int_equal(n, 3);
	recstore_free(&st);
	/* an empty store */
	recstore_init(&st, 256, "test");
	n = 0;
	assert_int_equal(recstore_foreach(&st, stop_at_third, &n), 0);
	assert_int_equal(n, 0);
	recstore_free(&st);
}

/* ---- speedscope ------------------------------------------------------------ */

static char *write_to_string(const struct profile *p, size_t memory)
{
	char *buf = NULL;
	size_t len = 0;
	struct write_options wo = { .memory = memory };
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(write_speedscope(p, f, &wo), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* Two threads; period 1 ms; times in ns from the start. */
static struct profile *make_profile(void)
{
	struct profile *p = profile_new();
	assert_non_null(p);
	p->period_nanos = 1000000;
	p->duration_nanos = 20000000;
	p->timeline = true;
	p->pid = 10;
	profile_set_command(p, "prog \"quoted\"\n");
	uint32_t fmain = profile_add_function(p, "main", "main", "prog.c", 3);
	uint32_t fwork = profile_add_function(p, "work", "work", "prog.c", 9);
	uint32_t finl = profile_add_function(p, "in\x01line\xff", "inl", "", 0);
	struct profile_mapping m = { .start = 0x1000, .limit = 0x2000, .filename = "/bin/prog" };
	uint32_t map = profile_add_mapping(p, &m);
	struct profile_line lmain = { fmain, 5 };
	struct profile_line lwork[2] = { { finl, 12 }, { fwork, 11 } };
	uint32_t loc_main = profile_add_location(p, 0x1100, map, &lmain, 1, false);
	uint32_t loc_work = profile_add_location(p, 0x1200, map, lwork, 2, false);
	uint32_t loc_raw = profile_add_location(p, 0x1300, map, NULL, 0, false);
	uint32_t t1 = profile_add_thread(p, 10, 10, "prog", "prog");
	uint32_t t2 = profile_add_thread(p, 10, 11, "wo\"rker", "prog");
	uint32_t stack[2] = { loc_work, loc_main }, raw[2] = { loc_raw, loc_main };
	/* t1: a sample at 3 ms (covers 2-3 ms: a 2 ms gap first), one at 4 ms
	 * standing for 2 periods (2-4 ms overlaps: moved to 3-5 ms), one at
	 * 10 ms (gap 5-9 ms) truncated */
	assert_int_equal(profile_add_timed_sample(p, t1, stack, 2, 0, 1, 3000000), 0);
	assert_int_equal(profile_add_timed_sample(p, t2, raw, 2, 0, 3, 5000000), 0);
	assert_int_equal(profile_add_timed_sample(p, t1, stack, 2, 0, 2, 4000000), 0);
	assert_int_equal(profile_add_timed_sample(p, t1, stack, 1, PROFILE_SAMPLE_TRUNCATED, 1,
						  10000000), 0);
	/* t2: an empty stack at 6 ms, right after its first sample */
	assert_int_equal(profile_add_timed_sample(p, t2, NULL, 0, 0, 1, 6000000), 0);
	return p;
}

static const char expected[] =
	"{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n"
	"\"exporter\":\"csampler " PACKAGE_VERSION "\",\n"
	"\"name\":\"prog \\\"quoted\\\"\\u000a\",\n"
	"\"activeProfileIndex\":0,\n"
	"\"shared\":{\"frames\":[\n"
	"{\"name\":\"main\",\"file\":\"prog.c\",\"line\":3},\n"
	"{\"name\":\"work\",\"file\":\"prog.c\",\"line\":9},\n"
	"{\"name\":\"in\\u0001line\\ufffd\"},\n"
	"{\"name\":\"[prog+0x300]\"},\n"
	"{\"name\":\"[truncated]\"},\n"
	"{\"name\":\"[unknown]\"}]},\n"
	"\"profiles\":[\n"
	"{\"type\":\"sampled\",\"name\":\"prog-10\",\"unit\":\"nanoseconds\",\"startValue\":0,"
	"\"samples\":[[],[0,1,2],[0,1,2],[],[4,1,2]],"
	"\"weights\":[2000000,1000000,2000000,4000000,1000000],\"endValue\":20000000},\n"
	"{\"type\":\"sampled\",\"name\":\"wo\\\"rker-11\",\"unit\":\"nanoseconds\",\"startValue\":0,"
	"\"samples\":[[],[0,3],[5]],"
	"\"weights\":[2000000,3000000,1000000],\"endValue\":20000000}]\n"
	"}\n";

static void test_speedscope_exact(void **state)
{
	(void)state;
	struct profile *p = make_profile();
	char *out = write_to_string(p, 0);
	assert_string_equal(out, expected);
	free(out);
	/* any memory budget: threads in memory together, one by one, streamed */
	size_t budgets[] = { 1, 100, 300, 1000, 1 << 20 };
	for (size_t i = 0; i < sizeof budgets / sizeof budgets[0]; i++) {
		out = write_to_string(p, budgets[i]);
		assert_string_equal(out, expected);
		free(out);
	}
	profile_free(p);
}

/* A profile of one function "f" at one location, *LOC. */
static struct profile *one_function_profile(uint32_t *loc)
{
	struct profile *p = profile_new();
	assert_non_null(p);
	uint32_t f = profile_add_function(p, "f", "f", "", 0);
	struct profile_line l = { f, 1 };
	*loc = profile_add_location(p, 0x10, PROFILE_NONE, &l, 1, false);
	return p;
}

static void test_speedscope_untimed(void **state)
{
	(void)state;
	uint32_t loc;
	struct profile *p = one_function_profile(&loc);
	uint32_t t = profile_add_thread(p, 1, 1, "a", "a");
	uint32_t t2 = profile_add_thread(p, 1, 2, "b", "a");
	p->period_nanos = 10;
	p->pid = 1;
	/* no times: samples follow each other; t2 (more CPU) is active */
	assert_int_equal(profile_add_sample(p, t, &loc, 1, 0, 2), 0);
	assert_int_equal(profile_add_sample(p, t2, &loc, 1, 0, 5), 0);
	assert_int_equal(profile_add_sample(p, t, &loc, 1, 0, 1), 0);
	char *out = write_to_string(p, 0);
	assert_non_null(strstr(out, "\"activeProfileIndex\":1,"));
	assert_non_null(strstr(out, "\"name\":\"a-1\",\"unit\":\"nanoseconds\",\"startValue\":0,"
				    "\"samples\":[[0],[0]],\"weights\":[20,10],\"endValue\":30}"));
	assert_non_null(strstr(out, "\"samples\":[[0]],\"weights\":[50],\"endValue\":50}"));
	free(out);
	profile_free(p);
}

/* Threads seen late-first (a sampled worker before the main thread, a child
 * of a lower pid first) are written the target's main thread first, then by
 * thread id, then the other process, under any memory budget; the busiest
 * is active at its place in that order. */
static void test_speedscope_thread_order(void **state)
{
	(void)state;
	uint32_t loc;
	struct profile *p = one_function_profile(&loc);
	uint32_t other = profile_add_thread(p, 3, 3, "other", "b");
	uint32_t w2 = profile_add_thread(p, 7, 9, "w2", "a");
	uint32_t w1 = profile_add_thread(p, 7, 8, "w1", "a");
	uint32_t main_t = profile_add_thread(p, 7, 7, "main", "a");
	p->period_nanos = 10;
	p->pid = 7;
	assert_int_equal(profile_add_sample(p, w2, &loc, 1, 0, 1), 0);
	assert_int_equal(profile_add_sample(p, other, &loc, 1, 0, 2), 0);
	assert_int_equal(profile_add_sample(p, w1, &loc, 1, 0, 3), 0);
	assert_int_equal(profile_add_sample(p, main_t, &loc, 1, 0, 9), 0);
	size_t budgets[] = { 0, 1, 1 << 20 };
	for (size_t i = 0; i < sizeof budgets / sizeof budgets[0]; i++) {
		char *out = write_to_string(p, budgets[i]);
		const char *m = strstr(out, "\"main-7\""), *a = strstr(out, "\"w1-8\""),
			   *b = strstr(out, "\"w2-9\""), *o = strstr(out, "\"b[3] other-3\"");
		assert_non_null(m);
		assert_non_null(a);
		assert_non_null(b);
		assert_non_null(o);
		assert_true(m < a && a < b && b < o);
		assert_non_null(strstr(out, "\"activeProfileIndex\":0,"));
		free(out);
	}
	profile_free(p);
}

static void test_escape_json(void **state)
{
	(void)state;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	const char in[] = "a\"b\\c\n\x1f\x7f caf\xc3\xa9 \xc3 \xed\xa0\x80 \xf0\x9f\x98\x80";
	escape_json(f, in, sizeof in - 1);
	fclose(f);
	assert_string_equal(buf, "a\\\"b\\\\c\\u000a\\u001f\\u007f caf\xc3\xa9 \\ufffd "
				 "\\ufffd\\ufffd\\ufffd \xf0\x9f\x98\x80");
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recstore_order),
		cmocka_unit_test(test_recstore_reserve),
		cmocka_unit_test(test_speedscope_exact),
		cmocka_unit_test(test_speedscope_untimed),
		cmocka_unit_test(test_speedscope_thread_order),
		cmocka_unit_test(test_escape_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
