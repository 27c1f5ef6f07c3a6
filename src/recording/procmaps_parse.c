/* procmaps_parse: a line of /proc/PID/maps and a line of a perf map
 * (/tmp/perf-PID.map), parsed from any bytes (see procmaps.h); pure,
 * unit-tested and fuzzed. */
#include "config.h"

#include <limits.h>
#include <string.h>

#include "procmaps_internal.h"

/* ---- parsing (pure; safe on any bytes) ------------------------------------ */

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* At most 16 hex digits, at least one. */
static int parse_hex(const char **p, const char *end, uint64_t *out)
{
	uint64_t v = 0;
	unsigned n = 0;
	while (*p < end && hex_digit(**p) >= 0) {
		if (++n > 16)
			return -1;
		v = v << 4 | (uint64_t)hex_digit(**p);
		(*p)++;
	}
	if (n == 0)
		return -1;
	*out = v;
	return 0;
}

static int parse_dec(const char **p, const char *end, uint64_t *out)
{
	uint64_t v = 0;
	unsigned n = 0;
	while (*p < end && **p >= '0' && **p <= '9') {
		unsigned d = (unsigned)(**p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
		n++;
		(*p)++;
	}
	if (n == 0)
		return -1;
	*out = v;
	return 0;
}

static int expect(const char **p, const char *end, char c)
{
	if (*p >= end || **p != c)
		return -1;
	(*p)++;
	return 0;
}

static int parse_perm(const char **p, const char *end, char yes, bool *out)
{
	if (*p >= end)
		return -1;
	if (**p == yes)
		*out = true;
	else if (**p == '-')
		*out = false;
	else
		return -1;
	(*p)++;
	return 0;
}

static void copy_truncated(char *dst, size_t dstsz, const char *src, size_t len)
{
	if (!dst || dstsz == 0)
		return;
	if (len > dstsz - 1)
		len = dstsz - 1;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

int procmaps_parse_line(const char *line, size_t len, struct procmaps_entry *out,
			char *path, size_t pathsz)
{
	if (!line || !out)
		return -1;
	const char *p = line, *end = line + len;
	if (end > p && end[-1] == '\n')
		end--;
	struct procmaps_entry e = { .fd = -1 };
	uint64_t major, minor;
	if (parse_hex(&p, end, &e.start) < 0 || expect(&p, end, '-') < 0 ||
	    parse_hex(&p, end, &e.end) < 0 || expect(&p, end, ' ') < 0 ||
	    parse_perm(&p, end, 'r', &e.readable) < 0 || parse_perm(&p, end, 'w', &e.writable) < 0 ||
	    parse_perm(&p, end, 'x', &e.executable) < 0)
		return -1;
	if (p >= end || (*p != 's' && *p != 'p'))
		return -1;
	e.shared = *p++ == 's';
	if (expect(&p, end, ' ') < 0 || parse_hex(&p, end, &e.offset) < 0 ||
	    expect(&p, end, ' ') < 0 || parse_hex(&p, end, &major) < 0 ||
	    expect(&p, end, ':') < 0 || parse_hex(&p, end, &minor) < 0 ||
	    expect(&p, end, ' ') < 0 || parse_dec(&p, end, &e.inode) < 0)
		return -1;
	if (e.start >= e.end || major > UINT_MAX || minor > UINT_MAX)
		return -1;
	e.dev_major = (unsigned)major;
	e.dev_minor = (unsigned)minor;
	if (p < end && *p != ' ')
		return -1;
	while (p < end && *p == ' ')
		p++;
	/* The kernel escapes newlines in paths; a raw NUL or newline is not ours. */
	if (memchr(p, '\0', (size_t)(end - p)) || memchr(p, '\n', (size_t)(end - p)))
		return -1;
	size_t plen = (size_t)(end - p);
	size_t slen = sizeof(DELETED_SUFFIX) - 1;
	if (plen > slen && memcmp(end - slen, DELETED_SUFFIX, slen) == 0) {
		e.deleted = true;
		plen -= slen;
	}
	copy_truncated(path, pathsz, p, plen);
	*out = e;
	return 0;
}

/* A perf map's hex field at *P (an optional 0x, then hex digits), then the
 * blanks after it, at least one: *P moved past them. 0, or -1. */
static int perf_map_field(const char **p, const char *end, uint64_t *v)
{
	if (end - *p >= 2 && (*p)[0] == '0' && ((*p)[1] == 'x' || (*p)[1] == 'X'))
		*p += 2;
	if (parse_hex(p, end, v) < 0 || *p >= end || (**p != ' ' && **p != '\t'))
		return -1;
	while (*p < end && (**p == ' ' || **p == '\t'))
		(*p)++;
	return 0;
}

int procmaps_parse_perf_map_line(const char *line, size_t len, uint64_t *start,
				 uint64_t *size, char *name, size_t namesz)
{
	if (!line || !start || !size || !name || namesz == 0)
		return -1;
	const char *p = line, *end = line + len;
	while (end > p && (end[-1] == '\n' || end[-1] == '\r'))
		end--;
	uint64_t s, z;
	if (perf_map_field(&p, end, &s) < 0 || perf_map_field(&p, end, &z) < 0)
		return -1;
	if (p >= end || z > UINT64_MAX - s)
		return -1;
	if (memchr(p, '\0', (size_t)(end - p)) || memchr(p, '\n', (size_t)(end - p)))
		return -1;
	copy_truncated(name, namesz, p, (size_t)(end - p));
	*start = s;
	*size = z;
	return 0;
}
