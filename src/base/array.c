/* array: heap arrays that grow by doubling (see array.h). */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"

/* The capacity that holds WANT, doubling from CAP (FIRST when 0), for
 * elements of each size in SIZES[0, N); 0 when there is none. */
static size_t grown_cap(size_t cap, size_t want, size_t first, const size_t *sizes, size_t n)
{
	size_t ncap = cap ? cap : first;
	if (ncap == 0)
		return 0;
	while (ncap < want) {
		if (ncap > SIZE_MAX / 2)
			return 0;
		ncap *= 2;
	}
	for (size_t i = 0; i < n; i++)
		if (sizes[i] == 0 || ncap > SIZE_MAX / sizes[i])
			return 0;
	return ncap;
}

/* Reallocate the array whose pointer is at ITEMS to NCAP elements of SIZE. */
static bool resize(void *items, size_t ncap, size_t size)
{
	void *old, *grown;
	/* the pointer is copied as bytes: ITEMS may point to any pointer type */
	memcpy(&old, items, sizeof old);
	grown = realloc(old, ncap * size);
	if (!grown)
		return false;
	memcpy(items, &grown, sizeof grown);
	return true;
}

int array_grow(void *items, size_t *cap, size_t want, size_t size, size_t first)
{
	if (want <= *cap)
		return 0;
	size_t ncap = grown_cap(*cap, want, first, &size, 1);
	if (!ncap || !resize(items, ncap, size)) {
		errno = ENOMEM;
		return -1;
	}
	*cap = ncap;
	return 0;
}

int array_grow_each(void *const *items, const size_t *sizes, size_t n, size_t *cap, size_t want,
		    size_t first)
{
	if (want <= *cap)
		return 0;
	size_t ncap = grown_cap(*cap, want, first, sizes, n);
	if (!ncap)
		goto fail;
	for (size_t i = 0; i < n; i++)
		if (!resize(items[i], ncap, sizes[i]))
			goto fail;
	for (size_t i = 0; i < n; i++) {
		char *base;
		memcpy(&base, items[i], sizeof base);
		memset(base + *cap * sizes[i], 0, (ncap - *cap) * sizes[i]);
	}
	*cap = ncap;
	return 0;
fail:
	errno = ENOMEM;
	return -1;
}
