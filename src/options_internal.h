/* options_internal: what options' two files share (not an interface:
 * options.h is). options.c parses the command line and holds the
 * combination rules; options_values.c parses one option's value (numbers in
 * a range, durations, sizes) and checks a --thread-group regex before it is
 * compiled. Each function is documented where it is defined. */
#ifndef CSAMPLER_OPTIONS_INTERNAL_H
#define CSAMPLER_OPTIONS_INTERNAL_H
#include <stdbool.h>

#include "options.h"

__attribute__((format(printf, 1, 2)))
enum options_result opt_usage_error(const char *fmt, ...);
bool opt_parse_decimal(const char *s, unsigned long long *out);
bool opt_parse_ranged(const char *s, unsigned long long min, unsigned long long max,
			 unsigned long long *out);
bool opt_parse_size(const char *s, unsigned long long *out);
enum options_result opt_add_thread_group(struct options *o, const char *arg);
enum options_result opt_add_label(struct options *o, const char *arg);
bool opt_parse_duration(const char *s, double *out);

#endif
