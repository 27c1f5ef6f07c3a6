/* libFuzzer harness for the escape room (src/escape.c) and names_shorten
 * (src/names.c): any bytes. escape_json's output must be the inside of a
 * valid JSON string (no raw '"' or control byte, only JSON's escapes, valid
 * UTF-8); escape_xml's must hold no markup character, control byte or
 * invalid UTF-8; names_shorten's must be NUL-terminated within its bound.
 * Built by make fuzz; replayed over corpus/escape/ by make check. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_text.h"
#include "escape.h"
#include "names.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static void check_utf8(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t len = escape_utf8_sequence(s + i, n - i);
		if (!len)
			abort();
		i += len;
	}
}

static void check_json(const char *s, size_t n)
{
	check_utf8((const unsigned char *)s, n);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c < 0x20)
			abort();
		if (c != '\\')
			continue;
		if (++i >= n)
			abort();
		if (s[i] == 'u') {
			for (int k = 1; k <= 4; k++)
				if (i + (size_t)k >= n || !is_hex(s[i + (size_t)k]))
					abort();
			i += 4;
		} else if (!strchr("\"\\/bfnrt", s[i]) || !s[i]) {
			abort();
		}
	}
}

static void check_xml(const char *s, size_t n)
{
	check_utf8((const unsigned char *)s, n);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '<' || c == '>' || c == '"' || c == '\'' || c < 0x20 || c == 0x7f)
			abort();
		/* '&' only starts an entity */
		if (c == '&' && strncmp(s + i, "&amp;", 5) && strncmp(s + i, "&lt;", 4) &&
		    strncmp(s + i, "&gt;", 4) && strncmp(s + i, "&quot;", 6) && strncmp(s + i, "&#39;", 5))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		abort();
	escape_json(f, (const char *)data, size);
	fclose(f);
	check_json(buf, len);
	free(buf);

	f = open_memstream(&buf, &len);
	if (!f)
		abort();
	escape_xml(f, (const char *)data, size, size % 7 == 0 ? 5 : SIZE_MAX);
	fclose(f);
	check_xml(buf, len);
	free(buf);

	/* escape_terminal: printable ASCII only, never a partial escape */
	char term[64];
	char *tin = fuzz_text(data, size);
	size_t need = escape_terminal(tin, term, sizeof term);
	size_t tlen = strlen(term);
	if (tlen > need || tlen >= sizeof term)
		abort();
	for (size_t i = 0; i < tlen; i++)
		if ((unsigned char)term[i] < 0x20 || (unsigned char)term[i] >= 0x7f)
			abort();
	if (need < sizeof term && tlen != need)
		abort();
	free(tin);

	char *in = fuzz_text(data, size), out[256];
	size_t outsz = size ? data[0] : 0;
	out[0] = 'X';
	size_t n = names_shorten(in, out, outsz);
	if (outsz == 0 ? (n != 0 || out[0] != 'X') : (n >= outsz || strlen(out) != n))
		abort();
	free(in);
	return 0;
}
