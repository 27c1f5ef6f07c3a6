/* libFuzzer harness for pyframes (CPython's frame chains, read from a
 * target's memory, all of it the target's). The input is a memory image
 * mapped at a fixed address (reads outside it fail) whose first 8 bytes
 * are also the runtime's address and the next 4 a thread id; the chain of
 * that thread is read with the layout the next byte picks (2.7, 3.6 to
 * 3.12: csampler's tables), and each frame's code object with it (and the count of thread states made, as a capture reads it). The read must end (loops are cut), stay within the frames
 * asked for, and make names that are NUL-terminated within their size.
 * Built and run by make fuzz; replayed over corpus/pyframes/ by make
 * check. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_image.h"
#include "pyframes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 12)
		return 0;
	uint8_t *copy = malloc(size);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	struct image im = { copy, size };
	uint64_t runtime;
	int32_t tid;
	memcpy(&runtime, copy, 8);
	memcpy(&tid, copy + 8, 4);
	runtime = IMAGE_BASE + runtime % size;   /* mostly inside the image */
	const struct py_layout *l = pyframes_layout(3, 11);
	struct py_frame frames[16];
	bool cut;
	uint64_t made;
	(void)pyframes_threads_made(l, read_image, &im, runtime, &made);
	int n = pyframes_thread(l, read_image, &im, runtime, tid, frames, 16, &cut);
	if (n > 16 || n < -1)
		abort();
	for (int i = 0; i < n; i++) {
		struct py_code c;
		int line;
		if (pyframes_code(l, read_image, &im, frames[i].code, frames[i].unit, &c, &line) == 0 &&
		    (!memchr(c.qualname, 0, sizeof c.qualname) || !memchr(c.filename, 0, sizeof c.filename)))
			abort();
	}
	free(copy);
	return 0;
}
