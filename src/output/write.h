/* write: the output formats, each from a profile to a stream, and the atomic
 * creation of output files shared by all of them.
 *
 * write_output creates PATH through a temp file in the same directory and
 * renames it over PATH only when the whole output was written and flushed;
 * on any error the temp file is removed, a line naming the cause is printed,
 * and -1 returned. PATH "-" writes to stdout. Target-controlled strings are
 * escaped so they cannot forge lines, frames or counts (escape.h). */
#ifndef CSAMPLER_WRITE_H
#define CSAMPLER_WRITE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "escape.h"
#include "intern.h"
#include "profile.h"

enum output_format {
	FORMAT_AUTO = 0,         /* from the file name; folded for "-" */
	FORMAT_PPROF,
	FORMAT_FOLDED,
	FORMAT_SVG,
	FORMAT_TEXT,
	FORMAT_SPEEDSCOPE,
};

struct write_options {
	bool threads;            /* root frame per thread ("name-tid") */
	bool annotate;           /* folded: _[i] inline, _[j] JIT suffixes */
	const char *title;       /* SVG title; NULL for a default */
	size_t memory;           /* bytes for sorting stacks; 0: WRITE_MEMORY_DEFAULT */
};

/* The writers' memory for sorting and merging stacks; beyond it they use a
 * temp file in $TMPDIR, so their memory does not grow with the stacks. */
#define WRITE_MEMORY_DEFAULT (8u * 1024 * 1024)

#define WRITE_MAX_SUFFIXES 3
/* What csampler knows of one output format, in one row (write.c's table). */
struct write_format_info {
	enum output_format format;
	const char *name;                         /* -f NAME */
	const char *suffixes[WRITE_MAX_SUFFIXES]; /* file name endings (NULL-ended) */
	int (*writer)(const struct profile *p, FILE *out, const struct write_options *opt);
	bool timeline;                            /* built from a timeline (profile.timeline) */
	bool diff;                                /* writes a --diff profile (two counts) */
	const char *mime;                         /* its HTTP Content-Type */
	const char *disposition;                  /* its HTTP Content-Disposition (a
	                                           * download, as Go's handler
	                                           * serves it), or NULL */
	const char *noun;                         /* "wrote F (NOUN, N samples)" */
	/* how to view it: "; view it" VIEW, then PATH VIEW_AFTER unless
	 * VIEW_AFTER is NULL */
	const char *view, *view_after;
};
/* F's row; NULL for FORMAT_AUTO or a value that names no format. */
const struct write_format_info *write_format_info(enum output_format f);

/* Format named by PATH's extension (the rows' suffixes: .pb .pb.gz .pprof
 * .folded .collapsed .svg .txt .speedscope.json; the longest that
 * matches); FORMAT_AUTO if none matches. */
enum output_format write_format_from_path(const char *path);
/* Format from its name ("pprof", "folded", "svg", "text", "speedscope");
 * FORMAT_AUTO if unknown. */
enum output_format write_format_from_name(const char *name);
const char *write_format_name(enum output_format f);
/* Whether F shows samples in time order (the profile must then be built
 * from a timeline: profile.timeline). */
bool write_format_is_timeline(enum output_format f);
/* The format names, for messages ("pprof, folded, svg, text or
 * speedscope"; DIFF_ONLY: those that write a --diff profile), into BUF of
 * SIZE (cut to fit); BUF. */
const char *write_format_names(char *buf, size_t size, bool diff_only);
/* The known extensions, for messages (".pb.gz, .pb, ..."), into BUF of
 * SIZE (cut to fit); BUF. */
const char *write_format_extensions(char *buf, size_t size);

/* Whether PATH can be written as write_output will write it (creating a
 * file in its directory, or writing the device or FIFO it names), checked
 * before sampling so a mistake costs no run. 0, or -1 with the cause
 * printed. *DIR: its directory, held for write_output (the caller closes
 * it), or -1 (outfile.h). */
int write_output_check(const char *path, int *dir);

/* Write P to PATH in format F (FORMAT_AUTO resolved from PATH), in the
 * directory DIR (write_output_check's; -1: PATH's as it resolves now). 0
 * or -1. */
int write_output(const struct profile *p, const char *path, int dir, enum output_format f,
		 const struct write_options *opt);

/* P in format F (not FORMAT_AUTO) to the open stream OUT (a server's
 * response buffer). 0, or -1 with errno. */
int write_to_stream(const struct profile *p, FILE *out, enum output_format f,
		    const struct write_options *opt);
/* The formats, to an open stream. 0, or -1 with errno. */
int write_pprof(const struct profile *p, FILE *out, const struct write_options *opt);
int write_folded(const struct profile *p, FILE *out, const struct write_options *opt);
int write_svg(const struct profile *p, FILE *out, const struct write_options *opt);
int write_text(const struct profile *p, FILE *out, const struct write_options *opt);
int write_speedscope(const struct profile *p, FILE *out, const struct write_options *opt);


/* The part of PATH after its last '/'. */
const char *write_base_name(const char *path);
/* A mapping's name as a report shows it: its file's base name; "[kernel]"
 * for the kernel image's ([kernel.kallsyms]), a module's "[name]". */
const char *write_module_name(const struct profile_mapping *m);

/* The name of a frame of function FUNCTION (or PROFILE_NONE) at location L:
 * the function's name, else its mangled name, else "[module+0xOFFSET]" or
 * "[0xADDR]" written into buf. Not escaped. */
const char *write_frame_name(const struct profile *p, const struct profile_location *l,
			     uint32_t function, char *buf, size_t bufsz);

#endif
