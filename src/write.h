/* write: the output formats, each from a profile to a stream, and the atomic
 * creation of output files shared by all of them.
 *
 * write_output creates PATH through a temp file in the same directory and
 * renames it over PATH only when the whole output was written and flushed;
 * on any error the temp file is removed, a line naming the cause is printed,
 * and -1 returned. PATH "-" writes to stdout. Target-controlled strings are
 * escaped so they cannot forge lines, frames or counts (folded_escape). */
#ifndef CSAMPLER_WRITE_H
#define CSAMPLER_WRITE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "profile.h"

enum output_format {
	FORMAT_AUTO = 0,         /* from the file name; folded for "-" */
	FORMAT_PPROF,
	FORMAT_FOLDED,
	FORMAT_SVG,
	FORMAT_TEXT,
};

struct write_options {
	bool threads;            /* root frame per thread ("name-tid") */
	bool annotate;           /* folded: _[i] inline, _[j] JIT suffixes */
	const char *title;       /* SVG title; NULL for a default */
};

/* Format named by PATH's extension (.pb .pb.gz .pprof .folded .collapsed .svg
 * .txt); FORMAT_AUTO if none matches. */
enum output_format write_format_from_path(const char *path);
/* Format from its name ("pprof", "folded", "svg", "text"); FORMAT_AUTO if unknown. */
enum output_format write_format_from_name(const char *name);
const char *write_format_name(enum output_format f);

/* Write P to PATH in format F (FORMAT_AUTO resolved from PATH). 0 or -1. */
int write_output(const struct profile *p, const char *path, enum output_format f,
		 const struct write_options *opt);

/* The formats, to an open stream. 0, or -1 with errno. */
int write_pprof(const struct profile *p, FILE *out, const struct write_options *opt);
int write_folded(const struct profile *p, FILE *out, const struct write_options *opt);
int write_svg(const struct profile *p, FILE *out, const struct write_options *opt);
int write_text(const struct profile *p, FILE *out, const struct write_options *opt);

/* Escape one frame or thread name for the folded format into out (always
 * NUL-terminated, at most outsz-1 bytes): ';' -> ':', control characters
 * dropped, and a name may not end in " <digits>" so no line can end in two
 * counts. Returns the length written. Pure; fuzzed. */
size_t folded_escape(const char *in, char *out, size_t outsz);

#endif
