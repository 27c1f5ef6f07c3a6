/* pylinetable: see pylinetable.h. The format is CPython's
 * Objects/locations.md (3.11). */
#include "config.h"

#include <limits.h>
#include <stdbool.h>

#include "pylinetable.h"

/* Entry kinds (bits 3-6 of an entry's first byte). 0-9 are short forms and
 * 10-12 one-line forms: the line moves by 0, 0, 1 or 2, with columns. */
enum {
	KIND_ONE_LINE0 = 10,
	KIND_ONE_LINE1 = 11,
	KIND_ONE_LINE2 = 12,
	KIND_NO_COLUMNS = 13,    /* the line's change, as a signed varint */
	KIND_LONG = 14,          /* the line's change, then end line and columns */
	KIND_NONE = 15,          /* no location */
};

#define MAX_VARINT_CHUNKS 5      /* 30 bits: more than any line change */

/* The unsigned varint at *P (6-bit chunks, low first; 0x40: more follow),
 * *P moved past it. false if it runs past END or is longer than allowed. */
static bool read_varint(const uint8_t **p, const uint8_t *end, uint32_t *out)
{
	uint32_t v = 0;
	for (unsigned i = 0; i < MAX_VARINT_CHUNKS; i++) {
		if (*p >= end)
			return false;
		uint8_t b = *(*p)++;
		v |= (uint32_t)(b & 63u) << (6 * i);
		if (!(b & 64u)) {
			*out = v;
			return true;
		}
	}
	return false;
}

/* How much an entry of kind KIND, its operands at P, moves the line.
 * false if its operand runs past END. */
static bool line_change(unsigned kind, const uint8_t *p, const uint8_t *end, int64_t *delta)
{
	uint32_t v;
	switch (kind) {
	case KIND_NO_COLUMNS:
	case KIND_LONG:
		if (!read_varint(&p, end, &v))
			return false;
		*delta = (v & 1u) ? -(int64_t)(v >> 1) : (int64_t)(v >> 1);
		return true;
	case KIND_ONE_LINE1:
		*delta = 1;
		return true;
	case KIND_ONE_LINE2:
		*delta = 2;
		return true;
	default:                 /* short forms, one-line 0, none */
		*delta = 0;
		return true;
	}
}

int pylinetable_line(const uint8_t *table, size_t len, int first_line, size_t index)
{
	if (!table || first_line < 0)
		return PYLINE_BAD;
	const uint8_t *p = table, *end = table + len;
	int64_t line = first_line;
	size_t unit = 0;
	while (p < end) {
		uint8_t first = *p++;
		if (!(first & 0x80u))
			return PYLINE_BAD;      /* an entry must start here */
		unsigned kind = (first >> 3) & 15u, units = (first & 7u) + 1;
		int64_t delta;
		if (!line_change(kind, p, end, &delta))
			return PYLINE_BAD;
		line += delta;
		if (line < 0 || line > INT_MAX)
			return PYLINE_BAD;
		if (index < unit + units)
			return kind == KIND_NONE ? PYLINE_NONE : (int)line;
		unit += units;
		while (p < end && !(*p & 0x80u))  /* the operands, to the next entry */
			p++;
	}
	return PYLINE_BAD;
}

/* A line moved by a table of at most PYFRAMES_MAX_LINETABLE bytes stays
 * far within a long; one outside an int's range is no line. */
static int line_or_bad(long line)
{
	return line >= 0 && line <= INT_MAX ? (int)line : PYLINE_BAD;
}

int pylinetable_lnotab_line(const uint8_t *table, size_t len, int first_line, size_t offset,
			    bool signed_lines)
{
	long line = first_line;
	size_t addr = 0;
	for (size_t i = 0; i + 1 < len; i += 2) {
		addr += table[i];
		if (addr > offset)
			break;
		line += signed_lines ? (int8_t)table[i + 1] : table[i + 1];
		if (line < INT_MIN || line > INT_MAX)
			return PYLINE_BAD;
	}
	return line_or_bad(line);
}

int pylinetable_310_line(const uint8_t *table, size_t len, int first_line, size_t offset)
{
	long line = first_line, range_line = PYLINE_NONE;
	size_t end = 0;
	for (size_t i = 0; i + 1 < len; i += 2) {
		size_t start = end;
		end += table[i];
		int8_t change = (int8_t)table[i + 1];
		if (change == -128) {
			range_line = PYLINE_NONE;
		} else {
			line += change;
			if (line < INT_MIN || line > INT_MAX)
				return PYLINE_BAD;
			range_line = line;
		}
		if (offset >= start && offset < end)
			return range_line == PYLINE_NONE ? PYLINE_NONE : line_or_bad(range_line);
	}
	return PYLINE_BAD;
}
