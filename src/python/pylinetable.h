/* pylinetable: CPython's location table (a code object's co_linetable,
 * Python 3.11 and later) read for the source line of one instruction,
 * the line a Python frame of the target is at (issue 33's interpreter
 * frames take it from the code object the frame runs and the instruction
 * it last ran).
 *
 * The table is a sequence of entries, each covering 1 to 8 code units
 * (2-byte instructions and their inline caches): a first byte with bit 7
 * set, its kind in bits 3-6 and its length less one in bits 0-2, then the
 * kind's operands (the line's change as a signed varint of 6-bit chunks,
 * columns). The line starts at the code object's first line and moves by
 * each entry's change; an entry of kind "no location" has none.
 *
 * The bytes are the target's: every read is bounded by LEN, a varint by 5
 * chunks, the line by the range of an int. Pure; unit-tested against the
 * tables Python itself makes, and fuzzed (fuzz_pylinetable). */
#ifndef CSAMPLER_PYLINETABLE_H
#define CSAMPLER_PYLINETABLE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PYLINE_NONE (-1)        /* the instruction has no line (co_lines: None) */
#define PYLINE_BAD  (-2)        /* the table does not cover it, or is malformed */

/* The line of code unit INDEX (the instruction's byte offset / 2) of a code
 * object whose first line is FIRST_LINE, from its table TABLE of LEN
 * bytes: a line (>= 0), PYLINE_NONE or PYLINE_BAD. */
int pylinetable_line(const uint8_t *table, size_t len, int first_line, size_t index);

/* The same from the tables of older versions, for the instruction at byte
 * OFFSET (a frame's f_lasti: bytes before 3.10, instructions times 2 in
 * 3.10):
 * - co_lnotab (2.7 to 3.9): pairs of a byte offset's change (unsigned)
 *   and the line's (unsigned in 2.7, SIGNED_LINES from 3.6); the line is
 *   that of the last pair whose offset is not past OFFSET;
 * - co_linetable of 3.10: pairs of a range's length in bytes (unsigned)
 *   and the line's change (signed; -128: the range has no line), OFFSET's
 *   line that of the range that holds it. */
int pylinetable_lnotab_line(const uint8_t *table, size_t len, int first_line, size_t offset,
			    bool signed_lines);
int pylinetable_310_line(const uint8_t *table, size_t len, int first_line, size_t offset);

#endif
