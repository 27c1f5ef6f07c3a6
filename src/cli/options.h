/* options: the command line -> one struct options. All validation happens in
 * options_parse, at the end of parsing, so every other room can trust it. */
#ifndef CSAMPLER_OPTIONS_H
#define CSAMPLER_OPTIONS_H
#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "backend.h"
#include "builder.h"
#include "dump.h"
#include "report.h"
#include "session.h"
#include "target.h"
#include "write.h"

#define OPTIONS_MAX_OUTPUTS 16
#define OPTIONS_MAX_GROUPS  64
#define OPTIONS_MAX_LABELS  16
#define OPTIONS_MAX_TIDS    SESSION_MAX_TIDS
#define OPTIONS_LABEL_VALUE_MAX 256     /* bytes of a --label value */

struct output_spec {
	const char *path;               /* "-" for stdout */
	enum output_format format;      /* resolved: never FORMAT_AUTO */
};

#define OPTIONS_LABEL_KEY_MAX 63   /* (within BUILD_LABEL_KEY_MAX) */
/* What a run does; main dispatches on it. */
enum run_mode {
	MODE_RECORD = 0,                /* sample, then write the outputs (profiler) */
	MODE_TOP,                       /* --top: a live view (top) */
	MODE_DUMP,                      /* --dump: one snapshot of every thread (dump) */
	MODE_SERVE,                     /* --serve: profiles over HTTP (serve) */
	MODE_CONVERT,                   /* -i: a pprof profile to other formats (convert) */
};

struct options {
	enum run_mode mode;
	enum backend_kind backend;      /* --backend: resolved in main before a mode runs */
	pid_t pid;                      /* -p; 0 in launch mode, or with -t alone (the
	                                 * session finds the threads' process) */
	pid_t tids[OPTIONS_MAX_TIDS];   /* -t: sample only these threads (of one process) */
	size_t ntids;
	char **command;                 /* after "--"; NULL in attach mode */
	const char *input;              /* -i: a pprof file ("-": standard input), or NULL */
	const char *input2;             /* --diff: the second -i (the new; input is the base) */
	bool diff;                      /* --diff */
	double duration;                /* seconds; 0 = until the target exits or Ctrl-C */
	double interval;                /* --interval: whole seconds per profile; 0 = one profile */
	unsigned rate;                  /* Hz */
	struct output_spec outputs[OPTIONS_MAX_OUTPUTS];
	size_t noutputs;                /* 0 = the default file (set by profiler) */
	enum output_format format;      /* -f, or FORMAT_AUTO */
	bool idle, threads, children, quiet, annotate, no_inline, addresses;
	bool no_python;                 /* --no-python: CPython's frames not read */
	bool no_kernel;                 /* --no-kernel: the kernel's frames not shown */
	int verbose;
	struct thread_group groups[OPTIONS_MAX_GROUPS];
	size_t ngroups;
	struct run_label labels[OPTIONS_MAX_LABELS];
	size_t nlabels;
	unsigned max_depth;
	size_t max_stacks;
	size_t stack_window;            /* bytes */
	bool stack_window_given;        /* --stack-window: a fixed window (else it grows
	                                 * where stacks are cut: unwind.h) */
	enum target_seize_mode seize_mode;
	int rt_priority;                /* 0 = normal scheduling */
	const char *serve_address;      /* --serve: [ADDR:]PORT or unix:PATH; NULL otherwise */
	const char *serve_token_file;   /* --serve-token-file, or NULL */
	unsigned serve_max_seconds;     /* --serve-max-seconds */
};

enum options_result {
	OPTIONS_RUN = 0,                /* profile */
	OPTIONS_EXIT_OK,                /* --help / --version printed */
	OPTIONS_EXIT_USAGE,             /* message printed; exit CS_EXIT_USAGE */
};

enum options_result options_parse(struct options *o, int argc, char **argv);
/* What each room below the modes takes of O, derived here and nowhere
 * else (options_config.c); their pointers are into O. */
/* A build of the profile (builder.h). COMMAND_LINE: the program's. */
void options_build_config(const struct options *o, const char *command_line,
			  struct build_config *out);
/* A sampling session (session.h). */
void options_session_config(const struct options *o, struct session_config *out);
/* What a recording says on standard error (report.h). */
void options_report_config(const struct options *o, struct report_config *out);
/* --dump's snapshot (dump.h). */
void options_dump_config(const struct options *o, struct dump_config *out);
void options_free(struct options *o);
void options_print_help(FILE *out);

#endif
