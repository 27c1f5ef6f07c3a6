/* Unit tests for dwarfstruct (structure layouts from DWARF, as goruntime
 * and pydwarf read a runtime's): the test reads its own executable's
 * debug information (built with -g: unit_test_dwarfstruct_CFLAGS) and
 * finds the structures below, named as a structure type and as a typedef
 * of an anonymous one (CPython's objects are), with the offsets the
 * compiler gave them (offsetof), a nested member's structure through a
 * typedef and a const, and refuses what is not there: a name no structure
 * has, a member it lacks, a field wider than the room left in its
 * structure. */
#include "config.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "dwarfstruct.h"

struct dwst_inner {
	int a;
	long head;
	char tail[3];
};
typedef struct dwst_inner dwst_inner_t;
typedef struct {
	void *ob_type;
	const dwst_inner_t threads;
	double last;
} DwstObject;
struct dwst_outer {
	char pad[40];
	DwstObject obj;
	unsigned char flag;
};

/* (used, so the compiler keeps their types) */
struct dwst_outer dwst_keep;
DwstObject dwst_keep_obj;

static Dwarf *dw;
static int fd = -1;

static int setup(void **state)
{
	(void)state;
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	dw = fd >= 0 ? dwarf_begin(fd, DWARF_C_READ) : NULL;
	return dw ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	dwarf_end(dw);
	close(fd);
	return 0;
}

static void test_find_and_offsets(void **state)
{
	(void)state;
	const char *names[] = { "dwst_outer", "DwstObject", "dwst_no_such_struct", "dwst_inner_t" };
	Dwarf_Die found[4];
	bool have[4];
	assert_int_equal(dwarfstruct_find(dw, names, 4, found, have), 3);
	assert_true(have[0] && have[1] && !have[2] && have[3]);
	uint64_t size;
	assert_true(dwarfstruct_size(&found[0], &size));
	assert_int_equal(size, sizeof(struct dwst_outer));
	assert_true(dwarfstruct_size(&found[1], &size));
	assert_int_equal(size, sizeof(DwstObject));
	uint32_t off;
	assert_true(dwarfstruct_member(&found[0], "flag", 1, &off));
	assert_int_equal(off, offsetof(struct dwst_outer, flag));
	assert_true(dwarfstruct_member(&found[1], "last", 8, &off));
	assert_int_equal(off, offsetof(DwstObject, last));
	assert_true(dwarfstruct_member(&found[3], "head", 8, &off));
	assert_int_equal(off, offsetof(struct dwst_inner, head));
	/* a nested structure, through a typedef and a const */
	Dwarf_Die inner;
	assert_true(dwarfstruct_member_struct(&found[1], "threads", &off, &inner));
	assert_int_equal(off, offsetof(DwstObject, threads));
	assert_true(dwarfstruct_member(&inner, "head", 8, &off));
	assert_int_equal(off, offsetof(struct dwst_inner, head));
	assert_true(dwarfstruct_member_struct(&found[0], "obj", &off, &inner));
	assert_int_equal(off, offsetof(struct dwst_outer, obj));
	/* refused: no member, not a structure, too wide for the room left */
	assert_false(dwarfstruct_member(&found[0], "nothing", 0, &off));
	assert_false(dwarfstruct_member_struct(&found[1], "ob_type", &off, &inner));
	assert_false(dwarfstruct_member(&found[0], "flag", 64, &off));
	assert_false(dwarfstruct_member(&found[3], "tail", sizeof(struct dwst_inner), &off));
	(void)dwst_keep;
	(void)dwst_keep_obj;
}

static void test_none(void **state)
{
	(void)state;
	const char *names[] = { "dwst_outer" };
	Dwarf_Die found[1];
	bool have[1] = { true };
	assert_int_equal(dwarfstruct_find(NULL, names, 1, found, have), 0);
	assert_false(have[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find_and_offsets),
		cmocka_unit_test(test_none),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
