/* array: heap arrays that grow by doubling, alone or side by side.
 *
 * array_grow makes room for at least WANT elements in the array whose
 * pointer is at ITEMS (the address of a pointer to any object type) and whose
 * allocated length is *CAP elements of SIZE bytes. When WANT is more than
 * *CAP, *CAP doubles (starting at FIRST when it is 0) until it holds WANT and
 * the array is reallocated; *ITEMS and *CAP change only on success. Returns 0,
 * or -1 with errno ENOMEM, also when the new size would not fit in a size_t. */
#ifndef CSAMPLER_ARRAY_H
#define CSAMPLER_ARRAY_H
#include <stddef.h>

int array_grow(void *items, size_t *cap, size_t want, size_t size, size_t first);

/* Parallel arrays, N of them sharing one allocated length *CAP: as
 * array_grow for each (ITEMS[i] the address of its pointer, SIZES[i] its
 * element size), and the new elements of all zeroed. On failure *CAP is
 * unchanged (an array that grew keeps its room, its elements beyond *CAP
 * unset). */
int array_grow_each(void *const *items, const size_t *sizes, size_t n, size_t *cap, size_t want,
		    size_t first);

#endif
