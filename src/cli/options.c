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
#define DEFAULT_MAX_DEPTH    4096u
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
	OPT_NO_PYTHON,
	OPT_NO_KERNEL,
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
	{ "no-python",    no_argument,       NULL, OPT_NO_PYTHON },
	{ "no-kernel",    no_argument,       NULL, OPT_NO_KERNEL },
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
	if (!backend_kind_from_word(arg, &o->backend))
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
		if (o->format == FORMAT_AUTO) {
			char names[128];
			return opt_usage_error("invalid format '%s': expected %s", arg,
					   write_format_names(names, sizeof names, false));
		}
		g->format = true;
		g->format_arg = arg;
		break;
	case OPT_IDLE:      o->idle = true; break;
	case OPT_THREADS:   o->threads = true; break;
	case OPT_CHILDREN:  o->children = true; break;
	case OPT_NO_INLINE: o->no_inline = true; break;
	case OPT_NO_PYTHON: o->no_python = true; break;
	case OPT_NO_KERNEL: o->no_kernel = true; break;
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
		o->stack_window_given = true;
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
	return opt_validate(o, &g);
}

void options_free(struct options *o)
{
	for (size_t i = 0; i < o->ngroups; i++)
		regfree(&o->groups[i].re);
	o->ngroups = 0;
}
