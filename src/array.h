/* array: heap arrays that grow by doubling.
 *
 * array_grow makes room for more elements in the array whose pointer is at
 * ITEMS (the address of a pointer to any object type) and whose allocated
 * length is *CAP elements of SIZE bytes: *CAP doubles (or becomes FIRST when
 * it is 0) and the array is reallocated. *ITEMS and *CAP change only on
 * success. Returns 0, or -1 with errno ENOMEM, also when the new size would
 * not fit in a size_t. The caller calls it when its count reaches *CAP. */
#ifndef CSAMPLER_ARRAY_H
#define CSAMPLER_ARRAY_H
#include <stddef.h>

int array_grow(void *items, size_t *cap, size_t size, size_t first);

#endif
