/* Unit tests for gopclntab: a table of Go 1.18's layout made here (two
 * functions, a line table, a file table) is read back: names, lines,
 * files, the first line, the function starts; addresses outside it and
 * damaged tables answer nothing, without reading out of bounds. */
#include "config.h"
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "gopclntab.h"

#define TEXT 0x401000u

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

/* The table: header | names | cutab | files | pctab | functab + records. */
static size_t make_table(uint8_t *b, uint32_t magic, uint64_t text_start)
{
	memset(b, 0, 512);
	const size_t names = 72, cutab = 96, files = 104, pctab = 128, functab = 160;
	put32(b, magic);
	b[6] = 1;                       /* instruction quantum */
	b[7] = 8;                       /* pointer size */
	put64(b + 8, 2);                /* functions */
	put64(b + 16, 1);               /* files */
	put64(b + 24, text_start);
	put64(b + 32, names);
	put64(b + 40, cutab);
	put64(b + 48, files);
	put64(b + 56, pctab);
	put64(b + 64, functab);
	memcpy(b + names, "\0main.alpha\0main.beta", 22);   /* offsets 1 and 12 */
	put32(b + cutab, 1);            /* cu 0, file 0: filetab + 1 */
	memcpy(b + files, "\0/src/app/main.go", 18);
	/* pctab + 1: lines 10 for 16 bytes, 12 for 16 more (zigzag deltas) */
	static const uint8_t lines[] = { 22, 16, 4, 16, 0 };
	memcpy(b + pctab + 1, lines, sizeof lines);
	/* pctab + 8: file 0 for 32 bytes */
	static const uint8_t filet[] = { 2, 32, 0 };
	memcpy(b + pctab + 8, filet, sizeof filet);
	/* functab: alpha at 0, beta at 0x20, the end at 0x30; records after */
	put32(b + functab, 0);
	put32(b + functab + 4, 24);
	put32(b + functab + 8, 0x20);
	put32(b + functab + 12, 64);
	put32(b + functab + 16, 0x30);
	uint8_t *alpha = b + functab + 24, *beta = b + functab + 64;
	put32(alpha, 0);
	put32(alpha + 4, 1);            /* name */
	put32(alpha + 20, 8);           /* pcfile */
	put32(alpha + 24, 1);           /* pcln */
	put32(beta, 0x20);
	put32(beta + 4, 12);
	return functab + 104;
}

static void test_find(void **state)
{
	(void)state;
	uint8_t b[512];
	size_t len = make_table(b, 0xfffffff0u, TEXT);
	struct gopclntab t;
	assert_true(gopclntab_parse(&t, b, len, 0));
	struct gopclntab_func f;
	assert_true(gopclntab_find(&t, TEXT + 5, &f));
	assert_int_equal(f.name_len, 10);
	assert_memory_equal(f.name, "main.alpha", 10);
	assert_int_equal(f.entry, TEXT);
	assert_int_equal(f.line, 10);
	assert_int_equal(f.start_line, 10);
	assert_non_null(f.file);
	assert_int_equal(f.file_len, 16);
	assert_memory_equal(f.file, "/src/app/main.go", 16);
	assert_true(gopclntab_find(&t, TEXT + 0x1f, &f));
	assert_int_equal(f.line, 12);
	assert_int_equal(f.start_line, 10);
	/* beta: a name, no line or file table */
	assert_true(gopclntab_find(&t, TEXT + 0x2f, &f));
	assert_memory_equal(f.name, "main.beta", 9);
	assert_int_equal(f.line, 0);
	assert_null(f.file);
	/* outside */
	assert_false(gopclntab_find(&t, TEXT + 0x30, &f));
	assert_false(gopclntab_find(&t, TEXT - 1, &f));
	uint64_t starts[4];
	assert_int_equal(gopclntab_entries(&t, starts, 4), 2);
	assert_int_equal(starts[0], TEXT);
	assert_int_equal(starts[1], TEXT + 0x20);
}

/* Each function's code range, name and flag byte (where 1.18 and 1.20
 * keep it), as Go's traceback reads them; a record cut by the section's
 * end answers nothing. */
static void test_function_flags(void **state)
{
	(void)state;
	uint8_t b[512];
	size_t len = make_table(b, 0xfffffff0u, TEXT);
	b[160 + 24 + 37] = GOPCLNTAB_FLAG_TOPFRAME;     /* alpha */
	b[160 + 64 + 37] = GOPCLNTAB_FLAG_SPWRITE;      /* beta */
	struct gopclntab t;
	struct gopclntab_entry e;
	assert_true(gopclntab_parse(&t, b, len, 0));
	assert_true(gopclntab_function(&t, 0, &e));
	assert_int_equal(e.entry, TEXT);
	assert_int_equal(e.end, TEXT + 0x20);
	assert_int_equal(e.name_len, 10);
	assert_memory_equal(e.name, "main.alpha", 10);
	assert_int_equal(e.flag, GOPCLNTAB_FLAG_TOPFRAME);
	assert_true(gopclntab_function(&t, 1, &e));
	assert_int_equal(e.end, TEXT + 0x30);
	assert_int_equal(e.flag, GOPCLNTAB_FLAG_SPWRITE);
	assert_false(gopclntab_function(&t, 2, &e));
	/* Go 1.20's record is 4 bytes longer: the flag at 41; beta's record
	 * then passes the section's end unless the section goes on */
	len = make_table(b, 0xfffffff1u, TEXT);
	b[160 + 64 + 41] = GOPCLNTAB_FLAG_SPWRITE;      /* beta */
	assert_true(gopclntab_parse(&t, b, len, 0));
	assert_true(gopclntab_function(&t, 0, &e));
	assert_int_equal(e.flag, 0);
	assert_false(gopclntab_function(&t, 1, &e));
	assert_true(gopclntab_parse(&t, b, len + 4, 0));
	assert_true(gopclntab_function(&t, 1, &e));
	assert_int_equal(e.flag, GOPCLNTAB_FLAG_SPWRITE);
}

/* A position-independent binary's header has no text start: the caller's. */
static void test_text_start_given(void **state)
{
	(void)state;
	uint8_t b[512];
	size_t len = make_table(b, 0xfffffff1u, 0);
	struct gopclntab t;
	assert_true(gopclntab_parse(&t, b, len, 0x2000));
	assert_true(t.go120);
	struct gopclntab_func f;
	assert_true(gopclntab_find(&t, 0x2021, &f));
	assert_memory_equal(f.name, "main.beta", 9);
}

static void test_refused(void **state)
{
	(void)state;
	uint8_t b[512];
	size_t len = make_table(b, 0xfffffff0u, TEXT);
	struct gopclntab t;
	struct gopclntab_func f;
	/* unknown layouts, a short section */
	uint8_t c[512];
	memcpy(c, b, len);
	put32(c, 0xfffffffbu);          /* Go 1.2's */
	assert_false(gopclntab_parse(&t, c, len, 0));
	memcpy(c, b, len);
	c[7] = 4;                       /* 32-bit */
	assert_false(gopclntab_parse(&t, c, len, 0));
	assert_false(gopclntab_parse(&t, b, 71, 0));
	assert_false(gopclntab_parse(&t, b, 170, 0));   /* the function table cut */
	/* a function count past the section */
	memcpy(c, b, len);
	put64(c + 8, UINT64_C(1) << 60);
	assert_false(gopclntab_parse(&t, c, len, 0));
	/* a record past the end, a record of another entry, a name past the end */
	memcpy(c, b, len);
	put32(c + 160 + 4, 1000);
	assert_true(gopclntab_parse(&t, c, len, 0));
	assert_false(gopclntab_find(&t, TEXT + 1, &f));
	memcpy(c, b, len);
	put32(c + 160 + 24, 0x10);
	assert_true(gopclntab_parse(&t, c, len, 0));
	assert_false(gopclntab_find(&t, TEXT + 1, &f));
	memcpy(c, b, len);
	put32(c + 160 + 24 + 4, 100000);
	assert_true(gopclntab_parse(&t, c, len, 0));
	assert_false(gopclntab_find(&t, TEXT + 1, &f));
	/* a line table that runs off the section: a name, no line */
	memcpy(c, b, len);
	put32(c + 160 + 24 + 24, (uint32_t)len);
	assert_true(gopclntab_parse(&t, c, len, 0));
	assert_true(gopclntab_find(&t, TEXT + 1, &f));
	assert_int_equal(f.line, 0);
	/* a varint that never ends */
	memcpy(c, b, len);
	memset(c + 128 + 1, 0xff, 7);
	assert_true(gopclntab_parse(&t, c, len, 0));
	assert_true(gopclntab_find(&t, TEXT + 1, &f));
	assert_int_equal(f.line, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_text_start_given),
		cmocka_unit_test(test_function_flags),
		cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
