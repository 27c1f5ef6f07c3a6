/* options: the command line -> one struct options (see options.h).
 *
 * Parsing only records what was given; every rule that involves more than
 * one option (conflicts, combinations, the output formats) is checked once,
 * in validate_options, after the whole line was read. Every refusal prints one
 * line naming the precise reason, then the --help hint, and returns
 * OPTIONS_EXIT_USAGE. */
#include "config.h"

#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "clock.h"
#include "error.h"
#include "options_internal.h"
#include "outfile.h"
#include "serve_params.h"

#define MIN_RATE             1u
#define MAX_RATE             10000u
#define DEFAULT_MAX_DEPTH    1024u
#define MIN_MAX_DEPTH        4u
#define MAX_MAX_DEPTH        65536u
#define DEFAULT_MAX_STACKS   65536u
#define DEFAULT_SERVE_MAX_SECONDS 300u
#define MIN_MAX_STACKS       16u
#define MAX_MAX_STACKS       10000000u
#define DEFAULT_STACK_WINDOW (64u * 1024u)
#define MIN_STACK_WINDOW     (4u * 1024u)
#define MAX_STACK_WINDOW     (8u * 1024u * 1024u)
#define DEFAULT_RT_PRIORITY  1
#define MIN_RT_PRIORITY      0
#define MAX_RT_PRIORITY      99
#define MAX_PID              4194304ull          /* PID_MAX_LIMIT on 64-bit */
#define MAX_DURATION         (366.0 * 24 * 3600) /* a year: far from any overflow */

/* Long-only options: values outside the range of characters. */
enum {
	OPT_IDLE = 256,
	OPT_THREADS,
	OPT_THREAD_GROUP,
	OPT_CHILDREN,
	OPT_MAX_DEPTH,
	OPT_MAX_STACKS,
	OPT_STACK_WINDOW,
	OPT_ATTACH_MODE,
	OPT_REALTIME,
	OPT_NO_INLINE,
	OPT_ADDRESSES,
	OPT_ANNOTATE,
	OPT_DUMP,
	OPT_TOP,
	OPT_INTERVAL,
	OPT_SERVE,
	OPT_SERVE_TOKEN_FILE,
	OPT_SERVE_MAX_SECONDS,
	OPT_BACKEND,
	OPT_LABEL,
	OPT_INPUT,
	OPT_DIFF,
};

static const struct option long_options[] = {
	{ "pid",          required_argument, NULL, 'p' },
	{ "tid",          required_argument, NULL, 't' },
	{ "input",        required_argument, NULL, 'i' },
	{ "diff",         no_argument,       NULL, OPT_DIFF },
	{ "duration",     required_argument, NULL, 'd' },
	{ "rate",         required_argument, NULL, 'F' },
	{ "output",       required_argument, NULL, 'o' },
	{ "format",       required_argument, NULL, 'f' },
	{ "idle",         no_argument,       NULL, OPT_IDLE },
	{ "threads",      no_argument,       NULL, OPT_THREADS },
	{ "thread-group", required_argument, NULL, OPT_THREAD_GROUP },
	{ "label",        required_argument, NULL, OPT_LABEL },
	{ "children",     no_argument,       NULL, OPT_CHILDREN },
	{ "max-depth",    required_argument, NULL, OPT_MAX_DEPTH },
	{ "max-stacks",   required_argument, NULL, OPT_MAX_STACKS },
	{ "stack-window", required_argument, NULL, OPT_STACK_WINDOW },
	{ "attach-mode",  required_argument, NULL, OPT_ATTACH_MODE },
	{ "backend",      required_argument, NULL, OPT_BACKEND },
	{ "realtime",     optional_argument, NULL, OPT_REALTIME },
	{ "no-inline",    no_argument,       NULL, OPT_NO_INLINE },
	{ "addresses",    no_argument,       NULL, OPT_ADDRESSES },
	{ "annotate",     no_argument,       NULL, OPT_ANNOTATE },
	{ "dump",         no_argument,       NULL, OPT_DUMP },
	{ "top",          no_argument,       NULL, OPT_TOP },
	{ "interval",     required_argument, NULL, OPT_INTERVAL },
	{ "serve",        required_argument, NULL, OPT_SERVE },
	{ "serve-token-file",  required_argument, NULL, OPT_SERVE_TOKEN_FILE },
	{ "serve-max-seconds", required_argument, NULL, OPT_SERVE_MAX_SECONDS },
	{ "quiet",        no_argument,       NULL, 'q' },
	{ "verbose",      no_argument,       NULL, 'v' },
	{ "help",         no_argument,       NULL, 'h' },
	{ "version",      no_argument,       NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

/* "+": stop at the first non-option (the command's name); ":": report a
 * missing argument as ':' so we print our own message. */
static const char short_options[] = "+:p:t:i:d:F:o:f:qvhV";

/* What the command line said explicitly, for the combination rules. */
struct given {
	bool pid, duration, rate, format, max_stacks, attach_mode, realtime;
	bool dump, top;                 /* the modes asked for (o->mode is one) */
	bool interval;
	bool serve_token_file, serve_max_seconds;
	const char *format_arg;
};

__attribute__((format(printf, 1, 2)))
enum options_result opt_usage_error(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	if (vsnprintf(msg, sizeof msg, fmt, ap) < 0)
		msg[0] = '\0';
	va_end(ap);
	warn("%s", msg);
	fputs("Try 'csampler --help' for more information.\n", stderr);
	return OPTIONS_EXIT_USAGE;
}

/* ---- options that need more than a number --------------------------------- */

/* Whether two output paths name one file: the same text, or the same
 * real parent directory and base name ("a.folded" and "./a.folded"). */
static bool same_output(const char *a, const char *b)
{
	if (strcmp(a, b) == 0)
		return true;
	if (strcmp(a, "-") == 0 || strcmp(b, "-") == 0)
		return false;
	const char *base_a = strrchr(a, '/'), *base_b = strrchr(b, '/');
	base_a = base_a ? base_a + 1 : a;
	base_b = base_b ? base_b + 1 : b;
	if (strcmp(base_a, base_b) != 0)
		return false;
	char dir_a[PATH_MAX], dir_b[PATH_MAX], real_a[PATH_MAX], real_b[PATH_MAX];
	size_t la = (size_t)(base_a - a), lb = (size_t)(base_b - b);
	if (la >= sizeof dir_a || lb >= sizeof dir_b)
		return false;
	memcpy(dir_a, la ? a : ".", la ? la : 2);
	dir_a[la ? la : 1] = '\0';
	memcpy(dir_b, lb ? b : ".", lb ? lb : 2);
	dir_b[lb ? lb : 1] = '\0';
	return realpath(dir_a, real_a) && realpath(dir_b, real_b) && strcmp(real_a, real_b) == 0;
}

static enum options_result add_output(struct options *o, const char *path)
{
	struct stat st;
	size_t len = strlen(path);

	if (path[0] == '\0')
		return opt_usage_error("empty file name for --output");
	if (o->noutputs == OPTIONS_MAX_OUTPUTS)
		return opt_usage_error("too many --output files (at most %d)", OPTIONS_MAX_OUTPUTS);
	if (strcmp(path, "-") != 0 &&
	    (path[len - 1] == '/' || (stat(path, &st) == 0 && S_ISDIR(st.st_mode))))
		return opt_usage_error("--output '%s' is a directory: name a file (e.g. '%s%sprofile.pb.gz')",
				   path, path, path[len - 1] == '/' ? "" : "/");
	for (size_t i = 0; i < o->noutputs; i++) {
		if (same_output(o->outputs[i].path, path)) {
			if (strcmp(path, "-") == 0)
				return opt_usage_error("standard output ('-o -') given twice");
			if (strcmp(o->outputs[i].path, path) == 0)
				return opt_usage_error("output file '%s' given twice", path);
			return opt_usage_error("output file '%s' given twice (as '%s')", path,
					   o->outputs[i].path);
		}
	}
	o->outputs[o->noutputs].path = path;
	o->outputs[o->noutputs].format = FORMAT_AUTO;
	o->noutputs++;
	return OPTIONS_RUN;
}

/* ---- getopt's own errors ---------------------------------------------------- */

/* The long option an argument such as "--thr" or "--idle=1" names: its
 * exact match, else its only abbreviation; NULL when none or ambiguous
 * (*nmatch tells which). */
static const struct option *find_long_option(const char *arg, int *nmatch)
{
	const char *name = arg + 2;
	size_t len = strcspn(name, "=");
	const struct option *found = NULL;

	*nmatch = 0;
	for (const struct option *lo = long_options; lo->name; lo++) {
		if (strncmp(lo->name, name, len) != 0)
			continue;
		if (strlen(lo->name) == len) {
			*nmatch = 1;
			return lo;
		}
		found = lo;
		++*nmatch;
	}
	return *nmatch == 1 ? found : NULL;
}

/* ARG is the command-line element getopt failed on. */
static enum options_result option_error(int c, const char *arg)
{
	bool is_long = arg && strncmp(arg, "--", 2) == 0;
	int nmatch;
	const struct option *lo;
	size_t len;

	if (!is_long) {
		if (c == ':')
			return opt_usage_error("option '-%c' requires an argument", optopt);
		return opt_usage_error("unknown option '-%c'", optopt);
	}
	len = strcspn(arg, "=");
	lo = find_long_option(arg, &nmatch);
	if (c == ':' && lo)
		return opt_usage_error("option '--%s' requires an argument", lo->name);
	if (lo && lo->has_arg == no_argument && arg[len] == '=')
		return opt_usage_error("option '--%s' takes no argument", lo->name);
	if (nmatch > 1) {
		char names[256] = "";
		size_t used = 0;
		for (const struct option *p = long_options; p->name; p++) {
			if (strncmp(p->name, arg + 2, len - 2) != 0)
				continue;
			int n = snprintf(names + used, sizeof names - used, "%s--%s",
					 used ? ", " : "", p->name);
			if (n < 0 || (size_t)n >= sizeof names - used)
				break;
			used += (size_t)n;
		}
		return opt_usage_error("option '%.*s' is ambiguous (%s)", (int)len, arg, names);
	}
	return opt_usage_error("unknown option '%.*s'", (int)len, arg);
}

/* ---- the combination rules, in one place ---------------------------------- */

static bool any_output_is(const struct options *o, enum output_format f)
{
	for (size_t i = 0; i < o->noutputs; i++)
		if (o->outputs[i].format == f)
			return true;
	return false;
}

/* The extension of PATH's file name (from its last '.', not a leading one),
 * or NULL. */
static const char *extension_of(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	const char *dot = strrchr(base, '.');
	return dot && dot != base && dot[1] ? dot : NULL;
}

/* Resolve each output's format: the file's extension, else -f, else pprof
 * for a file without an extension and folded for standard output. An
 * extension no format has is an error (the user meant a format we do not
 * write), and so is an -f that no output takes unless every output already
 * is of that format (-f svg -o x.svg). */
static enum options_result resolve_formats(struct options *o, const struct given *g)
{
	bool format_used = false;
	const char *other = NULL;

	for (size_t i = 0; i < o->noutputs; i++) {
		struct output_spec *out = &o->outputs[i];
		bool is_stdout = outfile_is_stdout(out->path);
		enum output_format f = is_stdout ? FORMAT_AUTO : write_format_from_path(out->path);
		const char *ext = is_stdout ? NULL : extension_of(out->path);

		if (f != FORMAT_AUTO && f != o->format && !other)
			other = out->path;
		if (f == FORMAT_AUTO && o->format != FORMAT_AUTO) {
			f = o->format;
			format_used = true;
		} else if (f == FORMAT_AUTO && ext) {
			return opt_usage_error("unknown output file extension '%s' in '%s': use one of "
					   "%s, or name the format with --format", ext, out->path,
					   write_format_extensions());
		} else if (f == FORMAT_AUTO) {
			f = is_stdout ? FORMAT_FOLDED : FORMAT_PPROF;
		}
		out->format = f;
	}
	if (g->format && o->noutputs == 0)
		return opt_usage_error("--format %s applies to no output: the default file is "
				   "pprof; name one with --output", g->format_arg);
	if (g->format && !format_used && other)
		return opt_usage_error("--format %s applies to no output: every --output file name "
				   "has its own format extension ('%s' is %s)", g->format_arg, other,
				   write_format_name(write_format_from_path(other)));
	return OPTIONS_RUN;
}

/* Whether PATH holds a strftime conversion ("%%" is none). */
static bool has_time_field(const char *path)
{
	for (const char *p = strchr(path, '%'); p; p = strchr(p + 2, '%')) {
		if (p[1] != '%' && p[1] != '\0')
			return true;
		if (p[1] == '\0')
			return false;
	}
	return false;
}

/* The seconds between two names PATH's strftime fields tell apart: 1 for
 * a field of seconds (%S %s %T %r %X %c %+), 60 for minutes, and so on; 0
 * when it has no field. */
static unsigned time_resolution(const char *path)
{
	unsigned best = 0;
	for (const char *p = strchr(path, '%'); p && p[1]; p = strchr(p + 2, '%')) {
		const char *c = p + 1;
		while (*c == 'E' || *c == 'O' || *c == '_' || *c == '-' || *c == '0' || *c == '^' ||
		       *c == '#')
			c++;
		if (!*c)
			break;   /* flags and no conversion at the end of the name */
		unsigned r = strchr("SsTrXc+", *c) ? 1 : strchr("MR", *c) ? 60 :
			     strchr("HIklp", *c) ? 3600 : strchr("deajuwDFxAU", *c) ? 86400 :
			     strchr("VWGg", *c) ? 7 * 86400 : strchr("mbBh", *c) ? 28 * 86400 :
			     strchr("YyC", *c) ? 365 * 86400 : 0;
		if (*c != '%' && r && (!best || r < best))
			best = r;
		p = c - 1;
	}
	return best;
}

/* --interval: one file per interval, each named by its start. */
static enum options_result validate_interval(const struct options *o)
{
	for (size_t i = 0; i < o->noutputs; i++) {
		const char *path = o->outputs[i].path;
		if (strcmp(path, "-") == 0)
			return opt_usage_error("--interval writes one file per interval: standard "
					       "output cannot hold them");
		if (!has_time_field(path))
			return opt_usage_error("--interval writes one file per interval, named by its "
					       "start: put strftime fields in '%s' (e.g. "
					       "'prof-%%Y%%m%%dT%%H%%M%%S.pb.gz')", path);
		unsigned res = time_resolution(path);
		if (res > o->interval)
			return opt_usage_error("--interval %.0f writes a file every %.0f s, but '%s' "
					       "names one every %u s at most: intervals would share a "
					       "name; add %s", o->interval, o->interval, path, res,
					       res <= 60 ? "%S (seconds)" : res <= 3600 ?
					       "%M%S (minutes and seconds)" : "%H%M%S");
	}
	return OPTIONS_RUN;
}

static enum options_result validate_dump(const struct options *o, const struct given *g)
{
	const char *with = NULL;

	if (o->command)
		return opt_usage_error("--dump needs -p PID: it snapshots a running process");
	if (o->ntids)
		return opt_usage_error("--dump prints every thread of the process: give -p PID, "
				   "not -t");
	if (o->noutputs)
		with = "--output";
	else if (g->duration)
		with = "--duration";
	else if (g->interval)
		with = "--interval";
	else if (g->top)
		with = "--top";
	else if (g->format)
		with = "--format";
	else if (g->rate)
		with = "--rate";
	else if (o->idle)
		with = "--idle";
	else if (o->children)
		with = "--children";
	else if (o->threads)
		with = "--threads";
	else if (o->ngroups)
		with = "--thread-group";
	else if (g->max_stacks)
		with = "--max-stacks";
	else if (o->annotate)
		with = "--annotate";
	else if (g->attach_mode)
		with = "--attach-mode";
	if (with)
		return opt_usage_error("--dump cannot be combined with %s: it prints one snapshot "
				   "of every thread to standard output", with);
	return OPTIONS_RUN;
}

/* --serve answers each request with a profile of its own. */
static enum options_result validate_serve(const struct options *o, const struct given *g)
{
	const char *with = NULL;

	if (!o->serve_address) {
		if (g->serve_token_file || g->serve_max_seconds)
			return opt_usage_error("--serve-%s needs --serve",
					   g->serve_token_file ? "token-file" : "max-seconds");
		return OPTIONS_RUN;
	}
	if (g->dump)
		with = "--dump";
	else if (g->top)
		with = "--top";
	else if (g->interval)
		with = "--interval";
	else if (o->noutputs)
		with = "--output";
	else if (g->format)
		with = "--format";
	else if (g->duration)
		with = "--duration";
	if (with)
		return opt_usage_error("--serve cannot be combined with %s: each request gets a "
				   "profile of its own (seconds=N, format=FORMAT), and the server "
				   "runs until the target exits or SIGTERM", with);
	if (o->children)
		return opt_usage_error("--serve cannot be combined with --children: it attaches "
				   "to the process given for each request, and children it "
				   "started between requests would not be followed");
	return OPTIONS_RUN;
}

/* -i: what reading a profile recorded before cannot take. */
static enum options_result validate_input(struct options *o, const struct given *g)
{
	const char *with = g->pid ? "-p" : o->ntids ? "-t" : o->command ? "a command to run" :
			   o->serve_address ? "--serve" : g->top ? "--top" : g->dump ? "--dump" :
			   g->duration ? "--duration" : g->rate ? "--rate" : o->idle ? "--idle" :
			   o->children ? "--children" : g->interval ? "--interval" :
			   g->attach_mode ? "--attach-mode" : NULL;
	if (with)
		return opt_usage_error("-i reads a profile recorded before: %s has no effect on it",
				   with);
	if (!o->noutputs)
		return opt_usage_error("-i needs -o FILE: the format is taken from its name "
				   "(e.g. -o out.svg, -o - for folded stacks)");
	return OPTIONS_RUN;
}

static enum options_result validate_options(struct options *o, const struct given *g)
{
	enum options_result r;

	if (o->diff && !o->input2)
		return opt_usage_error("--diff compares two profiles: -i BASE.pb.gz -i NEW.pb.gz --diff "
				   "-o diff.svg");
	if (o->input2 && !o->diff)
		return opt_usage_error("two -i FILE: add --diff to compare them");
	if (o->input) {
		r = validate_input(o, g);
		if (r == OPTIONS_RUN)
			r = resolve_formats(o, g);
		if (r == OPTIONS_RUN && o->annotate && !any_output_is(o, FORMAT_FOLDED))
			return opt_usage_error("--annotate only changes folded output, and no output "
					   "is folded");
		if (r == OPTIONS_RUN && o->diff &&
		    (any_output_is(o, FORMAT_PPROF) || any_output_is(o, FORMAT_SPEEDSCOPE)))
			return opt_usage_error("--diff writes svg, folded or text (for pprof, compare "
					   "with go tool pprof -diff_base BASE NEW)");
		o->mode = MODE_CONVERT;
		return r;
	}

	if (!g->pid && !o->command && !o->ntids)
		return opt_usage_error("nothing to profile: give -p PID or a command to run");
	if (o->ntids && o->command)
		return opt_usage_error("-t names threads of a running process: give -p PID or -t "
				   "TID, or a command to run, not both (command: '%s')", o->command[0]);
	if (o->ntids && o->children)
		return opt_usage_error("-t samples the threads given, and --children follows new "
				   "processes: not both");
	if (g->pid && o->command)
		return opt_usage_error("give either -p PID or a command to run, not both "
				   "(command: '%s')", o->command[0]);
	if (o->quiet && o->verbose)
		return opt_usage_error("--quiet and --verbose contradict each other");
	r = validate_serve(o, g);
	if (r != OPTIONS_RUN)
		return r;
	if (g->dump) {
		r = validate_dump(o, g);
		if (r != OPTIONS_RUN)
			return r;
	}
	if (g->top && o->noutputs)
		return opt_usage_error("--top cannot be combined with --output: it shows a live "
				   "view instead of writing a profile");
	if (g->top && g->interval)
		return opt_usage_error("--top cannot be combined with --interval: it writes no file");
	if (g->top && g->format)
		return opt_usage_error("--top cannot be combined with --format: it writes no file");
	if (g->top && (o->threads || o->ngroups))
		return opt_usage_error("--top cannot be combined with %s: it ranks functions over "
				   "all threads", o->threads ? "--threads" : "--thread-group");
	const struct backend_caps *caps = backend_caps(o->backend);
	if (caps && ((o->idle && !caps->idle) || (g->dump && !caps->dump) ||
		     (o->seize_mode == TARGET_SEIZE_PER_SAMPLE && !caps->per_sample_attach)))
		return opt_usage_error("%s cannot be combined with %s: %s", caps->option,
				   o->idle && !caps->idle ? "--idle" : g->dump && !caps->dump ? "--dump"
				   : "--attach-mode=per-sample",
				   o->idle && !caps->idle ? caps->idle_refusal
				   : g->dump && !caps->dump ? "a snapshot stops every thread, whatever the backend"
				   : "its events stay on the threads for the run");
	if (o->seize_mode == TARGET_SEIZE_PER_SAMPLE && (o->command || o->children))
		return opt_usage_error("--attach-mode=per-sample works with -p PID only, without "
				   "--children: between samples it could not see %s",
				   o->command ? "the program's exec" : "new children");
	if (o->addresses && o->no_inline)
		return opt_usage_error("--no-inline has no effect with --addresses "
				   "(addresses are not symbolized)");
	if (o->addresses && o->annotate)
		return opt_usage_error("--annotate has no effect with --addresses "
				   "(inline and JIT frames need symbols)");

	r = resolve_formats(o, g);
	if (r == OPTIONS_RUN && g->interval)
		r = validate_interval(o);
	if (r != OPTIONS_RUN)
		return r;
	if (o->annotate && (g->dump || g->top))
		return opt_usage_error("--annotate only changes folded output, and --%s writes none",
				   g->dump ? "dump" : "top");
	if (o->nlabels && (g->dump || g->top))
		return opt_usage_error("--label marks the samples of a profile, and --%s writes none",
				   g->dump ? "dump" : "top");
	if (o->annotate && !any_output_is(o, FORMAT_FOLDED))
		return opt_usage_error("--annotate only changes folded output, and no output is folded");
	o->mode = o->serve_address ? MODE_SERVE : g->dump ? MODE_DUMP : g->top ? MODE_TOP
								 : MODE_RECORD;
	return OPTIONS_RUN;
}

/* ---- help ----------------------------------------------------------------- */

static void print_help_serving(FILE *out);

void options_print_help(FILE *out)
{
	fputs(
"Usage: csampler [OPTION]... -p PID\n"
"       csampler [OPTION]... [--] PROGRAM [ARG]...\n"
"Sample the call stacks of a running native Linux program (or of PROGRAM,\n"
"started under csampler) and write a profile: pprof, folded stacks, an SVG\n"
"flame graph or a text report.\n"
"\n"
"Target:\n"
"  -p, --pid=PID            profile the running process PID, all its threads\n"
"  -t, --tid=TID            sample only thread TID (repeatable; threads of one\n"
"                           process, which -p may name)\n"
"  -i, --input=FILE         read a pprof profile recorded before (csampler's,\n"
"                           Go's, pprof-rs's) and write it as each -o asks\n"
"      --diff               with -i BASE -i NEW: a differential flame graph (red\n"
"                           grew, blue shrank), folded BASE NEW counts, or a\n"
"                           text table of the largest changes\n"
"  PROGRAM [ARG]...         run PROGRAM and profile it; csampler exits with its\n"
"                           status\n"
"      --children           follow child processes (fork, vfork, clone) and\n"
"                           their execs\n"
"      --attach-mode=MODE   persistent (default): stay attached for the run;\n"
"                           per-sample: attach around each sample only, for\n"
"                           targets that receive many signals (-p only)\n"
"      --backend=BACKEND    ptrace (default): interrupt the running threads;\n"
"                           perf: the kernel samples them (perf_event cpu-clock)\n"
"                           without stopping them, cheaper with many threads;\n"
"                           needs root (CAP_PERFMON and CAP_BPF);\n"
"                           auto: perf where permitted, else ptrace\n"
"\n"
"Sampling:\n"
"  -d, --duration=TIME      stop after TIME: 30, 30s, 2m, 1h, 1.5s, 500ms\n"
"                           (default: until the target exits or Ctrl-C)\n"
"  -F, --rate=HZ            sampling rate, 1 to 10000 (default 99)\n"
"      --idle               wall-clock profile: count blocked threads too\n"
"                           (default: only threads running on a CPU)\n"
"      --max-depth=N        frames kept per stack, 4 to 65536 (default 1024)\n"
"      --max-stacks=N       distinct stacks kept in memory, 16 to 10000000\n"
"                           (default 65536); the rest go to a temporary file\n"
"      --stack-window=SIZE  stack bytes copied per sample, 4k to 8m\n"
"                           (default 64k); deeper stacks are marked truncated\n"
"      --realtime[=PRIO]    sample with SCHED_FIFO priority PRIO, 1 to 99\n"
"                           (default 1, where permitted), so ticks are on\n"
"                           time; 0: normal priority\n"
"\n"
"Output:\n"
"  -o, --output=FILE        write the profile to FILE (repeatable); '-' is\n"
"                           standard output (default: csampler-PID-DATE.pb.gz)\n"
"      --interval=TIME      write one profile per TIME (whole seconds) until the\n"
"                           run ends, each FILE named by its start: FILE holds\n"
"                           strftime fields, e.g. 'prof-%Y%m%dT%H%M%S.pb.gz'\n"
"  -f, --format=FORMAT      pprof, folded, svg, text or speedscope, for each\n"
"                           FILE without an extension (default pprof; folded\n"
"                           for '-')\n"
"      --threads            put a root frame NAME-TID on every stack\n"
"      --thread-group=REGEX=NAME\n"
"                           count threads whose whole name matches the extended\n"
"                           regular expression REGEX as one thread NAME\n"
"                           (repeatable; the first match wins)\n"
"      --label=KEY=VALUE    a label on every sample (pprof), in the SVG's and\n"
"                           text report's title: service=api (repeatable)\n"
"      --no-inline          do not show inlined functions as frames of their own\n"
"      --addresses          keep raw addresses, do not symbolize\n"
"      --annotate           folded output: mark inlined frames _[i], JIT _[j]\n"
"\n",
	      out);
	print_help_serving(out);
}

/* --help from "Serving" on. */
static void print_help_serving(FILE *out)
{
	fputs(
"Serving (see 'Profiling in production' in csampler(1)):\n"
"      --serve=[ADDR:]PORT  answer GET /debug/pprof/profile?seconds=N with a\n"
"                           profile of the next N seconds (go tool pprof URL,\n"
"                           Parca, Grafana Alloy) until the target exits or\n"
"                           SIGTERM; ADDR defaults to 127.0.0.1; unix:PATH\n"
"                           serves on a Unix socket (mode 0600)\n"
"      --serve-token-file=FILE\n"
"                           require 'Authorization: Bearer TOKEN', TOKEN the\n"
"                           first line of FILE\n"
"      --serve-max-seconds=N\n"
"                           longest profile a request may ask for (default 300)\n"
"\n"
"Display:\n"
"      --dump               print the stack of every thread of PID once (like\n"
"                           pstack) and exit\n"
"      --top                live view of the hottest functions; q quits\n"
"  -q, --quiet              print nothing but errors (no progress, no summary)\n"
"  -v, --verbose            tell more (repeat for more detail)\n"
"\n"
"Misc:\n"
"  -h, --help               show this help and exit\n"
"  -V, --version            show the version and exit\n"
"\n"
"File extensions: .pb .pb.gz .pprof (pprof, gzipped), .folded .collapsed,\n"
".svg, .txt, .speedscope.json (a per-thread timeline).  View pprof files with\n"
"'go tool pprof -http=: FILE', speedscope files at https://www.speedscope.app.\n"
"Exit status: 0 on success, 64 for a usage error, 1 or 65-73 when profiling\n"
"failed; with PROGRAM, the program's own status.  See csampler(1).\n",
	      out);
}

/* ---- parsing ----------------------------------------------------------------- */

static void set_defaults(struct options *o)
{
	memset(o, 0, sizeof *o);
	o->rate = CLOCK_DEFAULT_RATE;
	o->format = FORMAT_AUTO;
	o->max_depth = DEFAULT_MAX_DEPTH;
	o->max_stacks = DEFAULT_MAX_STACKS;
	o->stack_window = DEFAULT_STACK_WINDOW;
	o->seize_mode = TARGET_SEIZE_PERSISTENT;
	o->rt_priority = DEFAULT_RT_PRIORITY;
	o->serve_max_seconds = DEFAULT_SERVE_MAX_SECONDS;
}

/* --backend's value. */
static enum options_result parse_backend(struct options *o, const char *arg)
{
	if (strcmp(arg, "ptrace") == 0)
		o->backend = BACKEND_PTRACE;
	else if (strcmp(arg, "perf") == 0)
		o->backend = BACKEND_PERF;
	else if (strcmp(arg, "auto") == 0)
		o->backend = BACKEND_AUTO;
	else
		return opt_usage_error("invalid --backend '%s': expected ptrace, perf or auto", arg);
	return OPTIONS_RUN;
}

/* --serve and its options. */
static enum options_result apply_serve_option(struct options *o, struct given *g, int c,
					      const char *arg)
{
	unsigned long long v;
	struct serve_address addr;
	char err[256];

	switch (c) {
	case OPT_SERVE:
		if (serve_parse_address(arg, &addr, err, sizeof err) < 0)
			return opt_usage_error("%s", err);
		o->serve_address = arg;
		break;
	case OPT_SERVE_TOKEN_FILE:
		o->serve_token_file = arg;
		g->serve_token_file = true;
		break;
	default:
		if (!opt_parse_ranged(arg, 1, SERVE_MAX_SECONDS_LIMIT, &v))
			return opt_usage_error("invalid --serve-max-seconds '%s': expected a whole "
					   "number of seconds from 1 to %u", arg,
					   SERVE_MAX_SECONDS_LIMIT);
		o->serve_max_seconds = (unsigned)v;
		g->serve_max_seconds = true;
		break;
	}
	return OPTIONS_RUN;
}

/* One option with its argument; OPTIONS_RUN to go on. */
static enum options_result apply_option(struct options *o, struct given *g, int c,
					const char *arg)
{
	unsigned long long v;

	switch (c) {
	case 'i':
		if (o->input2)
			return opt_usage_error("at most two -i FILE (with --diff)");
		if (!*arg)
			return opt_usage_error("empty file name for -i");
		*(o->input ? &o->input2 : &o->input) = arg;
		break;
	case OPT_DIFF:
		o->diff = true;
		break;
	case 't':
		if (!opt_parse_ranged(arg, 1, MAX_PID, &v))
			return opt_usage_error("invalid thread id '%s'", arg);
		for (size_t i = 0; i < o->ntids; i++)
			if (o->tids[i] == (pid_t)v)
				return opt_usage_error("thread %llu given twice", v);
		if (o->ntids == OPTIONS_MAX_TIDS)
			return opt_usage_error("too many -t threads (at most %d)", OPTIONS_MAX_TIDS);
		o->tids[o->ntids++] = (pid_t)v;
		break;
	case 'p':
		if (g->pid)
			return opt_usage_error("only one -p PID at a time");
		if (!opt_parse_ranged(arg, 1, MAX_PID, &v))
			return opt_usage_error("invalid process id '%s'", arg);
		o->pid = (pid_t)v;
		g->pid = true;
		break;
	case 'd':
		if (!opt_parse_duration(arg, &o->duration))
			return opt_usage_error("invalid duration '%s' (examples: 30, 30s, 2m, 1.5s, 500ms)",
					   arg);
		if (o->duration <= 0)
			return opt_usage_error("duration must be greater than 0 (without -d, "
					   "csampler runs until the target exits or Ctrl-C)");
		if (o->duration > MAX_DURATION)
			return opt_usage_error("duration '%s' is too long (at most 366 days)", arg);
		g->duration = true;
		break;
	case 'F':
		if (!opt_parse_ranged(arg, MIN_RATE, MAX_RATE, &v))
			return opt_usage_error("invalid rate '%s': expected a whole number of Hz "
					   "from %u to %u", arg, MIN_RATE, MAX_RATE);
		o->rate = (unsigned)v;
		g->rate = true;
		break;
	case 'o':
		return add_output(o, arg);
	case 'f':
		o->format = write_format_from_name(arg);
		if (o->format == FORMAT_AUTO)
			return opt_usage_error("invalid format '%s': expected pprof, folded, svg, text or "
					   "speedscope",
					   arg);
		g->format = true;
		g->format_arg = arg;
		break;
	case OPT_IDLE:      o->idle = true; break;
	case OPT_THREADS:   o->threads = true; break;
	case OPT_CHILDREN:  o->children = true; break;
	case OPT_NO_INLINE: o->no_inline = true; break;
	case OPT_ADDRESSES: o->addresses = true; break;
	case OPT_ANNOTATE:  o->annotate = true; break;
	case OPT_DUMP:      g->dump = true; break;
	case OPT_TOP:       g->top = true; break;
	case OPT_INTERVAL:
		if (!opt_parse_duration(arg, &o->interval) || o->interval < 1 ||
		    o->interval != (double)(unsigned long)o->interval)
			return opt_usage_error("invalid interval '%s': a whole number of seconds, at "
					       "least 1 (examples: 60, 10s, 5m)", arg);
		g->interval = true;
		break;
	case 'q':           o->quiet = true; break;
	case 'v':
		if (o->verbose < 16)
			o->verbose++;
		break;
	case OPT_THREAD_GROUP:
		return opt_add_thread_group(o, arg);
	case OPT_LABEL:
		return opt_add_label(o, arg);
	case OPT_MAX_DEPTH:
		if (!opt_parse_ranged(arg, MIN_MAX_DEPTH, MAX_MAX_DEPTH, &v))
			return opt_usage_error("invalid --max-depth '%s': expected a number from %u to %u",
					   arg, MIN_MAX_DEPTH, MAX_MAX_DEPTH);
		o->max_depth = (unsigned)v;
		break;
	case OPT_MAX_STACKS:
		if (!opt_parse_ranged(arg, MIN_MAX_STACKS, MAX_MAX_STACKS, &v))
			return opt_usage_error("invalid --max-stacks '%s': expected a number from %u to %u",
					   arg, MIN_MAX_STACKS, MAX_MAX_STACKS);
		o->max_stacks = (size_t)v;
		g->max_stacks = true;
		break;
	case OPT_STACK_WINDOW:
		if (!opt_parse_size(arg, &v) || v < MIN_STACK_WINDOW || v > MAX_STACK_WINDOW)
			return opt_usage_error("invalid --stack-window '%s': expected a size from 4k to 8m",
					   arg);
		o->stack_window = (size_t)v;
		break;
	case OPT_ATTACH_MODE:
		if (strcmp(arg, "persistent") == 0)
			o->seize_mode = TARGET_SEIZE_PERSISTENT;
		else if (strcmp(arg, "per-sample") == 0)
			o->seize_mode = TARGET_SEIZE_PER_SAMPLE;
		else
			return opt_usage_error("invalid --attach-mode '%s': expected persistent "
					   "or per-sample", arg);
		g->attach_mode = true;
		break;
	case OPT_BACKEND:
		return parse_backend(o, arg);
	case OPT_SERVE:
	case OPT_SERVE_TOKEN_FILE:
	case OPT_SERVE_MAX_SECONDS:
		return apply_serve_option(o, g, c, arg);
	case OPT_REALTIME:
		if (!arg) {
			o->rt_priority = DEFAULT_RT_PRIORITY;
		} else if (opt_parse_ranged(arg, MIN_RT_PRIORITY, MAX_RT_PRIORITY, &v)) {
			o->rt_priority = (int)v;
		} else {
			return opt_usage_error("invalid --realtime priority '%s': expected a number "
					   "from %d to %d", arg, MIN_RT_PRIORITY, MAX_RT_PRIORITY);
		}
		g->realtime = true;
		break;
	default:
		return opt_usage_error("internal error: option %d not handled", c);
	}
	return OPTIONS_RUN;
}

/* "--realtime 50 -p 1": getopt took "50" for the command. Say so. */
static bool realtime_value_taken_as_command(char **argv, int cmd_index)
{
	const char *prev = argv[cmd_index - 1];
	unsigned long long v;
	int nmatch;

	if (cmd_index < 2 || strncmp(prev, "--", 2) != 0 || prev[2] == '\0')
		return false;
	const struct option *lo = find_long_option(prev, &nmatch);
	return lo && lo->val == OPT_REALTIME && strchr(prev, '=') == NULL &&
	       opt_parse_decimal(argv[cmd_index], &v);
}

void options_build_config(const struct options *o, const char *command_line,
			  struct build_config *out)
{
	*out = (struct build_config){
		.rate = o->rate, .idle = o->idle, .max_depth = o->max_depth,
		.no_inline = o->no_inline, .addresses = o->addresses, .quiet = o->quiet,
		.verbose = o->verbose, .tids = o->ntids ? o->tids : NULL, .ntids = o->ntids,
		.groups = o->groups, .ngroups = o->ngroups, .labels = o->labels,
		.nlabels = o->nlabels, .command_line = command_line,
	};
}

enum options_result options_parse(struct options *o, int argc, char **argv)
{
	struct given g = { 0 };
	const char *last_optarg = NULL;
	enum options_result r;
	int c, before;

	set_defaults(o);
	opterr = 0;
	optind = 0;     /* full re-initialisation of getopt, so tests can parse twice */
	for (;;) {
		before = optind == 0 ? 1 : optind;
		c = getopt_long(argc, argv, short_options, long_options, NULL);
		if (c == -1)
			break;
		switch (c) {
		case 'h':
			options_print_help(stdout);
			return OPTIONS_EXIT_OK;
		case 'V':
			printf("csampler %s\n", PACKAGE_VERSION);
			return OPTIONS_EXIT_OK;
		case '?':
		case ':':
			/* optind stays on an element whose short options
			 * are not all read yet ("-xq"); else it moved past it */
			return option_error(c, optind > before || optind >= argc
						   ? argv[optind - 1] : argv[optind]);
		default:
			last_optarg = optarg;
			r = apply_option(o, &g, c, optarg);
			if (r != OPTIONS_RUN)
				return r;
			break;
		}
	}

	if (optind < argc) {
		if (realtime_value_taken_as_command(argv, optind))
			return opt_usage_error("give the priority as --realtime=%s", argv[optind]);
		o->command = &argv[optind];
	} else if (!g.pid && optind > 1 && strcmp(argv[optind - 1], "--") == 0 &&
		   argv[optind - 1] != last_optarg) {
		return opt_usage_error("no command after '--'");
	}
	return validate_options(o, &g);
}

void options_free(struct options *o)
{
	for (size_t i = 0; i < o->ngroups; i++)
		regfree(&o->groups[i].re);
	o->ngroups = 0;
}
