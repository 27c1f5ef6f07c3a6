/* array: heap arrays that grow by doubling (see array.h). */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"

int array_grow(void *items, size_t *cap, size_t size, size_t first)
{
	void *old, *grown;
	size_t ncap = *cap ? *cap * 2 : first;

	if (size == 0 || ncap <= *cap || ncap > SIZE_MAX / size) {
		errno = ENOMEM;
		return -1;
	}
	/* the pointer is copied as bytes: ITEMS may point to any pointer type */
	memcpy(&old, items, sizeof old);
	grown = realloc(old, ncap * size);
	if (!grown) {
		errno = ENOMEM;
		return -1;
	}
	memcpy(items, &grown, sizeof grown);
	*cap = ncap;
	return 0;
}
