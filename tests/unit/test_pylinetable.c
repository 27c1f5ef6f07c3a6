/* Unit tests for pylinetable: the lines of every code unit of four code
 * objects, as Python 3.11.2 (Debian bookworm) gives them (co_lines, None as
 * -1), from the location tables it made (co_linetable): short, one-line,
 * no-column and long entries, entries without a location, a jump of 302
 * lines forward (a long varint) and lines that go back. Then tables cut
 * short or malformed, which give PYLINE_BAD, never a read past their end.
 * The vectors were made by compiling the functions below (their source is
 * in the comment) with python3 and printing co_firstlineno, co_linetable
 * and co_lines():
 *
 *   def f_simple(a, b):            def far(x):
 *       x = a + b                      y = x
 *       y = x * 2                      <300 empty lines>
 *       return y                       z = y + 1
 *                                      return [z for _ in range(2)]
 *   def f_long(a):
 *       total = 0                  def back(x):
 *       for i in range(a):             return (x
 *           if i % 3 == 0:                     if x else
 *               total += i                     back(
 *           elif i % 5 == 0:             x))
 *               total -= (i *
 *                         2)
 *           else:
 *               total += 1
 *       return total
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pylinetable.h"

struct vector {
	const char *name;
	int first_line;
	const uint8_t *table;
	size_t len;
	const int *lines;               /* per code unit */
	size_t nunits;
};

static const uint8_t table_f_simple[] = {
		0x80, 0x00, 0xd8, 0x08, 0x09, 0x88, 0x41, 0x89, 0x05, 0x80, 0x41, 0xd8, 0x08,
		0x09, 0x88, 0x41, 0x89, 0x05, 0x80, 0x41, 0xd8, 0x0b, 0x0c, 0x80, 0x48
};
static const int lines_f_simple[] = {
		2, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 5, 5
};

static const uint8_t table_f_long[] = {
		0x80, 0x00, 0xd8, 0x0c, 0x0d, 0x80, 0x45, 0xdd, 0x0d, 0x12, 0x90, 0x31, 0x89,
		0x58, 0x8c, 0x58, 0xf0, 0x00, 0x07, 0x05, 0x17, 0xf0, 0x00, 0x07, 0x05, 0x17,
		0x88, 0x01, 0xd8, 0x0b, 0x0c, 0x88, 0x71, 0x89, 0x35, 0x90, 0x41, 0x8a, 0x3a,
		0x88, 0x3a, 0xd8, 0x0c, 0x11, 0x90, 0x51, 0x89, 0x4a, 0x88, 0x45, 0x88, 0x45,
		0xd8, 0x0d, 0x0e, 0x90, 0x11, 0x89, 0x55, 0x90, 0x61, 0x8a, 0x5a, 0x88, 0x5a,
		0xd8, 0x0c, 0x11, 0x90, 0x61, 0xd8, 0x16, 0x17, 0xf1, 0x03, 0x01, 0x17, 0x18,
		0xf1, 0x00, 0x01, 0x0d, 0x19, 0x88, 0x45, 0x88, 0x45, 0xf0, 0x06, 0x00, 0x0d,
		0x12, 0x90, 0x51, 0x89, 0x4a, 0x88, 0x45, 0x88, 0x45, 0xd8, 0x0b, 0x10, 0x80,
		0x4c
};
static const int lines_f_long[] = {
		7, 8, 8, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 10, 10, 10, 10, 10,
		10, 10, 10, 10, 11, 11, 11, 11, 11, 11, 12, 12, 12, 12, 12, 12, 12, 12, 12, 13,
		13, 14, 13, 13, 13, 13, 13, 13, 16, 16, 16, 16, 16, 16, 17, 17
};

static const uint8_t table_far[] = {
		0xf8, 0x80, 0x00, 0xd8, 0x08, 0x09, 0x80, 0x41, 0xf0, 0x5c, 0x09, 0x00, 0x09,
		0x0a, 0x88, 0x41, 0x89, 0x05, 0x80, 0x41, 0xd8, 0x0b, 0x20, 0xd0, 0x0b, 0x20,
		0xd0, 0x0b, 0x20, 0xd0, 0x0b, 0x20, 0x95, 0x75, 0x98, 0x51, 0x91, 0x78, 0x94,
		0x78, 0xd0, 0x0b, 0x20, 0xd1, 0x0b, 0x20, 0xd4, 0x0b, 0x20, 0xd0, 0x04, 0x20
};
static const int lines_far[] = {
		-1, 19, 20, 20, 322, 322, 322, 322, 322, 323, 323, 323, 323, 323, 323, 323, 323,
		323, 323, 323, 323, 323, 323, 323, 323, 323, 323, 323, 323, 323, 323, 323, 323,
		323, 323, 323
};

static const uint8_t table_back[] = {
		0x80, 0x00, 0xe0, 0x0f, 0x10, 0xf0, 0x03, 0x03, 0x0d, 0x05, 0x88, 0x41, 0x88,
		0x41, 0xe5, 0x0c, 0x10, 0xd8, 0x02, 0x03, 0xf1, 0x03, 0x01, 0x0d, 0x05, 0xf4,
		0x00, 0x01, 0x0d, 0x05, 0xf0, 0x05, 0x03, 0x05, 0x06
};
static const int lines_back[] = {
		325, 327, 326, 326, 326, 328, 328, 328, 328, 328, 328, 329, 328, 328, 328, 328,
		328, 328, 328, 326
};

static const struct vector vectors[] = {
	{ "f_simple", 2, table_f_simple, sizeof table_f_simple, lines_f_simple,
	  sizeof lines_f_simple / sizeof *lines_f_simple },
	{ "f_long", 7, table_f_long, sizeof table_f_long, lines_f_long,
	  sizeof lines_f_long / sizeof *lines_f_long },
	{ "far", 19, table_far, sizeof table_far, lines_far,
	  sizeof lines_far / sizeof *lines_far },
	{ "back", 325, table_back, sizeof table_back, lines_back,
	  sizeof lines_back / sizeof *lines_back },
};

static void test_python_tables(void **state)
{
	(void)state;
	for (size_t v = 0; v < sizeof vectors / sizeof *vectors; v++) {
		const struct vector *t = &vectors[v];
		for (size_t i = 0; i < t->nunits; i++) {
			int got = pylinetable_line(t->table, t->len, t->first_line, i);
			if (got != t->lines[i])
				fail_msg("%s: code unit %zu: line %d, Python says %d", t->name, i, got,
					 t->lines[i]);
		}
		/* past the last code unit the table covers: none */
		assert_int_equal(pylinetable_line(t->table, t->len, t->first_line, t->nunits),
				 PYLINE_BAD);
	}
}

/* every prefix of a table: the units it covers whole keep their lines, the
 * rest are PYLINE_BAD (a copy of exactly LEN bytes, so a read past it is
 * AddressSanitizer's to see) */
static void test_cut_tables(void **state)
{
	(void)state;
	for (size_t v = 0; v < sizeof vectors / sizeof *vectors; v++) {
		const struct vector *t = &vectors[v];
		for (size_t len = 0; len < t->len; len++) {
			uint8_t *cut = malloc(len ? len : 1);
			assert_non_null(cut);
			memcpy(cut, t->table, len);
			for (size_t i = 0; i < t->nunits; i++) {
				int got = pylinetable_line(cut, len, t->first_line, i);
				if (got != PYLINE_BAD && got != t->lines[i])
					fail_msg("%s cut at %zu: unit %zu: line %d, not %d", t->name, len,
						 i, got, t->lines[i]);
			}
			free(cut);
		}
	}
}

static void test_malformed(void **state)
{
	(void)state;
	/* not an entry's first byte */
	static const uint8_t no_start[] = { 0x00, 0x80 };
	assert_int_equal(pylinetable_line(no_start, sizeof no_start, 1, 0), PYLINE_BAD);
	/* a no-column entry whose varint never ends */
	static const uint8_t endless[] = { 0xe8, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x01 };
	assert_int_equal(pylinetable_line(endless, sizeof endless, 1, 0), PYLINE_BAD);
	/* its varint cut by the end of the table */
	static const uint8_t cut[] = { 0xe8, 0x41 };
	assert_int_equal(pylinetable_line(cut, sizeof cut, 1, 0), PYLINE_BAD);
	/* a line driven below 0, and past INT_MAX */
	static const uint8_t down[] = { 0xe8, 0x05 };         /* -2 */
	assert_int_equal(pylinetable_line(down, sizeof down, 1, 0), PYLINE_BAD);
	assert_int_equal(pylinetable_line(down, sizeof down, 2, 0), 0);
	static const uint8_t up[] = { 0xe8, 0x7e, 0x7f, 0x7f, 0x7f, 0x0f };  /* +134217727 */
	assert_int_equal(pylinetable_line(up, sizeof up, 1 << 30, 0), (1 << 30) + 134217727);
	assert_int_equal(pylinetable_line(up, sizeof up, 0x7fffffff - 5, 0), PYLINE_BAD);
	/* no table, a negative first line */
	assert_int_equal(pylinetable_line(NULL, 0, 1, 0), PYLINE_BAD);
	assert_int_equal(pylinetable_line(no_start, sizeof no_start, -1, 0), PYLINE_BAD);
	/* an entry of 8 units: all of them, then the next entry's */
	static const uint8_t eight[] = { 0xdf, 0x00, 0x00, 0xd8, 0x00, 0x00 }; /* +1 x 8, +1 */
	for (size_t i = 0; i < 8; i++)
		assert_int_equal(pylinetable_line(eight, sizeof eight, 10, i), 11);
	assert_int_equal(pylinetable_line(eight, sizeof eight, 10, 8), 12);
	/* no location: none, and the line it leaves unchanged goes on */
	static const uint8_t none[] = { 0xf8, 0xd8, 0x00, 0x00 };
	assert_int_equal(pylinetable_line(none, sizeof none, 10, 0), PYLINE_NONE);
	assert_int_equal(pylinetable_line(none, sizeof none, 10, 1), 11);
}

/* f(a) of a file whose line 2 is its def (x = a + 1; if x > 3: y = x * 2,
 * a blank line, return y; for i in range(3): x += i; return x), as
 * pyenv's 2.7.18 and 3.8.18 (co_lnotab) and 3.10.13 (co_linetable) made
 * it, against dis.findlinestarts and co_lines of each. */
static void test_older_tables(void **state)
{
	(void)state;
	static const uint8_t lnotab27[] = { 0x00, 0x01, 0x0a, 0x01, 0x0c, 0x01, 0x0a, 0x02,
					    0x04, 0x01, 0x13, 0x01, 0x0e, 0x01 };
	static const size_t starts27[] = { 0, 10, 22, 32, 36, 55, 69, 73 };
	static const uint8_t lnotab38[] = { 0x00, 0x01, 0x08, 0x01, 0x08, 0x01, 0x08, 0x02,
					    0x04, 0x01, 0x0c, 0x01, 0x0a, 0x01 };
	static const size_t starts38[] = { 0, 8, 16, 24, 28, 40, 50, 54 };
	static const uint8_t table310[] = { 0x08, 0x01, 0x08, 0x01, 0x08, 0x01, 0x04, 0x02,
					    0x0c, 0x01, 0x0a, 0x01, 0x04, 0x01 };
	static const int lines[] = { 3, 4, 5, 7, 8, 9, 10 };
	for (size_t r = 0; r < 7; r++) {
		for (size_t off = starts27[r]; off < starts27[r + 1]; off++)
			assert_int_equal(pylinetable_lnotab_line(lnotab27, sizeof lnotab27, 2, off,
								 false), lines[r]);
		for (size_t off = starts38[r]; off < starts38[r + 1]; off++) {
			assert_int_equal(pylinetable_lnotab_line(lnotab38, sizeof lnotab38, 2, off,
								 true), lines[r]);
			assert_int_equal(pylinetable_310_line(table310, sizeof table310, 2, off),
					 lines[r]);
		}
	}
	/* past the code: 3.10's table covers none; a line table's last line */
	assert_int_equal(pylinetable_310_line(table310, sizeof table310, 2, 54), PYLINE_BAD);
	assert_int_equal(pylinetable_lnotab_line(lnotab38, sizeof lnotab38, 2, 54, true), 10);
	/* signed changes (3.6+), a range without a line (3.10), bad lines */
	static const uint8_t back[] = { 0x00, 0x05, 0x04, 0xfe };
	assert_int_equal(pylinetable_lnotab_line(back, sizeof back, 10, 4, true), 13);
	assert_int_equal(pylinetable_lnotab_line(back, sizeof back, 10, 4, false), 269);
	static const uint8_t none[] = { 0x02, 0x01, 0x02, 0x80, 0x02, 0x01 };
	assert_int_equal(pylinetable_310_line(none, sizeof none, 10, 0), 11);
	assert_int_equal(pylinetable_310_line(none, sizeof none, 10, 3), PYLINE_NONE);
	assert_int_equal(pylinetable_310_line(none, sizeof none, 10, 5), 12);
	static const uint8_t below[] = { 0x00, 0x80 };
	assert_int_equal(pylinetable_lnotab_line(below, sizeof below, 3, 0, true), PYLINE_BAD);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_python_tables),
		cmocka_unit_test(test_cut_tables),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_older_tables),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
