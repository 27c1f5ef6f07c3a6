/* pydwarf: a CPython interpreter's layout (pyframes.h's py_layout) read
 * from its own debug information, where it has some: the offsets of the
 * fields a stop reads, each from its structure's DWARF (dwarfstruct),
 * where csampler's table does not fit (another build of a known version:
 * other options, another compiler), so it is read as it is laid out. Only the
 * structure and member names of 3.11 are known (3.12 renamed the frame's
 * fields); false when any one is missing. Pure on libdw. */
#ifndef CSAMPLER_PYDWARF_H
#define CSAMPLER_PYDWARF_H
#include <elfutils/libdw.h>
#include <stdbool.h>

#include "pyframes.h"

/* The layout of CPython MAJOR.MINOR from DW into OUT. */
bool pydwarf_layout(Dwarf *dw, unsigned major, unsigned minor, struct py_layout *out);

#endif
