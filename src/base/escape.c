/* escape: safe text from target-controlled strings (see escape.h). */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "escape.h"

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0. */
size_t escape_utf8_sequence(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) || cp == 0xfffe || cp == 0xffff)
		return 0;
	return len;
}

/* Write up to max_chars characters of s[0..n) escaped for XML text and
 * attributes; invalid UTF-8 becomes U+FFFD, control characters vanish.
 * Appends ".." when cut. */
void escape_xml(FILE *out, const char *str, size_t n, size_t max_chars)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t chars = 0;

	for (size_t i = 0; i < n;) {
		size_t len = escape_utf8_sequence(s + i, n - i);
		if (chars == max_chars) {
			fputs("..", out);
			return;
		}
		if (!len) {
			fputs("\xef\xbf\xbd", out);
			i++;
			chars++;
			continue;
		}
		if (len == 1) {
			unsigned char c = s[i];
			if (c < 0x20 || c == 0x7f)
				;
			else if (c == '&')
				fputs("&amp;", out);
			else if (c == '<')
				fputs("&lt;", out);
			else if (c == '>')
				fputs("&gt;", out);
			else if (c == '"')
				fputs("&quot;", out);
			else if (c == '\'')
				fputs("&#39;", out);
			else
				fputc(c, out);
			if (c >= 0x20 && c != 0x7f)
				chars++;
		} else {
			fwrite(s + i, 1, len, out);
			chars++;
		}
		i += len;
	}
}

size_t escape_utf8_chars(const char *s, size_t n)
{
	size_t chars = 0;
	for (size_t i = 0; i < n; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			chars++;
	return chars;
}

void escape_json(FILE *out, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;

	for (size_t i = 0; i < n;) {
		size_t len = escape_utf8_sequence(s + i, n - i);
		if (!len) {
			fputs("\\ufffd", out);
			i++;
			continue;
		}
		unsigned char c = s[i];
		if (len > 1)
			fwrite(s + i, 1, len, out);
		else if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
		i += len;
	}
}

/* ---- the folded format ---------------------------------------------------- */

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

size_t folded_escape(const char *in, char *out, size_t outsz)
{
	size_t n = 0, i;

	if (!outsz)
		return 0;
	for (; in && *in && n + 1 < outsz; in++) {
		unsigned char c = (unsigned char)*in;
		if (c < 0x20 || c == 0x7f)
			continue;
		out[n++] = c == ';' ? ':' : (char)c;
	}
	out[n] = '\0';
	/* A name ending in " <digits>" (or " 1.5") would read as a count to
	 * flamegraph.pl and difffolded: join the number to the name. */
	i = n;
	while (i > 0 && (is_digit(out[i - 1]) || out[i - 1] == '.'))
		i--;
	if (i < n && i > 0 && out[i - 1] == ' ') {
		bool digits = false;
		for (size_t j = i; j < n; j++)
			digits |= is_digit(out[j]);
		if (digits)
			out[i - 1] = '_';
	}
	return n;
}

/* ---- a terminal ------------------------------------------------------------- */

size_t escape_terminal(const char *in, char *out, size_t outsz)
{
	static const char hex[] = "0123456789abcdef";
	size_t need = 0, len = 0;
	bool full = false;

	for (const unsigned char *p = (const unsigned char *)in; *p; p++) {
		char esc[4];
		size_t n;
		if (*p == '\\') {
			esc[0] = esc[1] = '\\';
			n = 2;
		} else if (*p >= 0x20 && *p < 0x7f) {
			esc[0] = (char)*p;
			n = 1;
		} else {
			esc[0] = '\\';
			esc[1] = 'x';
			esc[2] = hex[*p >> 4];
			esc[3] = hex[*p & 0xf];
			n = 4;
		}
		need += n;
		if (!full && len + n < outsz) {
			memcpy(out + len, esc, n);
			len += n;
		} else {
			full = true;  /* never a partial escape */
		}
	}
	if (outsz > 0)
		out[len] = '\0';
	return need;
}
