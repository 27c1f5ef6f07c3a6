/* Unit tests for the folded format: folded_escape (with a fuzz loop), the
 * exact folded output of a small profile (inline frames, thread view,
 * annotations, truncated and empty stacks), determinism, the same output
 * from the bounded sort with a tiny memory budget (many runs merged through
 * a temp file) as from one run in memory, formats by name and path, the SVG
 * and text writers' escaping, and write_output's atomicity. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile.h"
#include "write_internal.h"

static const char *escape(const char *in, size_t outsz)
{
	static char out[256];
	assert_true(outsz <= sizeof out);
	folded_escape(in, out, outsz);
	return out;
}

static void test_escape(void **state)
{
	char out[8];
	(void)state;

	assert_string_equal(escape("main", 64), "main");
	assert_string_equal(escape("a;b", 64), "a:b");
	assert_string_equal(escape("a;b\n999 77", 64), "a:b999_77");
	assert_string_equal(escape("line\r\nbreak\ttab\x7f", 64), "linebreaktab");
	assert_string_equal(escape("foo 12", 64), "foo_12");
	assert_string_equal(escape("foo 1.5", 64), "foo_1.5");
	assert_string_equal(escape("foo 12 ", 64), "foo 12 ");
	assert_string_equal(escape("foo12", 64), "foo12");
	assert_string_equal(escape("foo 1a", 64), "foo 1a");
	assert_string_equal(escape("foo .", 64), "foo .");
	assert_string_equal(escape("12", 64), "12");
	assert_string_equal(escape(" 12", 64), "_12");
	assert_string_equal(escape("operator<<(std::ostream&, int)", 64),
			    "operator<<(std::ostream&, int)");
	assert_string_equal(escape("caf\xc3\xa9", 64), "caf\xc3\xa9");
	/* truncation cannot leave a trailing count either */
	assert_string_equal(escape("abc 123456", 8), "abc_123");
	assert_int_equal(folded_escape("abcdef", out, 4), 3);
	assert_string_equal(out, "abc");
	assert_int_equal(folded_escape("abc", out, 1), 0);
	assert_string_equal(out, "");
	assert_int_equal(folded_escape("abc", out, 0), 0);
	assert_int_equal(folded_escape(NULL, out, sizeof out), 0);
	assert_string_equal(out, "");
}

/* Random bytes: no separator, no control character, no trailing number. */
static void test_escape_fuzz(void **state)
{
	char in[64], out[64];
	unsigned seed = 12345;
	(void)state;

	for (int round = 0; round < 200000; round++) {
		size_t n = (size_t)(rand_r(&seed) % (sizeof in - 1));
		static const char alphabet[] = " ;\n\r\t0123456789.ab\x01\x7f\xc3\xa9";
		size_t outsz = 1 + (size_t)(rand_r(&seed) % sizeof out);
		size_t len, i;
		for (i = 0; i < n; i++)
			in[i] = alphabet[rand_r(&seed) % (sizeof alphabet - 1)];
		in[n] = '\0';
		len = folded_escape(in, out, outsz);
		assert_true(len < outsz);
		assert_int_equal(strlen(out), len);
		for (i = 0; i < len; i++) {
			unsigned char c = (unsigned char)out[i];
			assert_true(c >= 0x20 && c != 0x7f && c != ';');
		}
		/* never " <digits/dots with a digit>" at the end */
		i = len;
		bool digit = false;
		while (i > 0 && ((out[i - 1] >= '0' && out[i - 1] <= '9') || out[i - 1] == '.')) {
			digit |= out[i - 1] != '.';
			i--;
		}
		assert_false(digit && i > 0 && out[i - 1] == ' ');
	}
}

static void test_line_compare(void **state)
{
	(void)state;
	assert_int_equal(folded_line_compare("a;b", "a;b"), 0);
	assert_true(folded_line_compare("foo;x", "foo!x") < 0);
	assert_true(folded_line_compare("foo", "foo;x") < 0);
	assert_true(folded_line_compare("foo;z", "foobar") < 0);
	assert_true(folded_line_compare("b", "a;z") > 0);
}

/* main -> work (with helper inlined) in two threads, one grouped; a JIT
 * frame; an unsymbolized address; a truncated and an empty stack. */
static struct profile *small_profile(bool reversed)
{
	struct profile *p = profile_new();
	struct profile_mapping m = { 0x400000, 0x401000, 0x1000, "/opt/bin/app", "", true, true,
				     true, true };
	uint32_t map, f_main, f_work, f_help, f_jit, l_main, l_work, l_raw, l_jit, t1, t2;
	struct profile_line lines[2];

	assert_non_null(p);
	map = profile_add_mapping(p, &m);
	f_main = profile_add_function(p, "main", "main", "app.c", 1);
	f_work = profile_add_function(p, "work;x", "work", "app.c", 10);
	f_help = profile_add_function(p, "help\n1 2", "help", "app.c", 20);
	f_jit = profile_add_function(p, "js:run", "js:run", "", 0);
	lines[0] = (struct profile_line){ f_main, 3 };
	l_main = profile_add_location(p, 0x400100, map, lines, 1, false);
	lines[0] = (struct profile_line){ f_help, 21 };
	lines[1] = (struct profile_line){ f_work, 12 };
	l_work = profile_add_location(p, 0x400200, map, lines, 2, false);
	l_raw = profile_add_location(p, 0x400abc, map, NULL, 0, false);
	lines[0] = (struct profile_line){ f_jit, 0 };
	l_jit = profile_add_location(p, 0x9000, PROFILE_NONE, lines, 1, true);
	t1 = profile_add_thread(p, 5, 6, "t;1", "app");
	t2 = profile_add_thread(p, 5, 0, "pool 3", "app");

	uint32_t s_work[] = { l_work, l_main }, s_raw[] = { l_raw, l_main };
	uint32_t s_jit[] = { l_jit, l_main };
	if (!reversed) {
		profile_add_sample(p, t1, s_work, 2, 0, 10);
		profile_add_sample(p, t2, s_work, 2, 0, 5);
		profile_add_sample(p, t1, s_raw, 2, 0, 2);
		profile_add_sample(p, t2, s_jit, 2, 0, 3);
		profile_add_sample(p, t1, s_work, 1, PROFILE_SAMPLE_TRUNCATED, 4);
		profile_add_sample(p, t1, NULL, 0, 0, 1);
	} else {
		profile_add_sample(p, t1, NULL, 0, 0, 1);
		profile_add_sample(p, t1, s_work, 1, PROFILE_SAMPLE_TRUNCATED, 4);
		profile_add_sample(p, t2, s_jit, 2, 0, 3);
		profile_add_sample(p, t1, s_raw, 2, 0, 2);
		profile_add_sample(p, t2, s_work, 2, 0, 3);
		profile_add_sample(p, t1, s_work, 2, 0, 10);
		profile_add_sample(p, t2, s_work, 2, 0, 2);
	}
	assert_int_equal(p->total_samples, 25);
	return p;
}

static char *render(const struct profile *p, int (*fn)(const struct profile *, FILE *,
						       const struct write_options *),
		    const struct write_options *opt)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(fn(p, f, opt), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void test_folded_output(void **state)
{
	struct profile *p = small_profile(false), *q = small_profile(true);
	struct write_options plain = { 0 }, threads = { .threads = true },
			     annotate = { .annotate = true };
	char *a, *b;
	(void)state;

	a = render(p, write_folded, &plain);
	assert_string_equal(a,
			    "[truncated];work:x;help1_2 4\n"
			    "[unknown] 1\n"
			    "main;[app+0x1abc] 2\n"
			    "main;js:run 3\n"
			    "main;work:x;help1_2 15\n");
	b = render(q, write_folded, &plain);
	assert_string_equal(a, b);
	free(a);
	free(b);

	a = render(p, write_folded, &threads);
	assert_string_equal(a,
			    "pool_3;main;js:run 3\n"
			    "pool_3;main;work:x;help1_2 5\n"
			    "t:1-6 1\n"
			    "t:1-6;[truncated];work:x;help1_2 4\n"
			    "t:1-6;main;[app+0x1abc] 2\n"
			    "t:1-6;main;work:x;help1_2 10\n");
	free(a);

	a = render(p, write_folded, &annotate);
	assert_string_equal(a,
			    "[truncated];work:x;help1_2_[i] 4\n"
			    "[unknown] 1\n"
			    "main;[app+0x1abc] 2\n"
			    "main;js:run_[j] 3\n"
			    "main;work:x;help1_2_[i] 15\n");
	free(a);
	profile_free(p);
	profile_free(q);
}

static void test_svg_and_text(void **state)
{
	struct profile *p = small_profile(false);
	struct write_options opt = { .title = "t<&>\"'\x01", .threads = true };
	char *s;
	(void)state;

	assert_int_equal(profile_set_command(p, "./app <x>"), 0);
	s = render(p, write_svg, &opt);
	assert_non_null(strstr(s, "<?xml version=\"1.0\""));
	assert_non_null(strstr(s, ">t&lt;&amp;&gt;&quot;&#39;</text>"));
	assert_non_null(strstr(s, "data-name=\"work:x\""));
	assert_non_null(strstr(s, "<title>all (25 samples, 100.00%)</title>"));
	/* a function's frame says where it is (file:first line in its module);
	 * a thread's does not */
	assert_non_null(strstr(s, "<title>main (12 samples, 48.00%) \xe2\x80\x94 app.c:1 in app</title>"));
	assert_non_null(strstr(s, "data-name=\"main\" data-where=\"app.c:1 in app\""));
	assert_non_null(strstr(s, "<title>pool_3 (8 samples, 32.00%)</title>"));
	assert_null(strstr(s, "\x01"));
	assert_string_equal(s + strlen(s) - 7, "</svg>\n");
	free(s);

	s = render(p, write_svg, NULL);
	assert_non_null(strstr(s, ">csampler: ./app &lt;x&gt; (pid 0), 0.00s, 25 samples</text>"));
	free(s);

	s = render(p, write_text, NULL);
	assert_non_null(strstr(s, "Top functions by self samples"));
	assert_non_null(strstr(s, "        19  76.00%         19  76.00%  help1_2  (app.c:20, app)\n"));
	/* threads by samples: t:1-6 has 15 + 4 + 2 + 1 + ... of the 25 */
	assert_non_null(strstr(s, "CPU time by thread\n"));
	assert_non_null(strstr(s, "  t:1-6\n"));
	assert_non_null(strstr(s, "  pool_3\n"));
	/* no padding rows of functions without self samples in the self table */
	const char *self_table = strstr(s, "Top functions by self samples");
	const char *total_table = strstr(s, "Top functions by total samples");
	assert_non_null(total_table);
	char *zero = strstr(self_table, "         0   0.00%");
	assert_true(!zero || zero > total_table);
	/* the JIT frame has no file and no module: nothing after its name */
	assert_non_null(strstr(s, "  js:run\n"));
	assert_non_null(strstr(s, "#1  15 samples (60.00%)\n    help1_2  (inlined)\n    work:x\n"
				  "    main\n"));
	free(s);
	profile_free(p);
}

/* The text report has a row per function and module (ld.so's _start is
 * not the program's, which took ld.so's name and module when its first
 * sample came first), and --annotate's suffixes stay out of its names
 * (inlined frames are marked in words). */
static void test_text_rows(void **state)
{
	struct profile *p = profile_new();
	struct profile_mapping ld = { 0x7f0000000000, 0x7f0000001000, 0, "/lib64/ld-linux-x86-64.so.2",
				      "", true, true, true, true };
	struct profile_mapping app = { 0x400000, 0x401000, 0x1000, "/opt/bin/app", "", true, true,
				       true, true };
	struct write_options annotate = { .annotate = true };
	(void)state;

	assert_non_null(p);
	uint32_t m_ld = profile_add_mapping(p, &ld), m_app = profile_add_mapping(p, &app);
	uint32_t f_ld = profile_add_function(p, "_start", "_start", "", 0);
	uint32_t f_app = profile_add_function(p, "_start", "_start", "start.S", 5);
	uint32_t f_main = profile_add_function(p, "main", "main", "app.c", 1);
	uint32_t f_sq = profile_add_function(p, "square", "square", "app.c", 20);
	struct profile_line lines[2] = { { f_ld, 0 } };
	uint32_t l_ld = profile_add_location(p, 0x7f0000000100, m_ld, lines, 1, false);
	lines[0] = (struct profile_line){ f_app, 7 };
	uint32_t l_app = profile_add_location(p, 0x400010, m_app, lines, 1, false);
	lines[0] = (struct profile_line){ f_sq, 21 };
	lines[1] = (struct profile_line){ f_main, 3 };
	uint32_t l_main = profile_add_location(p, 0x400100, m_app, lines, 2, false);
	uint32_t t = profile_add_thread(p, 5, 5, "app", "app");
	uint32_t s_ld[] = { l_ld }, s_main[] = { l_main, l_app };
	assert_int_equal(profile_add_sample(p, t, s_ld, 1, 0, 1), 0);
	assert_int_equal(profile_add_sample(p, t, s_main, 2, 0, 9), 0);

	char *s = render(p, write_text, &annotate);
	const char *total_table = strstr(s, "Top functions by total samples");
	assert_non_null(total_table);
	assert_non_null(strstr(total_table, "         0   0.00%          9  90.00%  _start  "
					    "(start.S:5, app)\n"));
	assert_non_null(strstr(total_table, "         1  10.00%          1  10.00%  _start  "
					    "(ld-linux-x86-64.so.2)\n"));
	assert_non_null(strstr(s, "         9  90.00%          9  90.00%  square  (app.c:20, app)\n"));
	assert_non_null(strstr(s, "    square  (inlined)\n    main\n    _start\n"));
	assert_null(strstr(s, "_[i]"));
	free(s);
	profile_free(p);
}

/* Bytes that are not UTF-8, or XML syntax, in a name cannot break the SVG. */
static void test_svg_hostile_names(void **state)
{
	struct profile *p = profile_new();
	uint32_t f = profile_add_function(p, "bad\xff\xc3(\xe0\x80\x80]]></svg><x a='1'>", "", "", 0);
	struct profile_line l = { f, 0 };
	uint32_t loc = profile_add_location(p, 1, PROFILE_NONE, &l, 1, false);
	uint32_t t = profile_add_thread(p, 1, 1, "t", "t");
	char *s;
	(void)state;

	assert_int_equal(profile_add_sample(p, t, &loc, 1, 0, 3), 0);
	s = render(p, write_svg, NULL);
	assert_non_null(strstr(s, "data-name=\"bad\xef\xbf\xbd\xef\xbf\xbd(\xef\xbf\xbd\xef\xbf\xbd"
				  "\xef\xbf\xbd]]&gt;&lt;/svg&gt;&lt;x a=&#39;1&#39;&gt;\""));
	assert_null(strstr(s, "\xff"));
	free(s);
	profile_free(p);
}

/* Many distinct stacks, with equal ones far apart and stacks that differ
 * only in their locations but fold to one line (equal function names). */
static struct profile *many_stacks_profile(size_t buffer)
{
	enum { NFUNC = 40, NSAMPLES = 20000 };
	struct profile *p = profile_new();
	uint32_t locs[NFUNC * 2], stack[24];
	uint32_t threads[3];
	char name[32];

	assert_non_null(p);
	assert_int_equal(profile_set_sample_buffer(p, buffer), 0);
	for (uint32_t i = 0; i < NFUNC; i++) {
		snprintf(name, sizeof name, "fn_%u%s", i, i % 7 == 0 ? ";x" : "");
		struct profile_line l = { profile_add_function(p, name, name, "f.c", i), i };
		locs[2 * i] = profile_add_location(p, 0x1000 + 16 * i, PROFILE_NONE, &l, 1, false);
		locs[2 * i + 1] = profile_add_location(p, 0x1008 + 16 * i, PROFILE_NONE, &l, 1, false);
	}
	for (uint32_t i = 0; i < 3; i++) {
		snprintf(name, sizeof name, "w%u", i);
		threads[i] = profile_add_thread(p, 9, (int32_t)(10 + i), name, "app");
	}
	srand(42);
	for (uint32_t i = 0; i < NSAMPLES; i++) {
		uint32_t depth = 1 + (uint32_t)rand() % 24;
		for (uint32_t d = 0; d < depth; d++)
			stack[d] = locs[(uint32_t)rand() % (d < 4 ? 8 : NFUNC * 2)];
		assert_int_equal(profile_add_sample(p, threads[rand() % 3], stack, depth,
						    rand() % 50 == 0 ? PROFILE_SAMPLE_TRUNCATED : 0,
						    1 + (uint64_t)(rand() % 3)), 0);
	}
	return p;
}

static void test_bounded_sort(void **state)
{
	struct profile *big = many_stacks_profile(PROFILE_SAMPLE_BUFFER);
	struct profile *small = many_stacks_profile(512);
	struct write_options roomy = { .threads = true }, tight = { .threads = true, .memory = 8192 };
	int (*writers[])(const struct profile *, FILE *, const struct write_options *) = {
		write_folded, write_svg, write_text,
	};
	(void)state;

	for (size_t w = 0; w < sizeof writers / sizeof writers[0]; w++) {
		char *a = render(big, writers[w], &roomy);
		char *b = render(small, writers[w], &tight);
		assert_true(strlen(a) > 2000);
		assert_string_equal(a, b);
		free(a);
		free(b);
	}

	/* the folded lines are sorted, unique, and add up to every sample */
	char *f = render(small, write_folded, &tight), *line, *save = NULL, *prev = NULL;
	uint64_t total = 0;
	size_t lines = 0;
	for (line = strtok_r(f, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' ');
		assert_non_null(sp);
		total += strtoull(sp + 1, NULL, 10);
		*sp = '\0';
		if (prev)
			assert_true(folded_line_compare(prev, line) < 0);
		prev = line;
		lines++;
	}
	assert_int_equal(total, small->total_samples);
	assert_true(lines > 1000 && lines < small->nsamples);
	free(f);
	profile_free(big);
	profile_free(small);
}

static void test_formats(void **state)
{
	(void)state;
	assert_int_equal(write_format_from_path("x.pb.gz"), FORMAT_PPROF);
	assert_int_equal(write_format_from_path("x.pb"), FORMAT_PPROF);
	assert_int_equal(write_format_from_path("dir.d/x.pprof"), FORMAT_PPROF);
	assert_int_equal(write_format_from_path("x.folded"), FORMAT_FOLDED);
	assert_int_equal(write_format_from_path("x.collapsed"), FORMAT_FOLDED);
	assert_int_equal(write_format_from_path("x.svg"), FORMAT_SVG);
	assert_int_equal(write_format_from_path("x.txt"), FORMAT_TEXT);
	assert_int_equal(write_format_from_path("x.gz"), FORMAT_AUTO);
	assert_int_equal(write_format_from_path(".svg"), FORMAT_AUTO);
	assert_int_equal(write_format_from_path("dir/.svg"), FORMAT_AUTO);
	assert_int_equal(write_format_from_path("-"), FORMAT_AUTO);
	assert_int_equal(write_format_from_name("pprof"), FORMAT_PPROF);
	assert_int_equal(write_format_from_name("folded"), FORMAT_FOLDED);
	assert_int_equal(write_format_from_name("svg"), FORMAT_SVG);
	assert_int_equal(write_format_from_name("text"), FORMAT_TEXT);
	assert_int_equal(write_format_from_name("auto"), FORMAT_AUTO);
	assert_int_equal(write_format_from_name("png"), FORMAT_AUTO);
	assert_string_equal(write_format_name(FORMAT_SVG), "svg");
	assert_string_equal(write_format_name(FORMAT_TEXT), "text");
}

static size_t count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static void test_write_output(void **state)
{
	char dir[] = "/tmp/test_folded.XXXXXX", path[128], bad[160];
	struct profile *p = small_profile(false);
	struct stat st;
	FILE *f;
	char line[128];
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/out.folded", dir);
	assert_int_equal(write_output(p, path, -1, FORMAT_AUTO, NULL), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(count_entries(dir), 1);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof line, f));
	assert_string_equal(line, "[truncated];work:x;help1_2 4\n");
	fclose(f);

	/* an existing file is replaced whole */
	assert_int_equal(write_output(p, path, -1, FORMAT_TEXT, NULL), 0);
	assert_int_equal(count_entries(dir), 1);

	/* unknown extension, missing directory: an error and no file */
	snprintf(bad, sizeof bad, "%s/out.unknown", dir);
	assert_int_equal(write_output(p, bad, -1, FORMAT_AUTO, NULL), -1);
	snprintf(bad, sizeof bad, "%s/missing/out.svg", dir);
	assert_int_equal(write_output(p, bad, -1, FORMAT_AUTO, NULL), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(count_entries(dir), 1);

	unlink(path);
	rmdir(dir);
	profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_escape_fuzz),
		cmocka_unit_test(test_line_compare),
		cmocka_unit_test(test_folded_output),
		cmocka_unit_test(test_svg_and_text),
		cmocka_unit_test(test_text_rows),
		cmocka_unit_test(test_svg_hostile_names),
		cmocka_unit_test(test_bounded_sort),
		cmocka_unit_test(test_formats),
		cmocka_unit_test(test_write_output),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
