/* Unit tests for runtime.h's tables (runtimes.h lists them): every kind
 * has a table with the calls the unwinder, the recorder, the symbolizer
 * and --dump make; a runtime frame's address keeps its kind and id and
 * is looked up as it is; CPython names its frames through its table and
 * says, through describe, what its found state allows (once, or with -v),
 * as Go does; a module that is not the runtime's is passed over without
 * being read. */
#include "config.h"
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "address.h"
#include "goruntime.h"
#include "gostack.h"
#include "pynames.h"
#include "pystack.h"
#include "runtimes.h"

static void test_every_kind_has_a_whole_table(void **state)
{
	(void)state;
	for (unsigned k = 0; k < RUNTIME_KINDS; k++) {
		const struct runtime_ops *ops = runtime_ops_of(k);
		assert_non_null(ops);
		assert_true(ops->name && ops->name[0]);
		assert_non_null(ops->open);
		assert_non_null(ops->close);
		assert_non_null(ops->forget_thread);
		assert_non_null(ops->frames_new);
		assert_non_null(ops->frames_free);
		assert_non_null(ops->frames_clear);
		assert_non_null(ops->frames_count);
		assert_non_null(ops->capture);
		assert_non_null(ops->describe);
		/* a names table is made, freed and read together */
		assert_int_equal(ops->names_new != NULL, ops->names_free != NULL);
		assert_int_equal(ops->names_new != NULL, ops->frame_name != NULL);
		void *f = ops->frames_new(4096);
		assert_non_null(f);
		assert_int_equal(ops->frames_count(f), 0);
		ops->frames_clear(f);
		ops->frames_clear(NULL);
		assert_int_equal(ops->frames_count(f), 0);
		ops->frames_free(f);
	}
	assert_null(runtime_ops_of(RUNTIME_KINDS));
	assert_null(runtime_ops_of(255));
	assert_string_equal(runtime_ops_of(RUNTIME_PYTHON)->name, "python");
}

static void test_addresses_keep_kind_and_id(void **state)
{
	(void)state;
	for (unsigned k = 0; k < RUNTIME_KINDS; k++) {
		uint64_t a = addr_runtime(k, 123456);
		assert_true(addr_is_runtime(a));
		assert_int_equal(addr_runtime_kind(a), k);
		assert_int_equal(addr_runtime_id(a), 123456);
		assert_true(addr_lookup_pc(a) == a);    /* (not a return address) */
		assert_false(addr_is_kernel(a));
		assert_false(addr_is_runtime(a | ADDR_ACTIVATION));
		assert_false(addr_is_runtime(addr_with_tag(a, 5)));
	}
	assert_true(addr_runtime(RUNTIME_PYTHON, 7) == (ADDR_RUNTIME | 7));
	assert_false(addr_is_runtime(0x7fffffffffffull));
	assert_false(addr_is_runtime(0xffffffff81000000ull));
}

static void test_python_names_its_frames(void **state)
{
	(void)state;
	const struct runtime_ops *ops = runtime_ops_of(RUNTIME_PYTHON);
	struct pynames *names = ops->names_new();
	assert_non_null(names);
	uint32_t id = pynames_frame(names, pynames_string(names, "Job.run"),
				    pynames_string(names, "/srv/job.py"), 10, 14);
	uint32_t cut = pynames_frame(names, pynames_string(names, PYSTACK_CUT_NAME),
				     pynames_string(names, ""), 0, 0);
	struct runtime_frame f;
	assert_true(ops->frame_name(names, id, &f));
	assert_string_equal(f.function, "Job.run");
	assert_string_equal(f.file, "/srv/job.py");
	assert_int_equal(f.first_line, 10);
	assert_int_equal(f.line, 14);
	assert_true(ops->frame_name(names, cut, &f));
	assert_null(f.file);                    /* (a mark: no file) */
	assert_false(ops->frame_name(names, 99, &f));
	ops->names_free(names);
}

static void test_describe(void **state)
{
	(void)state;
	const struct runtime_ops *py = runtime_ops_of(RUNTIME_PYTHON);
	const struct runtime_ops *go = runtime_ops_of(RUNTIME_GO);
	char text[512];
	unsigned reason = 99;
	struct runtime_found f = { .found = true, .status = PYSTACK_ON,
				   .source = PYSTACK_LAYOUT_INTERPRETER, .major = 3, .minor = 14 };
	assert_int_equal(py->describe(&f, false, &reason, text, sizeof text), RUNTIME_SAY_VERBOSE);
	assert_string_equal(text, "runs CPython 3.14: its Python frames are read, laid out as the "
			    "interpreter publishes (_Py_DebugOffsets)");
	/* the kernel's samples cannot read them, whatever the layout */
	assert_int_equal(py->describe(&f, true, &reason, text, sizeof text), RUNTIME_SAY_ONCE);
	assert_non_null(strstr(text, "--backend=perf cannot read its Python frames"));
	unsigned kernel_reason = reason;
	f.status = PYSTACK_UNKNOWN_VERSION;
	f.minor = 16;
	assert_int_equal(py->describe(&f, false, &reason, text, sizeof text), RUNTIME_SAY_ONCE);
	assert_true(reason < 32 && reason != kernel_reason);
	assert_string_equal(text, "runs CPython 3.16, whose frame layout csampler does not know: "
			    "its stacks show the interpreter's C functions");
	/* a long text is cut, never overrun */
	char small[16];
	memset(small, 'x', sizeof small);
	(void)py->describe(&f, false, &reason, small, 8);
	assert_int_equal(strlen(small), 7);
	assert_int_equal(small[8], 'x');

	struct runtime_found g = { .found = true, .source = GORUNTIME_TABLE, .major = 1,
				   .minor = 19 };
	assert_int_equal(go->describe(&g, false, &reason, text, sizeof text), RUNTIME_SAY_VERBOSE);
	assert_non_null(strstr(text, "runs Go 1.19 without debug information: its goroutines are "
			       "followed"));
	assert_int_equal(go->describe(&g, true, &reason, text, sizeof text), RUNTIME_SAY_NOTHING);
	g.source = GORUNTIME_NO_VERSION;
	g.major = g.minor = 0;
	assert_int_equal(go->describe(&g, false, &reason, text, sizeof text), RUNTIME_SAY_ONCE);
	assert_int_equal(reason, GORUNTIME_NO_VERSION);
	assert_non_null(strstr(text, "runs Go without debug information and names no release"));
}

/* Not the runtime's module: passed over before anything of it is read
 * (no ELF given: a read would crash). */
static void test_open_passes_over_other_modules(void **state)
{
	(void)state;
	struct runtime_module m = { .pid = 1, .path = "/usr/lib/x86_64-linux-gnu/libc.so.6" };
	for (unsigned k = 0; k < RUNTIME_KINDS; k++) {
		struct runtime_found f = { 0 };
		assert_null(runtime_ops_of(k)->open(&m, &f));
		assert_false(f.found);
	}
	const struct runtime_ops *py = runtime_ops_of(RUNTIME_PYTHON);
	assert_true(py->may_hold("/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0"));
	assert_true(py->may_hold("/usr/bin/python2.7"));
	assert_false(py->may_hold("/usr/bin/perl"));
	assert_null(runtime_ops_of(RUNTIME_GO)->may_hold);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_kind_has_a_whole_table),
		cmocka_unit_test(test_addresses_keep_kind_and_id),
		cmocka_unit_test(test_python_names_its_frames),
		cmocka_unit_test(test_describe),
		cmocka_unit_test(test_open_passes_over_other_modules),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
