/* write: output formats by name and extension, and each format written to
 * an output file made safely by outfile.h (see write.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "array.h"
#include "clock.h"
#include "error.h"
#include "outfile.h"
#include "write_internal.h"

static const struct {
	const char *suffix;
	enum output_format format;
} format_suffixes[] = {
	{ ".pb.gz", FORMAT_PPROF },
	{ ".pb", FORMAT_PPROF },
	{ ".pprof", FORMAT_PPROF },
	{ ".folded", FORMAT_FOLDED },
	{ ".collapsed", FORMAT_FOLDED },
	{ ".svg", FORMAT_SVG },
	{ ".txt", FORMAT_TEXT },
	{ ".speedscope.json", FORMAT_SPEEDSCOPE },
};

static const char *const format_names[] = {
	[FORMAT_AUTO] = "auto",
	[FORMAT_PPROF] = "pprof",
	[FORMAT_FOLDED] = "folded",
	[FORMAT_SVG] = "svg",
	[FORMAT_TEXT] = "text",
	[FORMAT_SPEEDSCOPE] = "speedscope",
};

enum output_format write_format_from_path(const char *path)
{
	size_t n = path ? strlen(path) : 0;

	for (size_t i = 0; i < sizeof format_suffixes / sizeof format_suffixes[0]; i++) {
		size_t m = strlen(format_suffixes[i].suffix);
		/* a bare ".svg" is a hidden file named svg, not a format */
		if (n > m && path[n - m - 1] != '/' &&
		    strcmp(path + n - m, format_suffixes[i].suffix) == 0)
			return format_suffixes[i].format;
	}
	return FORMAT_AUTO;
}

enum output_format write_format_from_name(const char *name)
{
	if (!name)
		return FORMAT_AUTO;
	for (size_t i = FORMAT_PPROF; i < sizeof format_names / sizeof format_names[0]; i++)
		if (strcmp(name, format_names[i]) == 0)
			return (enum output_format)i;
	return FORMAT_AUTO;
}

const char *write_format_name(enum output_format f)
{
	if ((size_t)f < sizeof format_names / sizeof format_names[0])
		return format_names[f];
	return "unknown";
}

bool write_format_is_timeline(enum output_format f)
{
	return f == FORMAT_SPEEDSCOPE;
}

const char *write_format_extensions(void)
{
	return ".pb.gz, .pb, .pprof, .folded, .collapsed, .svg, .txt, .speedscope.json";
}

int write_to_stream(const struct profile *p, FILE *out, enum output_format f,
		    const struct write_options *opt)
{
	static const struct write_options defaults = { 0 };

	if (!opt)
		opt = &defaults;
	switch (f) {
	case FORMAT_PPROF:
		return write_pprof(p, out, opt);
	case FORMAT_FOLDED:
		return write_folded(p, out, opt);
	case FORMAT_SVG:
		return write_svg(p, out, opt);
	case FORMAT_TEXT:
		return write_text(p, out, opt);
	case FORMAT_SPEEDSCOPE:
		return write_speedscope(p, out, opt);
	case FORMAT_AUTO:
		break;
	}
	errno = EINVAL;
	return -1;
}

int write_output_check(const char *path, int *dir)
{
	return outfile_check(path, dir);
}

int write_output(const struct profile *p, const char *path, int dir, enum output_format f,
		 const struct write_options *opt)
{
	if (!path || !*path) {
		warn("empty output file name");
		errno = EINVAL;
		return -1;
	}
	if (f == FORMAT_AUTO)
		f = strcmp(path, "-") == 0 ? FORMAT_FOLDED : write_format_from_path(path);
	if (f == FORMAT_AUTO) {
		warn("cannot tell the output format of %s: use %s, or --format", path,
		     write_format_extensions());
		errno = EINVAL;
		return -1;
	}
	char what[64];
	snprintf(what, sizeof what, "the %s output", write_format_name(f));
	struct outfile *of = outfile_open(path, dir, what);
	if (!of)
		return -1;
	errno = 0;
	if (write_to_stream(p, outfile_stream(of), f, opt) < 0) {
		outfile_abort(of);
		return -1;
	}
	return outfile_commit(of);
}

/* ---- frame names ---------------------------------------------------------- */

const char *write_base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* The name of an address without a symbol: "[module+0xOFFSET]" or "[0xADDR]". */
static const char *unknown_name(const struct profile *p, const struct profile_location *l,
				char *buf, size_t bufsz)
{
	if (l->mapping != PROFILE_NONE && l->mapping < p->nmappings) {
		const struct profile_mapping *m = &p->mappings[l->mapping];
		const char *base = write_base_name(m->filename ? m->filename : "");
		if (*base) {
			snprintf(buf, bufsz, "[%s+0x%" PRIx64 "]", base,
				 l->address - m->start + m->offset);
			return buf;
		}
	}
	snprintf(buf, bufsz, "[0x%" PRIx64 "]", l->address);
	return buf;
}

const char *write_frame_name(const struct profile *p, const struct profile_location *l,
			     uint32_t function, char *buf, size_t bufsz)
{
	if (function != PROFILE_NONE && function < p->nfunctions) {
		const struct profile_function *fn = &p->functions[function];
		if (fn->name && *fn->name)
			return fn->name;
		if (fn->system_name && *fn->system_name)
			return fn->system_name;
	}
	return unknown_name(p, l, buf, bufsz);
}

