/* Unit tests for options: good command lines -> the struct fields they set;
 * bad ones -> the exact first line of the message and OPTIONS_EXIT_USAGE;
 * --help and --version. stderr/stdout are captured through a temp file. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "options.h"

#define MAX_ARGS 160

/* ---- running options_parse with a captured stream ------------------------- */

struct run {
	enum options_result result;
	char text[8192];        /* what was written to the captured stream */
	char *argv[MAX_ARGS + 2]; /* lives as long as the run: o->command points here */
};

static void parse_argv_captured(struct options *o, int argc, char **argv,
				int fd_to_capture, struct run *out)
{
	char tmpl[] = "/tmp/test_options.XXXXXX";
	FILE *stream = fd_to_capture == STDOUT_FILENO ? stdout : stderr;
	int tmp, saved;
	ssize_t n;

	tmp = mkstemp(tmpl);
	assert_true(tmp >= 0);
	unlink(tmpl);
	fflush(stream);
	saved = dup(fd_to_capture);
	assert_true(saved >= 0);
	assert_true(dup2(tmp, fd_to_capture) >= 0);

	out->result = options_parse(o, argc, argv);

	fflush(stream);
	assert_true(dup2(saved, fd_to_capture) >= 0);
	close(saved);
	n = pread(tmp, out->text, sizeof out->text - 1, 0);
	assert_true(n >= 0);
	out->text[n] = '\0';
	close(tmp);
}

/* ARGS: a NULL-terminated list, "csampler" prepended. */
static void parse_captured(struct options *o, const char *const *args, int fd_to_capture,
			   struct run *out)
{
	char **argv = out->argv;
	int argc = 0;

	argv[argc++] = (char *)"csampler";
	while (args[argc - 1]) {
		assert_true(argc <= MAX_ARGS);
		argv[argc] = (char *)args[argc - 1];
		argc++;
	}
	argv[argc] = NULL;
	parse_argv_captured(o, argc, argv, fd_to_capture, out);
}

static void first_line(const char *text, char *line, size_t size)
{
	size_t len = strcspn(text, "\n");
	if (len >= size)
		len = size - 1;
	memcpy(line, text, len);
	line[len] = '\0';
}

/* ---- good command lines ------------------------------------------------------- */

enum {
	F_IDLE = 1 << 0, F_THREADS = 1 << 1, F_CHILDREN = 1 << 2, F_DUMP = 1 << 3,
	F_TOP = 1 << 4, F_QUIET = 1 << 5, F_ANNOTATE = 1 << 6, F_NO_INLINE = 1 << 7,
	F_ADDRESSES = 1 << 8,
};

/* Expected fields; a zero means "the default" for rate, max_depth,
 * max_stacks and stack_window. */
struct want {
	pid_t pid;
	const char *cmd[4];             /* first words of the command; NULL: attach */
	double duration;
	unsigned rate;
	size_t noutputs;
	const char *paths[4];
	enum output_format formats[4];
	enum output_format format;
	unsigned flags;
	int verbose;
	unsigned max_depth;
	size_t max_stacks;
	size_t stack_window;
	enum target_seize_mode seize;
	int rt_priority;         /* 0: the default, 1 */
	bool rt_off;             /* --realtime=0 */
	size_t ngroups;
};

struct good_case {
	const char *args[MAX_ARGS];
	struct want want;
};

static const struct good_case good_cases[] = {
	{ { "-p", "123" }, { .pid = 123 } },
	{ { "--pid=4194304" }, { .pid = 4194304 } },
	{ { "-p", "1", "-d", "30" }, { .pid = 1, .duration = 30 } },
	{ { "-p", "1", "-d", "30s" }, { .pid = 1, .duration = 30 } },
	{ { "-p", "1", "-d", "2m" }, { .pid = 1, .duration = 120 } },
	{ { "-p", "1", "-d", "1h" }, { .pid = 1, .duration = 3600 } },
	{ { "-p", "1", "-d", "1.5s" }, { .pid = 1, .duration = 1.5 } },
	{ { "-p", "1", "-d", "500ms" }, { .pid = 1, .duration = 0.5 } },
	{ { "-p", "1", "--duration=.25" }, { .pid = 1, .duration = 0.25 } },
	{ { "-p", "1", "--dur", "7" }, { .pid = 1, .duration = 7 } },
	{ { "-p", "1", "-d", "10", "-d", "20" }, { .pid = 1, .duration = 20 } },
	{ { "-p", "1", "-F", "1" }, { .pid = 1, .rate = 1 } },
	{ { "-p", "1", "-F10000" }, { .pid = 1, .rate = 10000 } },
	{ { "-p", "1", "--rate", "199" }, { .pid = 1, .rate = 199 } },
	{ { "-p", "1", "-o", "out.svg" },
	  { .pid = 1, .noutputs = 1, .paths = { "out.svg" }, .formats = { FORMAT_SVG } } },
	{ { "-p", "1", "-o", "out" },
	  { .pid = 1, .noutputs = 1, .paths = { "out" }, .formats = { FORMAT_PPROF } } },
	{ { "-p", "1", "-o", "a.b/out", "-o", ".hidden" },
	  { .pid = 1, .noutputs = 2, .paths = { "a.b/out", ".hidden" },
	    .formats = { FORMAT_PPROF, FORMAT_PPROF } } },
	{ { "-p", "1", "-f", "svg", "-o", "x.svg" },
	  { .pid = 1, .noutputs = 1, .paths = { "x.svg" }, .formats = { FORMAT_SVG },
	    .format = FORMAT_SVG } },
	{ { "-p", "1", "-o", "x.speedscope.json" },
	  { .pid = 1, .noutputs = 1, .paths = { "x.speedscope.json" },
	    .formats = { FORMAT_SPEEDSCOPE } } },
	{ { "-p", "1", "-f", "speedscope", "-o", "x.json" },
	  { .pid = 1, .noutputs = 1, .paths = { "x.json" }, .formats = { FORMAT_SPEEDSCOPE },
	    .format = FORMAT_SPEEDSCOPE } },
	{ { "-p", "1", "-o", "-" },
	  { .pid = 1, .noutputs = 1, .paths = { "-" }, .formats = { FORMAT_FOLDED } } },
	{ { "-p", "1", "-o", "-", "-f", "svg" },
	  { .pid = 1, .noutputs = 1, .paths = { "-" }, .formats = { FORMAT_SVG },
	    .format = FORMAT_SVG } },
	{ { "-p", "1", "-f", "text", "-o", "report", "-o", "x.folded", "-o", "y.pb.gz" },
	  { .pid = 1, .noutputs = 3, .paths = { "report", "x.folded", "y.pb.gz" },
	    .formats = { FORMAT_TEXT, FORMAT_FOLDED, FORMAT_PPROF }, .format = FORMAT_TEXT } },
	{ { "-p", "1", "-o", "a.pb", "-o", "a.pprof", "-o", "a.collapsed", "-o", "a.txt" },
	  { .pid = 1, .noutputs = 4, .paths = { "a.pb", "a.pprof", "a.collapsed", "a.txt" },
	    .formats = { FORMAT_PPROF, FORMAT_PPROF, FORMAT_FOLDED, FORMAT_TEXT } } },
	{ { "-o", "x", "--", "prog", "-p", "3" },
	  { .cmd = { "prog", "-p", "3" }, .noutputs = 1, .paths = { "x" },
	    .formats = { FORMAT_PPROF } } },
	{ { "-o", "x.svg", "prog", "--idle", "arg" },
	  { .cmd = { "prog", "--idle", "arg" }, .noutputs = 1, .paths = { "x.svg" },
	    .formats = { FORMAT_SVG } } },
	{ { "--", "-weird-name" }, { .cmd = { "-weird-name" } } },
	{ { "-o", "--", "prog" },
	  { .cmd = { "prog" }, .noutputs = 1, .paths = { "--" }, .formats = { FORMAT_PPROF } } },
	{ { "-p", "1", "--" }, { .pid = 1 } },
	{ { "-p", "1", "--idle", "--threads", "--children", "--no-inline", "--annotate",
	    "-o", "x.folded" },
	  { .pid = 1, .flags = F_IDLE | F_THREADS | F_CHILDREN | F_NO_INLINE | F_ANNOTATE,
	    .noutputs = 1, .paths = { "x.folded" }, .formats = { FORMAT_FOLDED } } },
	{ { "-p", "1", "--annotate", "-f", "folded", "-o", "x" },
	  { .pid = 1, .flags = F_ANNOTATE, .format = FORMAT_FOLDED, .noutputs = 1,
	    .paths = { "x" }, .formats = { FORMAT_FOLDED } } },
	{ { "-p", "1", "--addresses" }, { .pid = 1, .flags = F_ADDRESSES } },
	{ { "-p", "1", "--max-depth", "4", "--max-stacks", "16", "--stack-window", "4k" },
	  { .pid = 1, .max_depth = 4, .max_stacks = 16, .stack_window = 4096 } },
	{ { "-p", "1", "--max-depth=65536", "--max-stacks=10000000", "--stack-window=8m" },
	  { .pid = 1, .max_depth = 65536, .max_stacks = 10000000,
	    .stack_window = 8 * 1024 * 1024 } },
	{ { "-p", "1", "--stack-window", "65536" }, { .pid = 1, .stack_window = 65536 } },
	{ { "-p", "1", "--stack-window", "128K" }, { .pid = 1, .stack_window = 131072 } },
	{ { "-p", "1", "--stack-window", "1M" }, { .pid = 1, .stack_window = 1048576 } },
	{ { "-p", "1", "--attach-mode", "per-sample" },
	  { .pid = 1, .seize = TARGET_SEIZE_PER_SAMPLE } },
	{ { "-p", "1", "--attach-mode=persistent" },
	  { .pid = 1, .seize = TARGET_SEIZE_PERSISTENT } },
	{ { "-p", "1", "--realtime" }, { .pid = 1, .rt_priority = 1 } },
	{ { "-p", "1", "--realtime=50" }, { .pid = 1, .rt_priority = 50 } },
	{ { "--realtime", "prog" }, { .cmd = { "prog" }, .rt_priority = 1 } },
	{ { "-p", "1", "--realtime=0" }, { .pid = 1, .rt_off = true } },
	{ { "-p", "5", "--dump" }, { .pid = 5, .flags = F_DUMP } },
	{ { "-p", "5", "--dump", "-v", "--no-inline", "--max-depth=64" },
	  { .pid = 5, .flags = F_DUMP | F_NO_INLINE, .verbose = 1, .max_depth = 64 } },
	{ { "-p", "5", "--top", "--idle", "-d", "3" },
	  { .pid = 5, .flags = F_TOP | F_IDLE, .duration = 3 } },
	{ { "-p", "5", "-vvv" }, { .pid = 5, .verbose = 3 } },
	{ { "-v", "-p", "5", "--verbose" }, { .pid = 5, .verbose = 2 } },
	{ { "-qp", "5" }, { .pid = 5, .flags = F_QUIET } },
	{ { "--quiet", "prog" }, { .cmd = { "prog" }, .flags = F_QUIET } },
	{ { "-p", "1", "--thread-group", "worker-[0-9]+=worker", "--thread-group=a=b=c" },
	  { .pid = 1, .ngroups = 2 } },
};

static void check_good_case(const struct good_case *tc)
{
	struct options o;
	struct run run;
	const struct want *w = &tc->want;
	unsigned flags;

	parse_captured(&o, tc->args, STDERR_FILENO, &run);
	if (run.result != OPTIONS_RUN)
		fail_msg("%s ...: refused: %s", tc->args[0], run.text);
	assert_string_equal(run.text, "");

	assert_int_equal(o.pid, w->pid);
	if (w->cmd[0]) {
		assert_non_null(o.command);
		for (size_t i = 0; i < 4 && w->cmd[i]; i++)
			assert_string_equal(o.command[i], w->cmd[i]);
	} else {
		assert_null(o.command);
	}
	assert_true(o.duration == w->duration);
	assert_int_equal(o.rate, w->rate ? w->rate : 99);
	assert_int_equal(o.noutputs, w->noutputs);
	for (size_t i = 0; i < w->noutputs; i++) {
		assert_string_equal(o.outputs[i].path, w->paths[i]);
		assert_int_equal(o.outputs[i].format, w->formats[i]);
	}
	assert_int_equal(o.format, w->format);
	flags = (o.idle ? F_IDLE : 0) | (o.threads ? F_THREADS : 0) |
		(o.children ? F_CHILDREN : 0) | (o.mode == MODE_DUMP ? F_DUMP : 0) | (o.mode == MODE_TOP ? F_TOP : 0) |
		(o.quiet ? F_QUIET : 0) | (o.annotate ? F_ANNOTATE : 0) |
		(o.no_inline ? F_NO_INLINE : 0) | (o.addresses ? F_ADDRESSES : 0);
	assert_int_equal(flags, w->flags);
	assert_int_equal(o.verbose, w->verbose);
	assert_int_equal(o.max_depth, w->max_depth ? w->max_depth : 4096);
	assert_int_equal(o.max_stacks, w->max_stacks ? w->max_stacks : 65536);
	assert_int_equal(o.stack_window, w->stack_window ? w->stack_window : 65536);
	assert_int_equal(o.seize_mode, w->seize);
	assert_int_equal(o.rt_priority, w->rt_off ? 0 : w->rt_priority ? w->rt_priority : 1);
	assert_int_equal(o.ngroups, w->ngroups);
	options_free(&o);
	assert_int_equal(o.ngroups, 0);
}

static void test_good_command_lines(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof good_cases / sizeof good_cases[0]; i++)
		check_good_case(&good_cases[i]);
}

/* -i with outputs is the convert mode; their formats from their names. */
static void test_input(void **state)
{
	(void)state;
	struct options o;
	struct run run;
	const char *a[] = { "-i", "rec.pb.gz", "-o", "x.svg", "-o", "-", "--threads", NULL };
	parse_captured(&o, a, STDERR_FILENO, &run);
	assert_int_equal(run.result, OPTIONS_RUN);
	assert_int_equal(o.mode, MODE_CONVERT);
	assert_string_equal(o.input, "rec.pb.gz");
	assert_int_equal(o.noutputs, 2);
	assert_int_equal(o.outputs[0].format, FORMAT_SVG);
	assert_int_equal(o.outputs[1].format, FORMAT_FOLDED);
	assert_true(o.threads);
	options_free(&o);
}

/* -t alone names what to profile; with -p too; repeatable up to the bound. */
static void test_tids(void **state)
{
	(void)state;
	struct options o;
	struct run run;
	const char *a1[] = { "-t", "42", "--tid=43", "-d", "1", NULL };
	parse_captured(&o, a1, STDERR_FILENO, &run);
	assert_int_equal(run.result, OPTIONS_RUN);
	assert_int_equal(o.pid, 0);
	assert_int_equal(o.ntids, 2);
	assert_int_equal(o.tids[0], 42);
	assert_int_equal(o.tids[1], 43);
	options_free(&o);
	const char *a2[] = { "-p", "7", "-t", "8", "--top", NULL };
	parse_captured(&o, a2, STDERR_FILENO, &run);
	assert_int_equal(run.result, OPTIONS_RUN);
	assert_int_equal(o.pid, 7);
	assert_int_equal(o.ntids, 1);
	options_free(&o);
	char many[OPTIONS_MAX_TIDS + 1][12];
	const char *a3[2 * (OPTIONS_MAX_TIDS + 1) + 1];
	size_t n = 0;
	for (int i = 0; i <= OPTIONS_MAX_TIDS; i++) {
		snprintf(many[i], sizeof many[i], "%d", 100 + i);
		a3[n++] = "-t";
		a3[n++] = many[i];
	}
	a3[n] = NULL;
	parse_captured(&o, a3, STDERR_FILENO, &run);
	assert_int_equal(run.result, OPTIONS_EXIT_USAGE);
	assert_non_null(strstr(run.text, "too many -t threads (at most 64)"));
}

/* --label: key and value split at the first '='; the value may be empty
 * or hold anything; the bounds on length and count. */
static void test_labels(void **state)
{
	(void)state;
	struct options o;
	struct run run;
	const char *args[] = { "csampler", "-p", "1", "--label", "service=api", "--label=v_2=a=b c",
			       "--label", "empty=", NULL };
	parse_captured(&o, args + 1, STDERR_FILENO, &run);
	assert_int_equal(run.result, OPTIONS_RUN);
	assert_int_equal(o.nlabels, 3);
	assert_string_equal(o.labels[0].key, "service");
	assert_string_equal(o.labels[0].value, "api");
	assert_string_equal(o.labels[1].key, "v_2");
	assert_string_equal(o.labels[1].value, "a=b c");
	assert_string_equal(o.labels[2].key, "empty");
	assert_string_equal(o.labels[2].value, "");
	options_free(&o);

	char longkey[80], longval[300], many[OPTIONS_MAX_LABELS + 1][16];
	memset(longkey, 'k', 64);
	memcpy(longkey + 64, "=x", 3);
	const char *a1[] = { "-p", "1", "--label", longkey, NULL };
	parse_captured(&o, a1, STDERR_FILENO, &run);
	assert_int_equal(run.result, OPTIONS_EXIT_USAGE);
	assert_non_null(strstr(run.text, "key longer than 63 bytes"));
	memcpy(longval, "k=", 2);
	memset(longval + 2, 'v', 257);
	longval[259] = '\0';
	const char *a2[] = { "-p", "1", "--label", longval, NULL };
	parse_captured(&o, a2, STDERR_FILENO, &run);
	assert_int_equal(run.result, OPTIONS_EXIT_USAGE);
	assert_non_null(strstr(run.text, "value longer than 256 bytes"));
	const char *a3[3 + 2 * (OPTIONS_MAX_LABELS + 1)];
	size_t n = 0;
	a3[n++] = "-p";
	a3[n++] = "1";
	for (int i = 0; i <= OPTIONS_MAX_LABELS; i++) {
		snprintf(many[i], sizeof many[i], "k%d=v", i);
		a3[n++] = "--label";
		a3[n++] = many[i];
	}
	a3[n] = NULL;
	parse_captured(&o, a3, STDERR_FILENO, &run);
	assert_int_equal(run.result, OPTIONS_EXIT_USAGE);
	assert_non_null(strstr(run.text, "too many --label options (at most 16)"));
}

/* The groups are anchored to the whole name, split at the last '='. */
static void test_thread_groups_match_whole_names(void **state)
{
	static const char *const args[] = {
		"-p", "1", "--thread-group", "worker-[0-9]+=worker",
		"--thread-group", "a=b=c", "--thread-group", "x|y=xy", NULL,
	};
	struct options o;
	struct run run;

	(void)state;
	parse_captured(&o, args, STDERR_FILENO, &run);
	assert_int_equal(run.result, OPTIONS_RUN);
	assert_int_equal(o.ngroups, 3);
	assert_string_equal(o.groups[0].name, "worker");
	assert_int_equal(regexec(&o.groups[0].re, "worker-12", 0, NULL, 0), 0);
	assert_int_not_equal(regexec(&o.groups[0].re, "worker-", 0, NULL, 0), 0);
	assert_int_not_equal(regexec(&o.groups[0].re, "xworker-12", 0, NULL, 0), 0);
	assert_int_not_equal(regexec(&o.groups[0].re, "worker-12x", 0, NULL, 0), 0);
	assert_string_equal(o.groups[1].name, "c");
	assert_int_equal(regexec(&o.groups[1].re, "a=b", 0, NULL, 0), 0);
	assert_string_equal(o.groups[2].name, "xy");
	assert_int_equal(regexec(&o.groups[2].re, "x", 0, NULL, 0), 0);
	assert_int_equal(regexec(&o.groups[2].re, "y", 0, NULL, 0), 0);
	assert_int_not_equal(regexec(&o.groups[2].re, "xy", 0, NULL, 0), 0);
	assert_int_not_equal(regexec(&o.groups[2].re, "ay", 0, NULL, 0), 0);
	options_free(&o);
	options_free(&o);       /* idempotent */
}

/* ---- bad command lines ------------------------------------------------------- */

struct bad_case {
	const char *args[MAX_ARGS];
	const char *message;            /* the exact first line on stderr */
};

static const struct bad_case bad_cases[] = {
	{ { NULL }, "csampler: nothing to profile: give -p PID or a command to run" },
	{ { "-v" }, "csampler: nothing to profile: give -p PID or a command to run" },
	{ { "--" }, "csampler: no command after '--'" },
	{ { "-p", "1", "prog" },
	  "csampler: give either -p PID or a command to run, not both (command: 'prog')" },
	{ { "-p", "abc" }, "csampler: invalid process id 'abc'" },
	{ { "-p", "0" }, "csampler: invalid process id '0'" },
	{ { "-p", "-5" }, "csampler: invalid process id '-5'" },
	{ { "-p", "+5" }, "csampler: invalid process id '+5'" },
	{ { "-p", " 5" }, "csampler: invalid process id ' 5'" },
	{ { "-p", "4194305" }, "csampler: invalid process id '4194305'" },
	{ { "-p", "99999999999999999999999" },
	  "csampler: invalid process id '99999999999999999999999'" },
	{ { "-p", "1", "-p", "2" }, "csampler: only one -p PID at a time" },
	{ { "-p", "1", "-d", "x" },
	  "csampler: invalid duration 'x' (examples: 30, 30s, 2m, 1.5s, 500ms)" },
	{ { "-p", "1", "-d", "" },
	  "csampler: invalid duration '' (examples: 30, 30s, 2m, 1.5s, 500ms)" },
	{ { "-p", "1", "-d", "10x" },
	  "csampler: invalid duration '10x' (examples: 30, 30s, 2m, 1.5s, 500ms)" },
	{ { "-p", "1", "-d", "-1" },
	  "csampler: invalid duration '-1' (examples: 30, 30s, 2m, 1.5s, 500ms)" },
	{ { "-p", "1", "-d", "1e3" },
	  "csampler: invalid duration '1e3' (examples: 30, 30s, 2m, 1.5s, 500ms)" },
	{ { "-p", "1", "-d", "1.2.3" },
	  "csampler: invalid duration '1.2.3' (examples: 30, 30s, 2m, 1.5s, 500ms)" },
	{ { "-p", "1", "-d", "s" },
	  "csampler: invalid duration 's' (examples: 30, 30s, 2m, 1.5s, 500ms)" },
	{ { "-p", "1", "-d", "inf" },
	  "csampler: invalid duration 'inf' (examples: 30, 30s, 2m, 1.5s, 500ms)" },
	{ { "-p", "1", "-d", "0" },
	  "csampler: duration must be greater than 0 (without -d, csampler runs until the "
	  "target exits or Ctrl-C)" },
	{ { "-p", "1", "-d", "0ms" },
	  "csampler: duration must be greater than 0 (without -d, csampler runs until the "
	  "target exits or Ctrl-C)" },
	{ { "-p", "1", "-d", "9000h" },
	  "csampler: duration '9000h' is too long (at most 366 days)" },
	{ { "-p", "1", "-F", "0" },
	  "csampler: invalid rate '0': expected a whole number of Hz from 1 to 10000" },
	{ { "-p", "1", "-F", "10001" },
	  "csampler: invalid rate '10001': expected a whole number of Hz from 1 to 10000" },
	{ { "-p", "1", "--rate=99.5" },
	  "csampler: invalid rate '99.5': expected a whole number of Hz from 1 to 10000" },
	{ { "-p", "1", "-f", "png" },
	  "csampler: invalid format 'png': expected pprof, folded, svg, text or speedscope" },
	{ { "-p", "1", "-o", "" }, "csampler: empty file name for --output" },
	{ { "-p", "1", "-o", "a", "-o", "a" }, "csampler: output file 'a' given twice" },
	{ { "-p", "1", "-o", "a.folded", "-o", "./a.folded" },
	  "csampler: output file './a.folded' given twice (as 'a.folded')" },
	{ { "-p", "1", "-o", "/tmp/a.svg", "-o", "/tmp/./a.svg" },
	  "csampler: output file '/tmp/./a.svg' given twice (as '/tmp/a.svg')" },
	{ { "-p", "1", "-o", "/" },
	  "csampler: --output '/' is a directory: name a file (e.g. '/profile.pb.gz')" },
	{ { "-p", "1", "-o", "/tmp" },
	  "csampler: --output '/tmp' is a directory: name a file (e.g. '/tmp/profile.pb.gz')" },
	{ { "-p", "1", "-o", "no-such-dir/" },
	  "csampler: --output 'no-such-dir/' is a directory: name a file (e.g. "
	  "'no-such-dir/profile.pb.gz')" },
	{ { "-p", "1", "-o", "-", "-o", "x.svg", "-o", "-" },
	  "csampler: standard output ('-o -') given twice" },
	{ { "-p", "1", "-f", "svg", "-o", "a.svg", "-o", "b.folded" },
	  "csampler: --format svg applies to no output: every --output file name has its "
	  "own format extension ('b.folded' is folded)" },
	{ { "-p", "1", "-o", "out.json" },
	  "csampler: unknown output file extension '.json' in 'out.json': use one of .pb.gz, "
	  ".pb, .pprof, .folded, .collapsed, .svg, .txt, .speedscope.json, or name the format "
	  "with --format" },
	{ { "-p", "1", "-o", "x.svg", "-o", "dir.d/out.html" },
	  "csampler: unknown output file extension '.html' in 'dir.d/out.html': use one of "
	  ".pb.gz, .pb, .pprof, .folded, .collapsed, .svg, .txt, .speedscope.json, or name "
	  "the format with --format" },
	{ { "-p", "1", "-f", "folded" },
	  "csampler: --format folded applies to no output: the default file is pprof; name "
	  "one with --output" },
	{ { "-p", "1", "--annotate", "-f", "folded" },
	  "csampler: --format folded applies to no output: the default file is pprof; name "
	  "one with --output" },
	{ { "--dump", "prog" }, "csampler: --dump needs -p PID: it snapshots a running process" },
	{ { "--dump", "-p", "1", "-o", "x" },
	  "csampler: --dump cannot be combined with --output: it prints one snapshot of "
	  "every thread to standard output" },
	{ { "--dump", "-p", "1", "-d", "3" },
	  "csampler: --dump cannot be combined with --duration: it prints one snapshot of "
	  "every thread to standard output" },
	{ { "--dump", "--top", "-p", "1" },
	  "csampler: --dump cannot be combined with --top: it prints one snapshot of "
	  "every thread to standard output" },
	{ { "--dump", "-F", "9", "-p", "1" },
	  "csampler: --dump cannot be combined with --rate: it prints one snapshot of "
	  "every thread to standard output" },
	{ { "--dump", "--idle", "-p", "1" },
	  "csampler: --dump cannot be combined with --idle: it prints one snapshot of "
	  "every thread to standard output" },
	{ { "--top", "-o", "x", "-p", "1" },
	  "csampler: --top cannot be combined with --output: it shows a live view instead "
	  "of writing a profile" },
	{ { "--top", "-f", "svg", "-p", "1" },
	  "csampler: --top cannot be combined with --format: it writes no file" },
	{ { "--top", "--threads", "-p", "1" },
	  "csampler: --top cannot be combined with --threads: it ranks functions over all threads" },
	{ { "-q", "-v", "-p", "1" }, "csampler: --quiet and --verbose contradict each other" },
	{ { "-p", "1", "--addresses", "--no-inline" },
	  "csampler: --no-inline has no effect with --addresses (addresses are not symbolized)" },
	{ { "-p", "1", "--addresses", "--annotate", "-o", "-" },
	  "csampler: --annotate has no effect with --addresses (inline and JIT frames need "
	  "symbols)" },
	{ { "-p", "1", "--annotate" },
	  "csampler: --annotate only changes folded output, and no output is folded" },
	{ { "-p", "1", "--annotate", "-o", "x.svg" },
	  "csampler: --annotate only changes folded output, and no output is folded" },
	{ { "-p", "1", "--annotate", "--top" },
	  "csampler: --annotate only changes folded output, and --top writes none" },
	{ { "-p", "1", "--label", "noeq" },
	  "csampler: invalid --label 'noeq': expected KEY=VALUE (e.g. service=api)" },
	{ { "-p", "1", "--label", "=x" }, "csampler: invalid --label '=x': empty key" },
	{ { "-p", "1", "--label", "9lives=x" },
	  "csampler: invalid --label key '9lives': letters, digits and '_', not starting with a "
	  "digit (e.g. service_name=api)" },
	{ { "-p", "1", "--label", "service.name=x" },
	  "csampler: invalid --label key 'service.name': letters, digits and '_', not starting "
	  "with a digit (e.g. service_name=api)" },
	{ { "-p", "1", "--label", "tid=7" },
	  "csampler: --label key 'tid' is csampler's own label on every sample: choose another key" },
	{ { "-p", "1", "--label", "a=1", "--label", "a=2" }, "csampler: --label a given twice" },
	{ { "-i", "x.pb.gz" },
	  "csampler: -i needs -o FILE: the format is taken from its name (e.g. -o out.svg, -o - for "
	  "folded stacks)" },
	{ { "-i", "x.pb.gz", "-p", "1", "-o", "y.svg" },
	  "csampler: -i reads a profile recorded before: -p has no effect on it" },
	{ { "-i", "x.pb.gz", "-F", "99", "-o", "y.svg" },
	  "csampler: -i reads a profile recorded before: --rate has no effect on it" },
	{ { "-i", "x.pb.gz", "-o", "y.svg", "prog" },
	  "csampler: -i reads a profile recorded before: a command to run has no effect on it" },
	{ { "-i", "a", "-i", "b", "-o", "y.svg" }, "csampler: two -i FILE: add --diff to compare them" },
	{ { "-i", "a", "-i", "b", "-i", "c", "--diff", "-o", "y.svg" },
	  "csampler: at most two -i FILE (with --diff)" },
	{ { "-i", "a", "--diff", "-o", "y.svg" },
	  "csampler: --diff compares two profiles: -i BASE.pb.gz -i NEW.pb.gz --diff -o diff.svg" },
	{ { "-i", "a", "-i", "b", "--diff", "-o", "y.pb.gz" },
	  "csampler: --diff writes folded, svg or text (for pprof, compare with go tool pprof "
	  "-diff_base BASE NEW)" },
	{ { "-t", "0" }, "csampler: invalid thread id '0'" },
	{ { "-t", "5", "-t", "5" }, "csampler: thread 5 given twice" },
	{ { "-t", "5", "prog" },
	  "csampler: -t names threads of a running process: give -p PID or -t TID, or a command "
	  "to run, not both (command: 'prog')" },
	{ { "-t", "5", "--children" },
	  "csampler: -t samples the threads given, and --children follows new processes: not both" },
	{ { "-t", "5", "--dump" },
	  "csampler: --dump prints every thread of the process: give -p PID, not -t" },
	{ { "-p", "1", "--label", "a=1", "--top" },
	  "csampler: --label marks the samples of a profile, and --top writes none" },
	{ { "-p", "1", "--thread-group", "x[=y" },
	  "csampler: invalid regular expression 'x[' in --thread-group: Invalid regular "
	  "expression" },
	{ { "-p", "1", "--thread-group", "a)|(b=y" },
	  "csampler: invalid regular expression 'a)|(b' in --thread-group: Unmatched ( or \\(" },
	{ { "-p", "1", "--thread-group", "noeq" },
	  "csampler: invalid --thread-group 'noeq': expected REGEX=NAME" },
	{ { "-p", "1", "--thread-group", "=y" },
	  "csampler: invalid --thread-group '=y': empty regular expression" },
	{ { "-p", "1", "--thread-group", "x=" },
	  "csampler: invalid --thread-group 'x=': empty group name" },
	{ { "-p", "1", "--thread-group", "ok=1", "--thread-group", "(=2" },
	  "csampler: invalid regular expression '(' in --thread-group: Unmatched ( or \\(" },
	{ { "-p", "1", "--max-depth", "3" },
	  "csampler: invalid --max-depth '3': expected a number from 4 to 65536" },
	{ { "-p", "1", "--max-depth", "65537" },
	  "csampler: invalid --max-depth '65537': expected a number from 4 to 65536" },
	{ { "-p", "1", "--max-stacks", "15" },
	  "csampler: invalid --max-stacks '15': expected a number from 16 to 10000000" },
	{ { "-p", "1", "--max-stacks", "10000001" },
	  "csampler: invalid --max-stacks '10000001': expected a number from 16 to 10000000" },
	{ { "-p", "1", "--stack-window", "1k" },
	  "csampler: invalid --stack-window '1k': expected a size from 4k to 8m" },
	{ { "-p", "1", "--stack-window", "9m" },
	  "csampler: invalid --stack-window '9m': expected a size from 4k to 8m" },
	{ { "-p", "1", "--stack-window", "64q" },
	  "csampler: invalid --stack-window '64q': expected a size from 4k to 8m" },
	{ { "-p", "1", "--stack-window", "k" },
	  "csampler: invalid --stack-window 'k': expected a size from 4k to 8m" },
	{ { "-p", "1", "--attach-mode", "sometimes" },
	  "csampler: invalid --attach-mode 'sometimes': expected persistent or per-sample" },
	{ { "-p", "1", "--realtime=-1" },
	  "csampler: invalid --realtime priority '-1': expected a number from 0 to 99" },
	{ { "-p", "1", "--realtime=100" },
	  "csampler: invalid --realtime priority '100': expected a number from 0 to 99" },
	{ { "-p", "1", "--realtime", "50" }, "csampler: give the priority as --realtime=50" },
	{ { "--bogus" }, "csampler: unknown option '--bogus'" },
	{ { "--bogus=3" }, "csampler: unknown option '--bogus'" },
	{ { "-x" }, "csampler: unknown option '-x'" },
	{ { "-qx" }, "csampler: unknown option '-x'" },
	{ { "--idle", "-xq" }, "csampler: unknown option '-x'" },
	{ { "-p" }, "csampler: option '-p' requires an argument" },
	{ { "-q", "-d" }, "csampler: option '-d' requires an argument" },
	{ { "--pid" }, "csampler: option '--pid' requires an argument" },
	{ { "-p", "1", "--thread-g" }, "csampler: option '--thread-group' requires an argument" },
	{ { "--idle=1", "-p", "1" }, "csampler: option '--idle' takes no argument" },
	{ { "--t", "-p", "1" },
	  "csampler: option '--t' is ambiguous (--tid, --threads, --thread-group, --top)" },
	{ { "--thread=x", "-p", "1" },
	  "csampler: option '--thread' is ambiguous (--threads, --thread-group)" },
};

static void check_bad_case(const struct bad_case *tc)
{
	struct options o;
	struct run run;
	char line[1024];
	const char *second;

	parse_captured(&o, tc->args, STDERR_FILENO, &run);
	first_line(run.text, line, sizeof line);
	if (run.result != OPTIONS_EXIT_USAGE)
		fail_msg("'%s ...' accepted (result %d), expected \"%s\"",
			 tc->args[0] ? tc->args[0] : "", run.result, tc->message);
	assert_string_equal(line, tc->message);
	second = strchr(run.text, '\n');
	assert_non_null(second);
	assert_string_equal(second + 1, "Try 'csampler --help' for more information.\n");
	options_free(&o);
}

static void test_bad_command_lines(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++)
		check_bad_case(&bad_cases[i]);
}

static void test_too_many_outputs(void **state)
{
	char *argv[3 + 2 * (OPTIONS_MAX_OUTPUTS + 1) + 1];
	char names[OPTIONS_MAX_OUTPUTS + 1][8];
	char line[256];
	int argc = 0;
	struct options o;
	struct run run;

	(void)state;
	argv[argc++] = (char *)"csampler";
	argv[argc++] = (char *)"-p";
	argv[argc++] = (char *)"1";
	for (int i = 0; i <= OPTIONS_MAX_OUTPUTS; i++) {
		snprintf(names[i], sizeof names[i], "f%d", i);
		argv[argc++] = (char *)"-o";
		argv[argc++] = names[i];
	}
	argv[argc] = NULL;
	parse_argv_captured(&o, argc, argv, STDERR_FILENO, &run);
	assert_int_equal(run.result, OPTIONS_EXIT_USAGE);
	first_line(run.text, line, sizeof line);
	assert_string_equal(line, "csampler: too many --output files (at most 16)");
	options_free(&o);

	/* exactly the maximum is fine */
	argc -= 2;
	argv[argc] = NULL;
	parse_argv_captured(&o, argc, argv, STDERR_FILENO, &run);
	assert_int_equal(run.result, OPTIONS_RUN);
	assert_int_equal(o.noutputs, OPTIONS_MAX_OUTPUTS);
	assert_string_equal(o.outputs[15].path, "f15");
	options_free(&o);
}

/* Options after the command's name belong to the command. */
static void test_command_keeps_its_options(void **state)
{
	static const char *const args[] = { "prog", "-p", "1", NULL };
	struct options o;
	struct run run;

	(void)state;
	parse_captured(&o, args, STDERR_FILENO, &run);
	assert_int_equal(run.result, OPTIONS_RUN);
	assert_int_equal(o.pid, 0);
	assert_string_equal(o.command[0], "prog");
	assert_string_equal(o.command[1], "-p");
	assert_string_equal(o.command[2], "1");
	assert_null(o.command[3]);
	options_free(&o);
}

/* ---- --help and --version ------------------------------------------------------ */

static void test_help(void **state)
{
	static const char *const args[] = { "-p", "1", "--help", "--bogus", NULL };
	struct options o;
	struct run run;
	const char *line;

	(void)state;
	parse_captured(&o, args, STDOUT_FILENO, &run);
	assert_int_equal(run.result, OPTIONS_EXIT_OK);
	assert_true(strncmp(run.text, "Usage: csampler ", 16) == 0);
	for (line = run.text; *line; ) {
		size_t len = strcspn(line, "\n");
		if (len > 79)
			fail_msg("help line wider than 79 columns: %.*s", (int)len, line);
		line += len + (line[len] == '\n');
	}
	for (const char *const *s = (const char *const[]){ "Target:", "Sampling:", "Output:",
		     "Display:", "Misc:", "--thread-group=REGEX=NAME", "--realtime[=PRIO]",
		     "--stack-window=SIZE", "--attach-mode=MODE", "--dump", "--top", NULL };
	     *s; s++)
		if (!strstr(run.text, *s))
			fail_msg("help does not mention %s", *s);
	options_free(&o);
}

static void test_version(void **state)
{
	static const char *const args[] = { "-V", NULL };
	struct options o;
	struct run run;

	(void)state;
	parse_captured(&o, args, STDOUT_FILENO, &run);
	assert_int_equal(run.result, OPTIONS_EXIT_OK);
	assert_string_equal(run.text, "csampler " PACKAGE_VERSION "\n");
	options_free(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_command_lines),
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_tids),
		cmocka_unit_test(test_input),
		cmocka_unit_test(test_thread_groups_match_whole_names),
		cmocka_unit_test(test_bad_command_lines),
		cmocka_unit_test(test_too_many_outputs),
		cmocka_unit_test(test_command_keeps_its_options),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_version),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
