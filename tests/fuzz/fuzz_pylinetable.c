/* libFuzzer harness for pylinetable (a CPython location table: the
 * target's bytes). The input is a first line (4 bytes) and a table (the
 * rest, copied to a buffer of exactly its size, so a read past it is
 * AddressSanitizer's to see). Every code unit up to 256 is looked up: a
 * line is never below -2, and the units the table covers are a prefix
 * (once one is PYLINE_BAD, so is every later one); the older versions'
 * tables (co_lnotab, 3.10's co_linetable) read from the same bytes give a
 * line, PYLINE_NONE or PYLINE_BAD at every byte offset. Built and run by
 * make fuzz; replayed over corpus/pylinetable/ by make check. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pylinetable.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int32_t first;
	if (size < sizeof first)
		return 0;
	memcpy(&first, data, sizeof first);
	size_t len = size - sizeof first;
	uint8_t *table = malloc(len ? len : 1);
	if (!table)
		return 0;
	memcpy(table, data + sizeof first, len);
	int bad_from = -1;
	for (size_t i = 0; i < 256; i++) {
		int line = pylinetable_line(table, len, first, i);
		if (line < PYLINE_BAD || (bad_from >= 0 && line != PYLINE_BAD))
			abort();
		if (line == PYLINE_BAD && bad_from < 0)
			bad_from = (int)i;
		if (pylinetable_lnotab_line(table, len, first, i, true) < PYLINE_BAD ||
		    pylinetable_lnotab_line(table, len, first, i, false) < PYLINE_BAD ||
		    pylinetable_310_line(table, len, first, i) < PYLINE_BAD)
			abort();
	}
	free(table);
	return 0;
}
