/* pynames: the Python frames of one process that its samples name, each a
 * (qualified name, file, first line, line) with a dense id (0, 1, ...),
 * so a stack stores a Python frame as one address (address.h's
 * addr_python(id)) and the symbolizer names it once per id, as it names a
 * native address once. Code objects are named when sampled (pystack.h):
 * one freed after the sample still has its frames here. Strings are
 * interned (raw bytes of the target: writers escape). At most
 * PYNAMES_MAX frames and PYNAMES_MAX_BYTES of strings (a program that
 * makes code without end, or hostile names, cannot grow it past that:
 * later frames get PYNAMES_FULL, later strings NULL; those already there
 * keep their ids). Pure, unit-tested. */
#ifndef CSAMPLER_PYNAMES_H
#define CSAMPLER_PYNAMES_H
#include <stddef.h>
#include <stdint.h>

#define PYNAMES_MAX (1u << 20)
#define PYNAMES_MAX_BYTES (64u << 20)
#define PYNAMES_FULL UINT32_MAX

struct pyname {
	const char *qualname;           /* as the code object's co_qualname */
	const char *filename;           /* co_filename */
	int first_line;                 /* co_firstlineno */
	int line;                       /* the frame's line, 0 if none */
};

struct pynames;

struct pynames *pynames_new(void);
void pynames_free(struct pynames *t);

/* The interned copy of S (NUL-terminated), NULL out of memory or past
 * PYNAMES_MAX_BYTES: what pynames_frame takes, the same pointer for the
 * same text. */
const char *pynames_string(struct pynames *t, const char *s);
/* The id of the frame (QUALNAME, FILENAME: pynames_string's), added if
 * new; PYNAMES_FULL when full or out of memory. */
uint32_t pynames_frame(struct pynames *t, const char *qualname, const char *filename,
		       int first_line, int line);
/* Frame ID, or NULL. */
const struct pyname *pynames_get(const struct pynames *t, uint32_t id);
size_t pynames_count(const struct pynames *t);

#endif
