/* Unit tests for ksyms: kallsyms' text read into code symbols (aliases,
 * data, hidden addresses, modules), addresses looked up within their
 * region, names placed back (for /proc/TID/stack), and bad lines skipped. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "address.h"
#include "ksyms.h"

static const char sample[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 t startup_64\n"
	"ffffffff81000100 T do_syscall_64\n"
	"ffffffff81000200 t ep_poll\n"
	"ffffffff81000280 D some_data\n"
	"ffffffff81000300 T pipe_write\n"
	"ffffffff81000400 T _etext\n"
	"ffffffffc0001000 t ext4_readdir\t[ext4]\n"
	"ffffffffc0001100 t ep_poll\t[ext4]\n"
	"ffffffffc0002000 T xfs_lookup\t[xfs]\n";

static void test_lookup(void **state)
{
	(void)state;
	struct ksyms *k = ksyms_parse(sample, strlen(sample));
	assert_non_null(k);
	assert_false(ksyms_hidden(k));
	struct ksyms_symbol s;
	/* an alias at one address: the global one */
	assert_true(ksyms_lookup(k, 0xffffffff81000010, &s));
	assert_string_equal(s.name, "_stext");
	assert_null(s.module);
	assert_int_equal(s.region_start, 0xffffffff81000000);
	assert_true(ksyms_lookup(k, 0xffffffff810001ff, &s));
	assert_string_equal(s.name, "do_syscall_64");
	/* a data symbol is no function: the code before it goes on */
	assert_true(ksyms_lookup(k, 0xffffffff81000290, &s));
	assert_string_equal(s.name, "ep_poll");
	assert_true(ksyms_lookup(k, 0xffffffff81000300, &s));
	assert_string_equal(s.name, "pipe_write");
	assert_int_equal(s.start, 0xffffffff81000300);
	/* a module's */
	assert_true(ksyms_lookup(k, 0xffffffffc0001010, &s));
	assert_string_equal(s.name, "ext4_readdir");
	assert_string_equal(s.module, "ext4");
	assert_int_equal(s.region_start, 0xffffffffc0001000);
	/* before the first symbol, past a region's end */
	assert_false(ksyms_lookup(k, 0xffffffff80000000, &s));
	assert_false(ksyms_lookup(k, 0xffffffffc0001100 + 8192, &s));
	assert_true(ksyms_lookup(k, 0xffffffffc0002010, &s));
	assert_string_equal(s.module, "xfs");
	ksyms_free(k);
}

static void test_address(void **state)
{
	(void)state;
	struct ksyms *k = ksyms_parse(sample, strlen(sample));
	assert_non_null(k);
	assert_int_equal(ksyms_address(k, "pipe_write", NULL), 0xffffffff81000300);
	/* a name in the image and in a module: each where asked */
	assert_int_equal(ksyms_address(k, "ep_poll", NULL), 0xffffffff81000200);
	assert_int_equal(ksyms_address(k, "ep_poll", "ext4"), 0xffffffffc0001100);
	assert_int_equal(ksyms_address(k, "ext4_readdir", "ext4"), 0xffffffffc0001000);
	assert_int_equal(ksyms_address(k, "ext4_readdir", NULL), 0);
	assert_int_equal(ksyms_address(k, "xfs_lookup", "ext4"), 0);
	assert_int_equal(ksyms_address(k, "some_data", NULL), 0);
	assert_int_equal(ksyms_address(k, "nothing", NULL), 0);
	ksyms_free(k);
}

/* kptr_restrict: every address zero */
static void test_hidden(void **state)
{
	(void)state;
	static const char zeros[] = "0000000000000000 T _stext\n0000000000000000 T pipe_write\n";
	struct ksyms *k = ksyms_parse(zeros, strlen(zeros));
	assert_non_null(k);
	assert_true(ksyms_hidden(k));
	struct ksyms_symbol s;
	assert_false(ksyms_lookup(k, 0xffffffff81000300, &s));
	assert_int_equal(ksyms_address(k, "pipe_write", NULL), 0);
	ksyms_free(k);
	k = ksyms_parse("", 0);
	assert_non_null(k);
	assert_true(ksyms_hidden(k));
	ksyms_free(k);
}

/* lines that are not kallsyms' are skipped, never read past */
static void test_bad_lines(void **state)
{
	(void)state;
	char *long_name = malloc(2000);
	assert_non_null(long_name);
	memset(long_name, 'a', 1999);
	long_name[1999] = '\0';
	char *text = malloc(4096);
	assert_non_null(text);
	snprintf(text, 4096,
		 "ffffffff81000000 T first\n"
		 "zzzz T bad_address\n"
		 "ffffffff81000010 T\n"
		 "ffffffff81000020 Tx glued\n"
		 "ffffffff8100003 t\n"
		 "ffffffff81000040 T %s\n"
		 "ffffffff81000050 t unended\t[mod\n"
		 "ffffffff810000600000 T too_long_address\n"
		 "\n\n"
		 "ffffffff81000070 T last",
		 long_name);
	/* the text without its NUL: the last line has no newline */
	struct ksyms *k = ksyms_parse(text, strlen(text));
	assert_non_null(k);
	struct ksyms_symbol s;
	assert_true(ksyms_lookup(k, 0xffffffff81000068, &s));
	assert_string_equal(s.name, "first");
	assert_true(ksyms_lookup(k, 0xffffffff81000070, &s));
	assert_string_equal(s.name, "last");
	assert_int_equal(ksyms_address(k, "glued", NULL), 0);
	assert_int_equal(ksyms_address(k, "unended", NULL), 0);
	assert_int_equal(ksyms_address(k, "too_long_address", NULL), 0);
	ksyms_free(k);
	free(text);
	free(long_name);
}

/* /proc/TID/stack's lines placed back: return addresses, innermost first */
static void test_stack(void **state)
{
	(void)state;
	struct ksyms *k = ksyms_parse(sample, strlen(sample));
	assert_non_null(k);
	static const char text[] =
		"[<0>] ep_poll+0x2b/0x3b0\n"
		"[<0>] ep_poll+0x10/0x20 [ext4]\n"
		"[<0>] unknown_fn+0x10/0x20\n"
		"garbage\n"
		"[<0>] pipe_write\n"
		"[<0>] do_syscall_64+0x71/0x280\n"
		"[<0>] pipe_write+0x5";
	uint64_t out[8];
	size_t n = ksyms_stack(k, text, strlen(text), out, 8);
	assert_int_equal(n, 4);
	assert_int_equal(out[0], 0xffffffff8100022b);
	assert_int_equal(out[1], 0xffffffffc0001110);
	assert_int_equal(out[2], 0xffffffff81000171);
	assert_int_equal(out[3], 0xffffffff81000305);
	/* each a return address (looked up at address - 1) */
	assert_false(addr_is_activation(out[0]));
	assert_int_equal(addr_lookup_pc(out[0]), 0xffffffff8100022a);
	assert_int_equal(ksyms_stack(k, text, strlen(text), out, 2), 2);
	assert_int_equal(ksyms_stack(NULL, text, strlen(text), out, 8), 0);
	ksyms_free(k);
}

/* this machine's /proc/kallsyms, as csampler reads it */
static void test_load(void **state)
{
	(void)state;
	struct ksyms *k = ksyms_load();
	if (!k)
		skip();
	struct ksyms_symbol s;
	uint64_t at = ksyms_address(k, "do_syscall_64", NULL);
	if (!ksyms_hidden(k) && at) {
		assert_true(ksyms_lookup(k, at + 1, &s));
		assert_string_equal(s.name, "do_syscall_64");
	}
	ksyms_free(k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_address),
		cmocka_unit_test(test_hidden),
		cmocka_unit_test(test_bad_lines),
		cmocka_unit_test(test_stack),
		cmocka_unit_test(test_load),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
