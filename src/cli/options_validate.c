/* options_validate: every rule that involves more than one option
 * (conflicts, combinations, the output formats, the mode asked for),
 * checked once after the whole command line was read (see options.h). */
#include "config.h"

#include <string.h>

#include "options_internal.h"
#include "outfile.h"

static bool any_output_is(const struct options *o, enum output_format f)
{
	for (size_t i = 0; i < o->noutputs; i++)
		if (o->outputs[i].format == f)
			return true;
	return false;
}

/* Whether every output's format writes a --diff profile. */
static bool all_outputs_diff(const struct options *o)
{
	for (size_t i = 0; i < o->noutputs; i++) {
		const struct write_format_info *fi = write_format_info(o->outputs[i].format);
		if (fi && !fi->diff)
			return false;
	}
	return true;
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
			char known[256];
			return opt_usage_error("unknown output file extension '%s' in '%s': use one of "
					   "%s, or name the format with --format", ext, out->path,
					   write_format_extensions(known, sizeof known));
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

/* What to sample and how: the target, the modes and the backend's
 * capabilities. */
static enum options_result validate_sampling(const struct options *o, const struct given *g)
{
	enum options_result r;

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
	return OPTIONS_RUN;
}

enum options_result opt_validate(struct options *o, const struct given *g)
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
		if (r == OPTIONS_RUN && o->diff && !all_outputs_diff(o)) {
			char names[128];
			return opt_usage_error("--diff writes %s (for pprof, compare with go tool "
					   "pprof -diff_base BASE NEW)",
					   write_format_names(names, sizeof names, true));
		}
		o->mode = MODE_CONVERT;
		return r;
	}

	r = validate_sampling(o, g);
	if (r != OPTIONS_RUN)
		return r;
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
