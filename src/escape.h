/* escape: target-controlled strings made safe for the text formats (pure;
 * fuzzed). Every function takes bytes that may be anything (invalid UTF-8,
 * control characters, quotes) and writes only well-formed output.
 * folded_escape (write.h) is the folded format's policy. */
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

#endif
