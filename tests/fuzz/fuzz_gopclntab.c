/* libFuzzer harness for gopclntab (a Go binary's .gopclntab comes from the
 * target's files: anything): the input is a section; when it parses, a
 * few addresses around its functions are looked up. A name or file found
 * lies inside the input and is not longer than GOPCLNTAB_NAME_MAX; a
 * function's entry is at or below the address asked; a function read by
 * its index has its name inside the input and a code range that is not
 * empty. Built and run by make
 * fuzz; replayed over corpus/gopclntab/ by make check. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "gopclntab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_inside(const uint8_t *data, size_t size, const char *p, size_t n)
{
	if (!p)
		return;
	const uint8_t *u = (const uint8_t *)p;
	if (u < data || u + n > data + size || n == 0 || n > GOPCLNTAB_NAME_MAX)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gopclntab t;
	if (!gopclntab_parse(&t, data, size, 0x401000))
		return 0;
	uint64_t starts[16];
	size_t n = gopclntab_entries(&t, starts, 16);
	for (size_t i = 0; i < n; i++)
		for (uint64_t d = 0; d < 3; d++) {
			struct gopclntab_func f;
			uint64_t a = starts[i] + d * 7;
			if (!gopclntab_find(&t, a, &f))
				continue;
			check_inside(data, size, f.name, f.name_len);
			check_inside(data, size, f.file, f.file_len);
			if (f.entry > a || (!f.file && (f.line || f.start_line)))
				abort();
		}
	for (uint64_t i = 0; i < t.nfunc && i < 64; i++) {
		struct gopclntab_entry e;
		if (!gopclntab_function(&t, i, &e))
			continue;
		check_inside(data, size, e.name, e.name_len);
		if (!e.name || e.end <= e.entry)
			abort();
	}
	return 0;
}
