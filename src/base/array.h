/* array: heap arrays that grow by doubling.
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

#endif
