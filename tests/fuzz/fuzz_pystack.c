/* libFuzzer harness for pystack, the production read of a CPython
 * thread's Python frames at a stop (every byte the target's). The input
 * is a memory image mapped at a fixed address (reads outside it fail);
 * its first bytes also say where the interpreter's symbols are in it and
 * which version it is: byte 0 picks one of csampler's tables (2.7, 3.6 to
 * 3.12, the version its file's name would say) or, past them, a
 * Py_Version read from the image (3.13+: the layout the image then
 * publishes, pydebug). pystack_new_reader checks it as it checks a live
 * interpreter; when it takes it, three stops of a thread are captured
 * (the image as its stack: its thread state and frame stack chunk copied,
 * its code objects' headers read and named, the cache of them kept from
 * one stop to the next) and each spliced into a native walk. A capture
 * must stay within its room, make only Python frame addresses, and a
 * splice within its own; names are NUL-terminated (pynames). Built and
 * run by make fuzz; replayed over corpus/pystack/ by make check. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "address.h"
#include "fuzz_image.h"
#include "pynames.h"
#include "pystack.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ROOM 64u

static uint64_t at(const uint8_t *copy, size_t size, size_t field)
{
	uint32_t v;
	memcpy(&v, copy + 4 * field, sizeof v);
	return IMAGE_BASE + v % size;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned tables[][2] = { { 2, 7 }, { 3, 6 }, { 3, 7 }, { 3, 8 }, { 3, 9 },
					      { 3, 10 }, { 3, 11 }, { 3, 12 } };
	if (size < 24)
		return 0;
	uint8_t *copy = malloc(size);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	struct image im = { copy, size };
	unsigned pick = copy[0] % 10u;
	struct pystack_symbols syms = { .runtime = at(copy, size, 1), .code_type = at(copy, size, 2),
					.eval_start = 0x5000, .eval_end = 0x6000 };
	if (pick < 8) {
		syms.name_major = tables[pick][0];
		syms.name_minor = tables[pick][1];
	} else {
		syms.version = at(copy, size, 3);
	}
	int32_t tid;
	memcpy(&tid, copy + 16, sizeof tid);
	struct pynames *names = pynames_new();
	enum pystack_status status;
	unsigned major, minor;
	struct pystack *ps = names ? pystack_new_reader(read_image, &im, &syms, NULL, names, &status,
							&major, &minor) : NULL;
	if (ps && status != PYSTACK_ON)
		abort();
	struct pystack_frames *frames = pystack_frames_new();
	for (int stop = 0; ps && frames && stop < 3; stop++) {
		uint64_t out[ROOM];
		bool full;
		unsigned n = pystack_capture(ps, tid, copy, IMAGE_BASE, size, frames);
		struct pystack_run run = pystack_frames_run(frames);
		if (n > PYSTACK_MAX_FRAMES || n != run.n)
			abort();
		for (unsigned i = 0; i < n; i++)
			if (!addr_is_runtime(run.addrs[i]))
				abort();
		uint64_t native[6] = { 0x1101, 0x5101, 0x2101, 0x5101, 0x5101, 0x3101 };
		uint64_t sp[6] = { IMAGE_BASE, IMAGE_BASE + size / 5, IMAGE_BASE + 2 * (size / 5),
				   IMAGE_BASE + 3 * (size / 5), IMAGE_BASE + 4 * (size / 5),
				   IMAGE_BASE + size };
		unsigned k = pystack_splice(native, sp, 6, &run, 0x5000, 0x6000, stop == 1, out, ROOM,
					    &full);
		if (k > ROOM)
			abort();
	}
	pystack_frames_free(frames);
	pystack_free(ps);
	pynames_free(names);
	free(copy);
	return 0;
}
