/* array: heap arrays that grow by doubling (see array.h). */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"

int array_grow(void *items, size_t *cap, size_t want, size_t size, size_t first)
{
	void *old, *grown;
	size_t ncap = *cap ? *cap : first;

	if (want <= *cap)
		return 0;
	if (size == 0 || ncap == 0)
		goto too_big;
	while (ncap < want) {
		if (ncap > SIZE_MAX / 2)
			goto too_big;
		ncap *= 2;
	}
	if (ncap > SIZE_MAX / size)
		goto too_big;
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
too_big:
	errno = ENOMEM;
	return -1;
}
