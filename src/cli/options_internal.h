/* options_internal: what options' files share (not an interface:
 * options.h is). options.c parses the command line; options_validate.c
 * holds the combination rules (opt_validate, after the whole line was
 * read); options_values.c parses one option's value (numbers in a range,
 * durations, sizes) and checks a --thread-group regex before it is
 * compiled; options_help.c is --help; options_config.c derives each room's
 * config. Each function is documented where it is defined. */
#ifndef CSAMPLER_OPTIONS_INTERNAL_H
#define CSAMPLER_OPTIONS_INTERNAL_H
#include <stdbool.h>

#include "options.h"

/* What the command line said explicitly, for the combination rules. */
struct given {
	bool pid, duration, rate, format, max_stacks, attach_mode, realtime;
	bool dump, top;                 /* the modes asked for (o->mode is one) */
	bool interval;
	bool serve_token_file, serve_max_seconds;
	const char *format_arg;
};

__attribute__((format(printf, 1, 2)))
enum options_result opt_usage_error(const char *fmt, ...);
bool opt_parse_decimal(const char *s, unsigned long long *out);
bool opt_parse_ranged(const char *s, unsigned long long min, unsigned long long max,
			 unsigned long long *out);
bool opt_parse_size(const char *s, unsigned long long *out);
enum options_result opt_add_thread_group(struct options *o, const char *arg);
enum options_result opt_add_label(struct options *o, const char *arg);
bool opt_parse_duration(const char *s, double *out);
enum options_result opt_validate(struct options *o, const struct given *g);

#endif
