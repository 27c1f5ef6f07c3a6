/* Unit tests for goruntime's pure parts: the Go release read from a
 * .go.buildinfo section (inline strings of Go 1.18 on; the pointer form of
 * older releases, a damaged length, a devel build and a missing header
 * name none), the table of layouts by release (1.18-1.24, 1.25-1.26, and
 * nothing outside), and the check of a layout against the runtime's code
 * (Go 1.19's runtime.systemstack and gosave_systemstack_switch as
 * assembled, then with each offset changed). */
#include "config.h"
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "goruntime.h"

/* A section of LEN bytes with the header at AT, its flags FLAGS, and the
 * version string V after it (its length byte as given: LENBYTE). */
static size_t make_info(uint8_t *b, size_t len, size_t at, uint8_t flags, const char *v,
			size_t lenbyte)
{
	memset(b, 0, len);
	memcpy(b + at, "\xff Go buildinf:", 14);
	b[at + 14] = 8;
	b[at + 15] = flags;
	b[at + 32] = (uint8_t)lenbyte;
	memcpy(b + at + 33, v, strlen(v));
	return len;
}

static void test_version(void **state)
{
	(void)state;
	uint8_t b[256];
	unsigned major = 0, minor = 0;
	make_info(b, sizeof b, 0, 2, "go1.19.8", 8);
	assert_true(goruntime_version(b, sizeof b, &major, &minor));
	assert_int_equal(major, 1);
	assert_int_equal(minor, 19);
	make_info(b, sizeof b, 16, 2, "go1.21rc2", 9);
	assert_true(goruntime_version(b, sizeof b, &major, &minor));
	assert_int_equal(minor, 21);
	make_info(b, sizeof b, 0, 3, "go1.22.0 X:boringcrypto", 23);
	assert_true(goruntime_version(b, sizeof b, &major, &minor));
	assert_int_equal(minor, 22);
	/* before 1.18: the strings are pointers (no inline flag) */
	make_info(b, sizeof b, 0, 0, "go1.17.1", 8);
	assert_false(goruntime_version(b, sizeof b, &major, &minor));
	/* a devel build, a length past the end, a two-byte length, no header */
	make_info(b, sizeof b, 0, 2, "devel go1.23-abc", 16);
	assert_false(goruntime_version(b, sizeof b, &major, &minor));
	make_info(b, 48, 0, 2, "go1.19.8", 40);
	assert_false(goruntime_version(b, 48, &major, &minor));
	make_info(b, sizeof b, 0, 2, "go1.19.8", 0x88);
	assert_false(goruntime_version(b, sizeof b, &major, &minor));
	make_info(b, sizeof b, 8, 2, "go1.19.8", 8);   /* (not 16-byte aligned) */
	assert_false(goruntime_version(b, sizeof b, &major, &minor));
	assert_false(goruntime_version(b, 20, &major, &minor));
	/* "go1." with no minor, "go1x19" */
	make_info(b, sizeof b, 0, 2, "go1.x", 5);
	assert_false(goruntime_version(b, sizeof b, &major, &minor));
	make_info(b, sizeof b, 0, 2, "go1x19", 6);
	assert_false(goruntime_version(b, sizeof b, &major, &minor));
}

static void test_table(void **state)
{
	(void)state;
	struct goruntime_layout l;
	assert_true(goruntime_layout_of_version(1, 18, &l));
	assert_int_equal(l.g_m, 48);
	assert_int_equal(l.g_sched_sp, 56);
	assert_int_equal(l.g_sched_pc, 64);
	assert_int_equal(l.g_sched_bp, 104);
	assert_int_equal(l.m_curg, 192);
	assert_int_equal(l.g_stack_hi, 8);
	assert_true(goruntime_layout_of_version(1, 24, &l));
	assert_int_equal(l.m_curg, 192);
	assert_true(goruntime_layout_of_version(1, 25, &l));
	assert_int_equal(l.g_sched_bp, 96);
	assert_int_equal(l.m_curg, 184);
	assert_true(goruntime_layout_of_version(1, 26, &l));
	assert_int_equal(l.m_curg, 184);
	assert_int_equal(l.m_vdso_sp, 0);
	assert_false(goruntime_layout_of_version(1, 17, &l));
	assert_false(goruntime_layout_of_version(1, 27, &l));
	assert_false(goruntime_layout_of_version(2, 19, &l));
}

/* Go 1.19's runtime.systemstack, its first 46 bytes (objdump), and
 * gosave_systemstack_switch. */
static const uint8_t systemstack119[] = {
	0x48, 0x8b, 0x7c, 0x24, 0x08,                           /* MOVQ 0x8(SP), DI */
	0x64, 0x48, 0x8b, 0x04, 0x25, 0xf8, 0xff, 0xff, 0xff,   /* MOVQ FS:-8, AX */
	0x48, 0x8b, 0x58, 0x30,                                 /* MOVQ 0x30(AX), BX */
	0x48, 0x3b, 0x43, 0x50,                                 /* CMPQ 0x50(BX), AX */
	0x74, 0x5b,
	0x48, 0x8b, 0x13,                                       /* MOVQ 0(BX), DX */
	0x48, 0x39, 0xd0, 0x74, 0x53,
	0x48, 0x3b, 0x83, 0xc0, 0x00, 0x00, 0x00,               /* CMPQ 0xc0(BX), AX */
	0x75, 0x52,
	0xe8, 0xd2, 0xf1, 0xff, 0xff,
};
static const uint8_t gosave119[] = {
	0x4c, 0x8d, 0x0d, 0xd9, 0x0d, 0x00, 0x00,               /* LEAQ switch, R9 */
	0x4d, 0x89, 0x4e, 0x40,                                 /* MOVQ R9, 0x40(R14) */
	0x4c, 0x8d, 0x4c, 0x24, 0x08,                           /* LEAQ 0x8(SP), R9 */
	0x4d, 0x89, 0x4e, 0x38,                                 /* MOVQ R9, 0x38(R14) */
	0x49, 0xc7, 0x46, 0x58, 0x00, 0x00, 0x00, 0x00,         /* MOVQ $0, 0x58(R14) */
	0x49, 0x89, 0x6e, 0x68,                                 /* MOVQ BP, 0x68(R14) */
	0x4d, 0x8b, 0x4e, 0x50, 0x4d, 0x85, 0xc9, 0x74, 0x05, 0xc3,
};

static void test_code(void **state)
{
	(void)state;
	struct goruntime_layout l, bad;
	assert_true(goruntime_layout_of_version(1, 19, &l));
	assert_true(goruntime_code_agrees(&l, systemstack119, sizeof systemstack119, gosave119,
					  sizeof gosave119));
	/* Go 1.25's layout does not fit 1.19's code */
	assert_true(goruntime_layout_of_version(1, 25, &bad));
	assert_false(goruntime_code_agrees(&bad, systemstack119, sizeof systemstack119, gosave119,
					   sizeof gosave119));
	/* each offset the check covers, changed alone */
	uint32_t *fields[] = { &bad.g_m, &bad.m_curg, &bad.g_sched_sp, &bad.g_sched_pc,
			       &bad.g_sched_bp };
	for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
		bad = l;
		*fields[i] += 8;
		assert_false(goruntime_code_agrees(&bad, systemstack119, sizeof systemstack119,
						   gosave119, sizeof gosave119));
	}
	/* code cut short, or missing */
	assert_false(goruntime_code_agrees(&l, systemstack119, 20, gosave119, sizeof gosave119));
	assert_false(goruntime_code_agrees(&l, systemstack119, sizeof systemstack119, gosave119, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_code),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
