/* escape: target-controlled strings made safe for the text formats (pure;
 * fuzzed). Every function takes bytes that may be anything (invalid UTF-8,
 * control characters, quotes) and writes only well-formed output. One
 * function per policy: XML (SVG), JSON (speedscope), the folded format, a
 * terminal (--dump, --top, the text report's command line). */
#ifndef CSAMPLER_ESCAPE_H
#define CSAMPLER_ESCAPE_H
#include <stddef.h>
#include <stdio.h>

/* Length of the valid UTF-8 sequence at s (at most n bytes, n >= 1), or 0
 * (overlong forms, surrogates, U+FFFE/U+FFFF and beyond U+10FFFF are invalid). */
size_t escape_utf8_sequence(const unsigned char *s, size_t n);
/* Characters in s[0, n): bytes that do not continue a UTF-8 sequence. */
size_t escape_utf8_chars(const char *s, size_t n);
/* Up to max_chars characters of s[0, n) for XML text and attributes: markup
 * characters as entities, invalid UTF-8 as U+FFFD, control characters
 * dropped; ".." appended when cut. */
void escape_xml(FILE *out, const char *s, size_t n, size_t max_chars);
/* s[0, n) as the inside of a JSON string: '"' and '\\' escaped, control
 * characters as \\u00XX, invalid UTF-8 as \\ufffd (so the file is valid UTF-8). */
void escape_json(FILE *out, const char *s, size_t n);
/* One frame or thread name for the folded format into out (always
 * NUL-terminated, at most outsz-1 bytes): ';' -> ':', control characters
 * dropped, and a name may not end in " <digits>" so no line can end in two
 * counts. Returns the length written. */
size_t folded_escape(const char *in, char *out, size_t outsz);
/* Text for a terminal: printable ASCII is kept; a backslash becomes two, and
 * every other byte (control characters, DEL, bytes >= 0x80) becomes \xNN,
 * so one output column is one byte. Writes at most outsz-1 bytes and a NUL
 * (nothing when outsz is 0: out may then be NULL); returns the length the
 * whole escaped text needs, like snprintf. */
size_t escape_terminal(const char *in, char *out, size_t outsz);

#endif
