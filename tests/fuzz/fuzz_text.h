/* fuzz_text: a fuzz input as the NUL-ended string the parsers take (a
 * malloc'd copy; the caller frees it). Out of memory aborts: a harness
 * that skipped the input would pass without testing it. */
#ifndef CSAMPLER_FUZZ_TEXT_H
#define CSAMPLER_FUZZ_TEXT_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline char *fuzz_text(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	return text;
}

#endif
