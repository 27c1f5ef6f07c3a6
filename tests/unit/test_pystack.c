/* Unit tests for pystack_splice (Python frames put in place of the
 * evaluation loop's frames of a native walk), pynames (the ids of a
 * process's Python frames) and pyframes_chain's bound on a layout (a fake
 * memory). Native addresses here are made up: EVAL lies
 * in the evaluation loop's range [0x5000, 0x6000), C1..C3 and MAIN
 * outside it; P0..P3 are Python frames (addr_python ids). */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "address.h"
#include "pydebug.h"
#include "pyframes.h"
#include "pynames.h"
#include "pystack.h"

#define EVAL_START 0x5000u
#define EVAL_END 0x6000u
#define EVAL 0x5101u                 /* a return address into the loop */
#define C1 0x1101u
#define C2 0x2101u
#define C3 0x3101u
#define MAIN 0x4101u
#define P(i) addr_runtime(RUNTIME_PYTHON, i)

static unsigned splice(const uint64_t *native, unsigned n, const uint64_t *py, const bool *entry,
		       unsigned npy, bool walk_cut, uint64_t *out, unsigned max, bool *full)
{
	struct pystack_run run = { .addrs = py, .entry = entry, .n = npy };
	return pystack_splice(native, NULL, n, &run, EVAL_START, EVAL_END, walk_cut, out, max, full);
}

static void expect(const uint64_t *got, unsigned n, const uint64_t *want, unsigned nwant)
{
	assert_int_equal(n, nwant);
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(got[i], want[i]);
}

/* Two loops: the inner runs P0 and P1 (entered at P1), the outer P2. */
static void test_each_loop_runs_its_frames(void **state)
{
	(void)state;
	uint64_t native[] = { C1 | ADDR_ACTIVATION, C2, EVAL, C3, EVAL, MAIN };
	uint64_t py[] = { P(0), P(1), P(2) };
	bool entry[] = { false, true, true };
	uint64_t out[16];
	bool full;
	unsigned n = splice(native, 6, py, entry, 3, false, out, 16, &full);
	uint64_t want[] = { C1 | ADDR_ACTIVATION, C2, P(0), P(1), C3, P(2), MAIN };
	expect(out, n, want, 7);
	assert_false(full);
}

/* The leaf in the loop itself (its activation address): Python code ran. */
static void test_leaf_in_the_loop(void **state)
{
	(void)state;
	uint64_t native[] = { (EVAL - 1) | ADDR_ACTIVATION, C3, EVAL, MAIN };
	uint64_t py[] = { P(0), P(1), P(2) };
	bool entry[] = { true, false, true };
	uint64_t out[16];
	bool full;
	unsigned n = splice(native, 4, py, entry, 3, false, out, 16, &full);
	uint64_t want[] = { P(0), C3, P(1), P(2), MAIN };
	expect(out, n, want, 5);
}

/* More loops than Python frames: the outer loop keeps its native frame. */
static void test_loop_without_frames_stays(void **state)
{
	(void)state;
	uint64_t native[] = { EVAL, C1, EVAL, MAIN };
	uint64_t py[] = { P(0) };
	bool entry[] = { true };
	uint64_t out[16];
	bool full;
	unsigned n = splice(native, 4, py, entry, 1, false, out, 16, &full);
	uint64_t want[] = { P(0), C1, EVAL, MAIN };
	expect(out, n, want, 4);
}

/* Python frames left when the walk ends: the stack's only if it was cut. */
static void test_frames_left_over(void **state)
{
	(void)state;
	uint64_t native[] = { C1, EVAL, C2 };
	uint64_t py[] = { P(0), P(1), P(2) };
	bool entry[] = { true, false, true };
	uint64_t out[16];
	bool full;
	unsigned n = splice(native, 3, py, entry, 3, false, out, 16, &full);
	uint64_t complete[] = { C1, P(0), C2 };
	expect(out, n, complete, 3);
	n = splice(native, 3, py, entry, 3, true, out, 16, &full);
	uint64_t cut[] = { C1, P(0), C2, P(1), P(2) };
	expect(out, n, cut, 5);
}

/* A chain without an entry frame at its end: the loop takes what there is. */
static void test_no_entry_at_the_end(void **state)
{
	(void)state;
	uint64_t native[] = { EVAL, MAIN };
	uint64_t py[] = { P(0), P(1) };
	bool entry[] = { false, false };
	uint64_t out[16];
	bool full;
	unsigned n = splice(native, 2, py, entry, 2, false, out, 16, &full);
	uint64_t want[] = { P(0), P(1), MAIN };
	expect(out, n, want, 3);
}

/* At most MAX frames: FULL says some were left out, never a write past. */
static void test_bounded(void **state)
{
	(void)state;
	uint64_t native[] = { C1, EVAL, C2, MAIN };
	uint64_t py[] = { P(0), P(1), P(2) };
	bool entry[] = { false, false, true };
	uint64_t out[4] = { 0 };
	bool full;
	for (unsigned max = 0; max <= 3; max++) {
		unsigned n = splice(native, 4, py, entry, 3, false, out, max, &full);
		assert_int_equal(n, max);
		assert_true(full);
	}
	unsigned n = splice(native, 4, py, entry, 3, false, out, 4, &full);
	uint64_t want[] = { C1, P(0), P(1), P(2) };
	expect(out, n, want, 4);
	assert_true(full);
	n = splice(native, 4, py, entry, 0, false, out, 4, &full);
	uint64_t unchanged[] = { C1, EVAL, C2, MAIN };
	expect(out, n, unchanged, 4);
	assert_false(full);
}

/* A frame already Python (its id inside the loop's range) is not a loop. */
static void test_python_address_not_a_loop(void **state)
{
	(void)state;
	uint64_t native[] = { addr_runtime(RUNTIME_PYTHON, EVAL), MAIN };
	uint64_t py[] = { P(7) };
	bool entry[] = { true };
	uint64_t out[4];
	bool full;
	unsigned n = splice(native, 2, py, entry, 1, false, out, 4, &full);
	uint64_t want[] = { addr_runtime(RUNTIME_PYTHON, EVAL), MAIN };
	expect(out, n, want, 2);
	assert_true(addr_is_runtime(P(0)));
	assert_false(addr_is_runtime(P(0) | ADDR_ACTIVATION));
	assert_false(addr_is_runtime(0x7fffffffffffull));
	assert_int_equal(addr_lookup_pc(P(5)), P(5));
	assert_int_equal(addr_runtime_id(P(5)), 5);
}

static void test_pynames(void **state)
{
	(void)state;
	struct pynames *t = pynames_new();
	assert_non_null(t);
	const char *q = pynames_string(t, "Worker.run"), *f = pynames_string(t, "/srv/app.py");
	assert_ptr_equal(q, pynames_string(t, "Worker.run"));
	assert_ptr_not_equal(q, f);
	uint32_t a = pynames_frame(t, q, f, 10, 12), b = pynames_frame(t, q, f, 10, 13);
	assert_int_equal(a, 0);
	assert_int_equal(b, 1);
	assert_int_equal(pynames_frame(t, q, f, 10, 12), a);
	/* many: ids dense, each found again after the table grew */
	char name[32];
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof name, "f%d", i);
		assert_int_equal(pynames_frame(t, pynames_string(t, name), f, i, i + 1), (uint32_t)i + 2);
	}
	for (int i = 0; i < 5000; i += 97) {
		snprintf(name, sizeof name, "f%d", i);
		assert_int_equal(pynames_frame(t, pynames_string(t, name), f, i, i + 1), (uint32_t)i + 2);
	}
	const struct pyname *p = pynames_get(t, b);
	assert_non_null(p);
	assert_string_equal(p->qualname, "Worker.run");
	assert_string_equal(p->filename, "/srv/app.py");
	assert_int_equal(p->first_line, 10);
	assert_int_equal(p->line, 13);
	assert_null(pynames_get(t, 5002));
	assert_null(pynames_get(NULL, 0));
	assert_int_equal(pynames_frame(t, NULL, f, 1, 1), PYNAMES_FULL);
	assert_int_equal(pynames_count(t), 5002);
	pynames_free(t);
}

/* Strings past PYNAMES_MAX_BYTES are refused; those already there are
 * still found. */
/* Full (PYNAMES_MAX frames): a new frame gets PYNAMES_FULL, and every frame
 * already there still gets its id (the capacity was checked before the
 * lookup, so a full table refused known frames too and cut every Python
 * stack of the process from then on). */
static void test_pynames_full_still_names(void **state)
{
	(void)state;
	struct pynames *t = pynames_new();
	assert_non_null(t);
	const char *q = pynames_string(t, "f"), *f = pynames_string(t, "/a.py");
	for (uint32_t i = 0; i < PYNAMES_MAX; i++)
		assert_int_equal(pynames_frame(t, q, f, 1, (int)i), i);
	assert_int_equal(pynames_frame(t, q, f, 1, -1), PYNAMES_FULL);
	assert_int_equal(pynames_frame(t, q, f, 1, 0), 0);
	assert_int_equal(pynames_frame(t, q, f, 1, (int)PYNAMES_MAX - 1), PYNAMES_MAX - 1);
	assert_int_equal(pynames_count(t), PYNAMES_MAX);
	pynames_free(t);
}

/* A fake target's memory: one buffer at FAKE_BASE. */
#define FAKE_BASE 0x10000u
struct fake_mem {
	uint8_t bytes[0x3000];
};

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct fake_mem *m = ctx;
	if (addr < FAKE_BASE || addr - FAKE_BASE > sizeof m->bytes ||
	    len > sizeof m->bytes - (addr - FAKE_BASE))
		return -1;
	memcpy(buf, m->bytes + (addr - FAKE_BASE), len);
	return 0;
}

static void fake_put(struct fake_mem *m, uint64_t addr, uint64_t v)
{
	memcpy(m->bytes + (addr - FAKE_BASE), &v, sizeof v);
}

/* A layout whose frame fields lie beyond what a capture reads of a frame
 * at once (one read from DWARF may be so) says so by its span (pystack_new
 * refuses it), and a chain read with it takes no frame and is cut; 3.11's
 * reads the one frame the fake thread has. */
static void test_frame_span_bounded(void **state)
{
	(void)state;
	struct py_layout l = *pyframes_layout(3, 11);
	static struct fake_mem m;
	const uint64_t ts = FAKE_BASE, cframe = FAKE_BASE + 0x1000, frame = FAKE_BASE + 0x2000;
	memset(&m, 0, sizeof m);
	fake_put(&m, ts + l.tstate_native_thread_id, 42);
	fake_put(&m, ts + l.tstate_cframe, cframe);
	fake_put(&m, cframe + l.cframe_current_frame, frame);
	fake_put(&m, frame + l.frame_code, 0x5000);
	struct py_frame out[4];
	bool cut;
	assert_true(pyframes_frame_span(&l) <= PYFRAMES_FRAME_READ_MAX);
	assert_int_equal(pyframes_chain(&l, fake_read, &m, ts, 42, out, 4, &cut), 1);
	assert_false(cut);
	assert_int_equal(out[0].code, 0x5000);
	l.frame_previous = PYFRAMES_FRAME_READ_MAX;
	assert_true(pyframes_frame_span(&l) > PYFRAMES_FRAME_READ_MAX);
	assert_int_equal(pyframes_chain(&l, fake_read, &m, ts, 42, out, 4, &cut), 0);
	assert_true(cut);
}

static void test_pynames_bytes_bounded(void **state)
{
	(void)state;
	struct pynames *t = pynames_new();
	size_t len = 64 * 1024;
	char *s = malloc(len + 1);
	assert_non_null(s);
	memset(s, 'q', len);
	s[len] = '\0';
	const char *first = NULL;
	size_t kept = 0;
	for (size_t i = 0; i < PYNAMES_MAX_BYTES / len + 2; i++) {
		snprintf(s, 24, "%020zu", i);
		s[20] = 'q';
		const char *c = pynames_string(t, s);
		if (!c)
			break;
		first = first ? first : c;
		kept++;
	}
	assert_true(kept > 0 && kept < PYNAMES_MAX_BYTES / len + 2);
	assert_true(kept * (len + 1) <= PYNAMES_MAX_BYTES);
	snprintf(s, 24, "%020zu", (size_t)0);
	s[20] = 'q';
	assert_ptr_equal(pynames_string(t, s), first);
	free(s);
	pynames_free(t);
}

/* 3.12+: the loop's own frame (owner C stack, or interpreter) is no
 * Python frame; the one before it is an entry, with its address; a base
 * frame after an entry does not move it; the outermost is an entry. */
static void test_owner_chain_marks_entries(void **state)
{
	(void)state;
	const struct py_layout *l = pyframes_layout(3, 12);
	static struct fake_mem m;
	const uint64_t ts = FAKE_BASE, cframe = FAKE_BASE + 0x100;
	uint64_t f[6];
	for (unsigned i = 0; i < 6; i++)
		f[i] = FAKE_BASE + 0x1000 + 0x100 * i;
	memset(&m, 0, sizeof m);
	fake_put(&m, ts + l->tstate_native_thread_id, 42);
	fake_put(&m, ts + l->tstate_cframe, cframe);
	fake_put(&m, cframe + l->cframe_current_frame, f[0]);
	/* P, P, loop's own, P, loop's own, base */
	uint8_t owner[6] = { 0, 1, 3, 0, 3, 3 };
	for (unsigned i = 0; i < 6; i++) {
		fake_put(&m, f[i] + l->frame_code, 0x7000 + 0x100 * i + (i == 3 ? 1 : 0));
		fake_put(&m, f[i] + l->frame_previous, i < 5 ? f[i + 1] : 0);
		m.bytes[f[i] + l->frame_owner - FAKE_BASE] = owner[i];
	}
	struct py_frame out[8];
	bool cut;
	assert_int_equal(pyframes_chain(l, fake_read, &m, ts, 42, out, 8, &cut), 3);
	assert_false(cut);
	assert_int_equal(out[0].code, 0x7000);
	assert_false(out[0].entry);
	assert_true(out[1].entry);
	assert_int_equal(out[1].loop, f[2]);
	assert_int_equal(out[2].code, 0x7300);   /* (a tagged reference's tag cleared) */
	assert_true(out[2].entry);
	assert_int_equal(out[2].loop, f[4]);
}

/* The loop that ran a run is the native frame whose stack frame holds the
 * run's loop address, wherever its pc is (a cold part no symbol covers). */
static void test_splice_by_stack_frame(void **state)
{
	(void)state;
	uint64_t cold = 0x9101;
	uint64_t native[] = { C1 | ADDR_ACTIVATION, cold, C3, cold, MAIN };
	uint64_t sp[] = { 0x7000, 0x7100, 0x7400, 0x7500, 0x7900 };
	uint64_t py[] = { P(0), P(1), P(2) };
	bool entry[] = { false, true, true };
	uint64_t loop[] = { 0, 0x7180, 0x7600 };
	struct pystack_run run = { .addrs = py, .entry = entry, .loop = loop, .n = 3 };
	uint64_t out[16];
	bool full;
	unsigned n = pystack_splice(native, sp, 5, &run, EVAL_START, EVAL_END, false, out, 16, &full);
	uint64_t want[] = { C1 | ADDR_ACTIVATION, P(0), P(1), C3, P(2), MAIN };
	expect(out, n, want, 6);
	/* a loop address outside the walk's stack: the pc decides */
	uint64_t native2[] = { C1 | ADDR_ACTIVATION, EVAL, MAIN };
	uint64_t loop2[] = { 0, 0x100, 0x200 };
	run.loop = loop2;
	n = pystack_splice(native2, sp, 3, &run, EVAL_START, EVAL_END, true, out, 16, &full);
	uint64_t want2[] = { C1 | ADDR_ACTIVATION, P(0), P(1), MAIN, P(2) };
	expect(out, n, want2, 5);
}

/* _Py_DebugOffsets as 3.14 lays them out, with 3.14.10's values where a
 * layout reads them. */
static void debug_offsets_314(uint8_t *b, unsigned minor)
{
	memset(b, 0, PYDEBUG_READ);
	memcpy(b, "xdebugpy", 8);
	uint64_t version = (UINT64_C(3) << 24) | ((uint64_t)minor << 16) | 0xa0;
	memcpy(b + 8, &version, 8);
	const struct { uint16_t at; uint64_t v; } f[] = {
		{ 40, 0x28 }, { 48, 0x1d000 }, { 64, 0x8 }, { 72, 0x1cb0 },
		{ 176, 0x300 }, { 192, 0x8 }, { 208, 0x48 }, { 224, 0x98 }, { 232, 0xe8 },
		{ 248, 0x58 }, { 256, 0x8 }, { 264, 0x0 }, { 272, 0x38 }, { 288, 0x4a },
		{ 312, 0xd8 }, { 320, 0x70 }, { 336, 0x80 }, { 344, 0x88 }, { 352, 0x44 },
		{ 384, 0xd0 }, { 400, 16 }, { 408, 8 }, { 416, 0x3a0 }, { 424, 0x18 },
		{ 592, 0x28 }, { 600, 0x10 }, { 608, 0x20 },
		{ 616, 0x50 }, { 624, 0x20 }, { 632, 0x10 }, { 640, 0x28 },
	};
	for (size_t i = 0; i < sizeof f / sizeof *f; i++)
		memcpy(b + f[i].at, &f[i].v, 8);
}

static void test_pydebug_layout(void **state)
{
	(void)state;
	uint8_t b[PYDEBUG_READ];
	struct py_layout l;
	debug_offsets_314(b, 14);
	assert_int_equal(pydebug_layout(b, sizeof b, 3, 14, &l), PYDEBUG_OK);
	assert_int_equal(l.frames, PY_FRAMES_OWNER);
	assert_true(l.frame_in_tstate);
	assert_int_equal(l.tstate_cframe, 0x48);
	assert_int_equal(l.tstate_native_thread_id, 0x98);
	assert_int_equal(l.tstate_datastack_top, 0xf0);
	assert_int_equal(l.interp_threads_next_id, 0x1ca8);
	assert_int_equal(l.frame_owner, 0x4a);
	assert_int_equal(l.code_code_adaptive, 0xd0);
	assert_int_equal(l.ascii_data, 0x28);
	assert_int_equal(l.compact_data, 0x38);
	assert_true(pyframes_frame_span(&l) <= PYFRAMES_FRAME_READ_MAX);
	/* another version than Py_Version's, no cookie, a short read */
	assert_int_equal(pydebug_layout(b, sizeof b, 3, 13, &l), PYDEBUG_NONE);
	assert_int_equal(pydebug_layout(b, sizeof b - 1, 3, 14, &l), PYDEBUG_NONE);
	b[0] = 'y';
	assert_int_equal(pydebug_layout(b, sizeof b, 3, 14, &l), PYDEBUG_NONE);
	/* free-threaded */
	debug_offsets_314(b, 14);
	b[16] = 1;
	assert_int_equal(pydebug_layout(b, sizeof b, 3, 14, &l), PYDEBUG_FREE_THREADED);
	/* an offset beyond its structure, an object header of another size */
	debug_offsets_314(b, 14);
	uint64_t beyond = 0x58;
	memcpy(b + 288, &beyond, 8);
	assert_int_equal(pydebug_layout(b, sizeof b, 3, 14, &l), PYDEBUG_UNFIT);
	debug_offsets_314(b, 14);
	uint64_t object = 24;
	memcpy(b + 400, &object, 8);
	assert_int_equal(pydebug_layout(b, sizeof b, 3, 14, &l), PYDEBUG_UNFIT);
	/* a later version is read as the newest known is (3.15's positions:
	 * 3.14's there do not hold together) */
	debug_offsets_314(b, 16);
	assert_int_equal(pydebug_layout(b, sizeof b, 3, 16, &l), PYDEBUG_UNFIT);
}

/* The version a file's name says, before 3.11 the interpreter's only
 * word of it: python3.8, libpython3.6m.so.1.0, libpython2.7.so; none in
 * python3, libpython3.so (the stable ABI's), python3.x-config or others. */
static void test_name_version(void **state)
{
	(void)state;
	static const struct { const char *path; unsigned major, minor; } ok[] = {
		{ "/usr/bin/python3.8", 3, 8 },
		{ "/root/.pyenv/versions/3.6.15/lib/libpython3.6m.so.1.0", 3, 6 },
		{ "libpython2.7.so", 2, 7 },
		{ "/usr/lib/x86_64-linux-gnu/libpython3.10.so.1.0", 3, 10 },
		{ "/usr/bin/python3.13t", 3, 13 },
		{ "python3.11d", 3, 11 },
	};
	static const char *const none[] = { "/usr/bin/python3", "/usr/lib/libpython3.so",
		"/usr/bin/python3.8-config", "/usr/bin/python", "/usr/bin/pythonista3.8",
		"python3.", "python3.1234", NULL };
	unsigned major, minor;
	for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
		assert_true(pystack_name_version(ok[i].path, &major, &minor));
		assert_int_equal(major, ok[i].major);
		assert_int_equal(minor, ok[i].minor);
	}
	for (size_t i = 0; none[i]; i++)
		assert_false(pystack_name_version(none[i], &major, &minor));
	assert_false(pystack_name_version(NULL, &major, &minor));
}

/* Py_GetVersion's text in a .bss: at a string's start, one version. */
static bool version_in(const char *bytes, size_t len, unsigned *major, unsigned *minor)
{
	return pystack_version_text((const uint8_t *)bytes, len, major, minor);
}

static void test_version_text(void **state)
{
	(void)state;
	unsigned ma = 0, mi = 0;
	static const char v38[] = "3.8.18 (default, May  9 2026, 07:33:04) \n[GCC 12.2.0]";
	assert_true(version_in(v38, sizeof v38 - 1, &ma, &mi));
	assert_int_equal(ma, 3);
	assert_int_equal(mi, 8);
	static const char after[] = "\x01\x02\0\0002.7.18 (default, Jan 1)\0\0";
	assert_true(version_in(after, sizeof after - 1, &ma, &mi));
	assert_int_equal(ma, 2);
	assert_int_equal(mi, 7);
	static const char rc[] = "\0003.10.0rc2+ (heads/3.10:abc)";
	assert_true(version_in(rc, sizeof rc - 1, &ma, &mi));
	assert_int_equal(mi, 10);
	/* the same version twice: one */
	static const char twice[] = "3.9.1 (a)\0003.9.1 (a)";
	assert_true(version_in(twice, sizeof twice - 1, &ma, &mi));
	assert_int_equal(mi, 9);
	/* not at a string's start, not followed by " (", another major, two
	 * versions, cut short, three digits: none */
	static const char inside[] = "x3.8.18 (default)";
	assert_false(version_in(inside, sizeof inside - 1, &ma, &mi));
	static const char bare[] = "3.8.18\0lib/python3.8";
	assert_false(version_in(bare, sizeof bare - 1, &ma, &mi));
	static const char two_six[] = "2.6.9 (r269)";
	assert_false(version_in(two_six, sizeof two_six - 1, &ma, &mi));
	static const char both[] = "3.8.1 (a)\0003.9.1 (b)";
	assert_false(version_in(both, sizeof both - 1, &ma, &mi));
	static const char cut[] = "3.8.18 ";
	assert_false(version_in(cut, sizeof cut - 1, &ma, &mi));
	assert_false(version_in("3.8.", 4, &ma, &mi));
	static const char wide[] = "3.123.1 (x)";
	assert_false(version_in(wide, sizeof wide - 1, &ma, &mi));
	assert_false(version_in("", 0, &ma, &mi));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_loop_runs_its_frames),
		cmocka_unit_test(test_leaf_in_the_loop),
		cmocka_unit_test(test_loop_without_frames_stays),
		cmocka_unit_test(test_frames_left_over),
		cmocka_unit_test(test_no_entry_at_the_end),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_python_address_not_a_loop),
		cmocka_unit_test(test_pynames),
		cmocka_unit_test(test_pynames_bytes_bounded),
		cmocka_unit_test(test_pynames_full_still_names),
		cmocka_unit_test(test_frame_span_bounded),
		cmocka_unit_test(test_owner_chain_marks_entries),
		cmocka_unit_test(test_splice_by_stack_frame),
		cmocka_unit_test(test_pydebug_layout),
		cmocka_unit_test(test_name_version),
		cmocka_unit_test(test_version_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
