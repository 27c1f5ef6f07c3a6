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

/* One row per output format: everything csampler knows of it (its names,
 * writer, whether it is built from a timeline, how it is served and how a
 * user opens it). A format is added here, in enum output_format, and in
 * the man page, --help and the completions. */
static const struct write_format_info formats[] = {
	{ .format = FORMAT_PPROF, .name = "pprof", .suffixes = { ".pb.gz", ".pb", ".pprof" },
	  .writer = write_pprof, .mime = "application/octet-stream",
	  .disposition = "attachment; filename=\"profile\"", .noun = "pprof",
	  .view = ": go tool pprof -http=: ", .view_after = "" },
	{ .format = FORMAT_FOLDED, .name = "folded", .suffixes = { ".folded", ".collapsed" },
	  .writer = write_folded, .diff = true, .mime = "text/plain; charset=utf-8",
	  .noun = "folded stacks", .view = ": flamegraph.pl ",
	  .view_after = " > flame.svg (Debian's is /usr/share/perl5/Devel/NYTProf/flamegraph.pl)" },
	{ .format = FORMAT_SVG, .name = "svg", .suffixes = { ".svg" },
	  .writer = write_svg, .diff = true, .mime = "image/svg+xml", .noun = "flame graph",
	  .view = " in a web browser" },
	{ .format = FORMAT_TEXT, .name = "text", .suffixes = { ".txt" },
	  .writer = write_text, .diff = true, .mime = "text/plain; charset=utf-8",
	  .noun = "text report", .view = ": less ", .view_after = "" },
	{ .format = FORMAT_SPEEDSCOPE, .name = "speedscope", .suffixes = { ".speedscope.json" },
	  .writer = write_speedscope, .timeline = true, .mime = "application/json",
	  .noun = "speedscope timeline",
	  .view = " at https://www.speedscope.app (drop the file on the page)" },
};
#define NFORMATS (sizeof formats / sizeof formats[0])

const struct write_format_info *write_format_info(enum output_format f)
{
	for (size_t i = 0; i < NFORMATS; i++)
		if (formats[i].format == f)
			return &formats[i];
	return NULL;
}

enum output_format write_format_from_path(const char *path)
{
	size_t n = path ? strlen(path) : 0;
	enum output_format best = FORMAT_AUTO;
	size_t best_len = 0;

	/* the longest ending that matches (".speedscope.json", not ".json") */
	for (size_t i = 0; i < NFORMATS; i++)
		for (size_t k = 0; k < WRITE_MAX_SUFFIXES && formats[i].suffixes[k]; k++) {
			const char *suffix = formats[i].suffixes[k];
			size_t m = strlen(suffix);
			/* a bare ".svg" is a hidden file named svg, not a format */
			if (n > m && m > best_len && path[n - m - 1] != '/' &&
			    strcmp(path + n - m, suffix) == 0) {
				best = formats[i].format;
				best_len = m;
			}
		}
	return best;
}

enum output_format write_format_from_name(const char *name)
{
	for (size_t i = 0; name && i < NFORMATS; i++)
		if (strcmp(name, formats[i].name) == 0)
			return formats[i].format;
	return FORMAT_AUTO;
}

const char *write_format_name(enum output_format f)
{
	const struct write_format_info *fi = write_format_info(f);
	return fi ? fi->name : f == FORMAT_AUTO ? "auto" : "unknown";
}

bool write_format_is_timeline(enum output_format f)
{
	const struct write_format_info *fi = write_format_info(f);
	return fi && fi->timeline;
}

/* Append SEP and ITEM to the text of USED bytes in BUF of SIZE; false once
 * it no longer fits (the text stays cut where it was). */
static bool join(char *buf, size_t size, size_t *used, const char *sep, const char *item)
{
	int n = snprintf(buf + *used, size - *used, "%s%s", *used ? sep : "", item);
	if (n < 0 || (size_t)n >= size - *used) {
		buf[*used] = '\0';
		return false;
	}
	*used += (size_t)n;
	return true;
}

const char *write_format_extensions(char *buf, size_t size)
{
	size_t used = 0;
	if (size)
		buf[0] = '\0';
	for (size_t i = 0; size && i < NFORMATS; i++)
		for (size_t k = 0; k < WRITE_MAX_SUFFIXES && formats[i].suffixes[k]; k++)
			if (!join(buf, size, &used, ", ", formats[i].suffixes[k]))
				return buf;
	return buf;
}

const char *write_format_names(char *buf, size_t size, bool diff_only)
{
	size_t used = 0, last = 0;
	if (size)
		buf[0] = '\0';
	for (size_t i = 0; i < NFORMATS; i++)
		if (!diff_only || formats[i].diff)
			last = i;
	for (size_t i = 0; size && i < NFORMATS; i++)
		if ((!diff_only || formats[i].diff) &&
		    !join(buf, size, &used, i == last ? " or " : ", ", formats[i].name))
			break;
	return buf;
}

int write_to_stream(const struct profile *p, FILE *out, enum output_format f,
		    const struct write_options *opt)
{
	static const struct write_options defaults = { 0 };
	const struct write_format_info *fi = write_format_info(f);

	if (!fi) {
		errno = EINVAL;
		return -1;
	}
	return fi->writer(p, out, opt ? opt : &defaults);
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
		char known[256];
		warn("cannot tell the output format of %s: use %s, or --format", path,
		     write_format_extensions(known, sizeof known));
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

const char *write_module_name(const struct profile_mapping *m)
{
	const char *path = m->filename ? m->filename : "";
	if (profile_mapping_kernel(m))
		return strcmp(path, "[kernel.kallsyms]") == 0 || !*path ? "[kernel]" : path;
	return write_base_name(path);
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

