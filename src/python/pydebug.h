/* pydebug: a CPython 3.13+ interpreter's layout (pyframes.h's py_layout)
 * from the offsets it publishes for debuggers and profilers: the
 * _Py_DebugOffsets at the start of its _PyRuntime ("xdebugpy", its
 * version, then each structure's size and the offsets of its fields).
 *
 * That structure itself grows between versions, so where each offset
 * sits in it is known per version (3.13, 3.14, 3.15: measured from their
 * debug information); a later version is read as the newest known is,
 * and taken only if what it says holds together (pydebug_layout's
 * checks). A few offsets are not published and have not moved from 3.11
 * to 3.15: a data stack chunk's first frame (after three words), its top
 * beside the chunk in a thread state, the interpreter's count of thread
 * states made just before their list. Pure. */
#ifndef CSAMPLER_PYDEBUG_H
#define CSAMPLER_PYDEBUG_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pyframes.h"

#define PYDEBUG_READ 1024u      /* bytes of _PyRuntime a layout is read from */

enum pydebug_result {
	PYDEBUG_OK,
	PYDEBUG_NONE,           /* no cookie, or another version than Py_Version's */
	PYDEBUG_FREE_THREADED,  /* a build without the GIL: other frames */
	PYDEBUG_UNFIT,          /* its offsets do not hold together as known */
};

/* The layout of CPython MAJOR.MINOR (its Py_Version) from BYTES, the first
 * LEN bytes of its _PyRuntime, into OUT. */
enum pydebug_result pydebug_layout(const uint8_t *bytes, size_t len, unsigned major,
				   unsigned minor, struct py_layout *out);

#endif
