/* A memory image the CPython harnesses (fuzz_pyframes, fuzz_pystack) read
 * as a target's memory: the input mapped at IMAGE_BASE, a read outside it
 * failing, as a pyframes reader. */
#ifndef CSAMPLER_FUZZ_IMAGE_H
#define CSAMPLER_FUZZ_IMAGE_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define IMAGE_BASE 0x10000ull

struct image {
	const uint8_t *bytes;
	size_t len;
};

static inline int read_image(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct image *im = ctx;
	if (addr < IMAGE_BASE || addr - IMAGE_BASE > im->len || len > im->len - (addr - IMAGE_BASE))
		return -1;
	memcpy(buf, im->bytes + (addr - IMAGE_BASE), len);
	return 0;
}

#endif
