/* pydwarf: a CPython interpreter's layout (pyframes.h's py_layout) read
 * from its own debug information, where it has some: the offsets of the
 * fields a stop reads, each from its structure's DWARF (dwarfstruct),
 * where csampler's table does not fit (another build of a known version:
 * other options, another compiler), so it is read as it is laid out. The
 * structure and member names of 3.11 and 3.12 are known (from 3.13 the
 * interpreter publishes its offsets: pydebug.h); false when any one is
 * missing. Pure on libdw. */
#ifndef CSAMPLER_PYDWARF_H
#define CSAMPLER_PYDWARF_H
#include <elfutils/libdw.h>
#include <stdbool.h>

#include "pyframes.h"

/* The layout of CPython MAJOR.MINOR from DW into OUT. */
bool pydwarf_layout(Dwarf *dw, unsigned major, unsigned minor, struct py_layout *out);

#endif
