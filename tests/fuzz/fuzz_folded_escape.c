/* libFuzzer harness for folded_escape (src/escape.c): any bytes, any
 * output size. Checks the contract of write.h: the output is NUL-terminated,
 * at most outsz-1 bytes, the returned length; no ';' and no control byte; and
 * it never ends in " <digits>" (a second count for flamegraph.pl). Built by
 * make fuzz; replayed over corpus/folded_escape/ by make check. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "write.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The first two bytes pick the output size (0 to 65535). */
	size_t outsz = size >= 2 ? ((size_t)data[0] << 8 | data[1]) : 0;
	size_t len = size >= 2 ? size - 2 : 0;
	char *in = malloc(len + 1);
	char *out = malloc(outsz ? outsz : 1);
	if (!in || !out)
		abort();
	memcpy(in, data + (size >= 2 ? 2 : 0), len);
	in[len] = '\0';
	out[0] = 'X';
	size_t n = folded_escape(in, out, outsz);
	if (outsz == 0) {
		if (n != 0 || out[0] != 'X')
			abort();
	} else {
		if (n >= outsz || strlen(out) != n || n > strlen(in))
			abort();
		for (size_t i = 0; i < n; i++) {
			unsigned char c = (unsigned char)out[i];
			if (c == ';' || c < 0x20 || c == 0x7f)
				abort();
		}
		/* strip a trailing number; if it had a digit, no space before it */
		size_t i = n;
		int digit = 0;
		while (i > 0 && ((out[i - 1] >= '0' && out[i - 1] <= '9') || out[i - 1] == '.')) {
			digit |= out[i - 1] != '.';
			i--;
		}
		if (digit && i > 0 && out[i - 1] == ' ')
			abort();
	}
	free(in);
	free(out);
	return 0;
}
