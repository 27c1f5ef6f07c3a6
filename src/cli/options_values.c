/* options_values: one option's value (see options_internal.h): decimal
 * numbers within a range, durations with units, sizes with suffixes, and a
 * --thread-group NAME=REGEX whose regex is checked for what would make
 * regcomp blow up before it is compiled. */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "options_internal.h"

/* ---- values ------------------------------------------------------------- */

/* A plain decimal number: digits only (no sign, no space, no hex). */
bool opt_parse_decimal(const char *s, unsigned long long *out)
{
	unsigned long long v = 0;

	if (*s == '\0')
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		if (v > (ULLONG_MAX - 9) / 10)
			return false;
		v = v * 10 + (unsigned)(*s - '0');
	}
	*out = v;
	return true;
}

bool opt_parse_ranged(const char *s, unsigned long long min, unsigned long long max,
			 unsigned long long *out)
{
	unsigned long long v;

	if (!opt_parse_decimal(s, &v) || v < min || v > max)
		return false;
	*out = v;
	return true;
}

/* "30", "30s", "2m", "1h", "1.5s", "500ms" -> seconds. Decimal digits with
 * at most one point, then an optional unit. */
bool opt_parse_duration(const char *s, double *out)
{
	double v = 0, scale = 1;
	bool digits = false, point = false;
	const char *p = s;

	for (; *p; p++) {
		if (*p >= '0' && *p <= '9') {
			if (v > 1e12)
				return false;
			if (point) {
				scale /= 10;
				v += (*p - '0') * scale;
			} else {
				v = v * 10 + (*p - '0');
			}
			digits = true;
		} else if (*p == '.' && !point) {
			point = true;
		} else {
			break;
		}
	}
	if (!digits)
		return false;
	if (strcmp(p, "") == 0 || strcmp(p, "s") == 0)
		;
	else if (strcmp(p, "ms") == 0)
		v /= 1000;
	else if (strcmp(p, "m") == 0)
		v *= 60;
	else if (strcmp(p, "h") == 0)
		v *= 3600;
	else
		return false;
	*out = v;
	return true;
}

/* "65536", "64k", "8m" (k/K = 1024, m/M = 1024*1024) -> bytes. */
bool opt_parse_size(const char *s, unsigned long long *out)
{
	char digits[32];
	size_t n = strlen(s);
	unsigned long long mult = 1, v;

	if (n == 0 || n >= sizeof digits)
		return false;
	switch (s[n - 1]) {
	case 'k': case 'K': mult = 1024; n--; break;
	case 'm': case 'M': mult = 1024 * 1024; n--; break;
	default: break;
	}
	memcpy(digits, s, n);
	digits[n] = '\0';
	if (!opt_parse_decimal(digits, &v) || v > ULLONG_MAX / mult)
		return false;
	*out = v * mult;
	return true;
}

/* glibc's regcomp copies the subexpression of every '+' and of every {m,n}
 * (up to max(m,n) times), so nested repetitions cost exponential memory:
 * "a" followed by 30 '+' takes gigabytes. Bound the product of those copy
 * factors (an over-estimate: repetitions side by side add, they do not
 * multiply) before compiling. Bracket expressions and escaped characters
 * repeat nothing. */
#define REGEX_MAX_COPIES 4096
/* Its epsilon closures grow with the cube of the nesting depth: "((a)*)*..."
 * 4000 bytes long takes a minute. Thread names have at most 15 bytes.
 * Adjacent repetitions ("a**", "a*+"; undefined in POSIX EREs) grow
 * exponentially inside a group: "(x*************++)" does not compile in
 * minutes. They are refused. */
#define REGEX_MAX_LEN 512
static bool regex_too_complex(const char *re, size_t len)
{
	unsigned long copies = 1;
	size_t i = 0;
	bool after_repetition = false;

	if (len > REGEX_MAX_LEN)
		return true;
	while (i < len) {
		unsigned long factor = 1;
		bool repetition = re[i] == '*' || re[i] == '+' || re[i] == '?' || re[i] == '{';
		if (repetition && after_repetition)
			return true;
		after_repetition = repetition;
		if (re[i] == '\\') {
			i += 2;
			continue;
		}
		if (re[i] == '[') {
			/* skip to the closing ']': a leading '^' and ']' are part of
			 * the set, and so are [:class:], [=equiv=] and [.coll.] */
			i++;
			if (i < len && re[i] == '^')
				i++;
			if (i < len && re[i] == ']')
				i++;
			while (i < len && re[i] != ']') {
				if (re[i] == '[' && i + 1 < len &&
				    (re[i + 1] == ':' || re[i + 1] == '=' || re[i + 1] == '.')) {
					char end = re[i + 1];
					i += 2;
					while (i + 1 < len && !(re[i] == end && re[i + 1] == ']'))
						i++;
					i += 2;
					continue;
				}
				i++;
			}
			i++;
			continue;
		}
		if (re[i] == '+') {
			factor = 2;
		} else if (re[i] == '{') {
			unsigned long m = 0;
			i++;
			while (i < len && re[i] != '}') {
				if (re[i] >= '0' && re[i] <= '9')
					m = m * 10 + (unsigned long)(re[i] - '0');
				else
					factor = m > factor ? m : factor, m = 0;
				if (m > REGEX_MAX_COPIES)
					return true;
				i++;
			}
			factor = m > factor ? m : factor;
			if (factor == 0)
				factor = 1;
		}
		copies *= factor;
		if (copies > REGEX_MAX_COPIES)
			return true;
		i++;
	}
	return false;
}

/* 'REGEX=NAME': split at the last '=' (a name has none; a regex may). The
 * regex is compiled alone first, so that a pattern such as "a)|(b" cannot
 * escape the ^(...)$ anchoring added around it. */
enum options_result opt_add_thread_group(struct options *o, const char *arg)
{
	const char *eq = strrchr(arg, '=');
	size_t relen;
	char *pattern;
	regex_t probe;
	int rc;
	char reason[256];

	if (!eq)
		return opt_usage_error("invalid --thread-group '%s': expected REGEX=NAME", arg);
	if (eq == arg)
		return opt_usage_error("invalid --thread-group '%s': empty regular expression", arg);
	if (eq[1] == '\0')
		return opt_usage_error("invalid --thread-group '%s': empty group name", arg);
	if (o->ngroups == OPTIONS_MAX_GROUPS)
		return opt_usage_error("too many --thread-group options (at most %d)", OPTIONS_MAX_GROUPS);

	relen = (size_t)(eq - arg);
	if (regex_too_complex(arg, relen))
		return opt_usage_error("regular expression '%.*s' in --thread-group is too complex "
				   "(longer than %d bytes, adjacent or too many repetitions)",
				   (int)relen, arg, REGEX_MAX_LEN);
	pattern = malloc(relen + 5);
	if (!pattern)
		return opt_usage_error("out of memory reading --thread-group");

	memcpy(pattern, arg, relen);
	pattern[relen] = '\0';
	rc = regcomp(&probe, pattern, REG_EXTENDED | REG_NOSUB);
	if (rc != 0) {
		regerror(rc, &probe, reason, sizeof reason);
		free(pattern);
		return opt_usage_error("invalid regular expression '%.*s' in --thread-group: %s",
				   (int)relen, arg, reason);
	}
	regfree(&probe);

	pattern[0] = '^';
	pattern[1] = '(';
	memcpy(pattern + 2, arg, relen);
	memcpy(pattern + 2 + relen, ")$", 3);
	rc = regcomp(&o->groups[o->ngroups].re, pattern, REG_EXTENDED | REG_NOSUB);
	free(pattern);
	if (rc != 0) {
		regerror(rc, &o->groups[o->ngroups].re, reason, sizeof reason);
		return opt_usage_error("invalid regular expression '%.*s' in --thread-group: %s",
				   (int)relen, arg, reason);
	}
	o->groups[o->ngroups].name = eq + 1;
	o->ngroups++;
	return OPTIONS_RUN;
}

/* --label KEY=VALUE: KEY in the grammar fleet engines accept (Prometheus'
 * label names: [a-zA-Z_][a-zA-Z0-9_]*), not a label csampler writes itself
 * nor given twice; VALUE up to OPTIONS_LABEL_VALUE_MAX bytes. */
enum options_result opt_add_label(struct options *o, const char *arg)
{
	static const char *const ours[] = { "thread", "pid", "tid", "truncated" };
	const char *eq = strchr(arg, '=');
	size_t klen = eq ? (size_t)(eq - arg) : strlen(arg);

	if (!eq)
		return opt_usage_error("invalid --label '%s': expected KEY=VALUE (e.g. service=api)", arg);
	if (klen == 0)
		return opt_usage_error("invalid --label '%s': empty key", arg);
	if (klen > OPTIONS_LABEL_KEY_MAX)
		return opt_usage_error("invalid --label: key longer than %d bytes", OPTIONS_LABEL_KEY_MAX);
	for (size_t i = 0; i < klen; i++) {
		char c = arg[i];
		bool ok = c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (i > 0 && c >= '0' && c <= '9');
		if (!ok)
			return opt_usage_error("invalid --label key '%.*s': letters, digits and '_', "
					       "not starting with a digit (e.g. service_name=api)",
					       (int)klen, arg);
	}
	for (size_t i = 0; i < sizeof ours / sizeof ours[0]; i++)
		if (strlen(ours[i]) == klen && memcmp(ours[i], arg, klen) == 0)
			return opt_usage_error("--label key '%s' is csampler's own label on every "
					       "sample: choose another key", ours[i]);
	if (strlen(eq + 1) > OPTIONS_LABEL_VALUE_MAX)
		return opt_usage_error("--label %.*s: value longer than %d bytes", (int)klen, arg,
				       OPTIONS_LABEL_VALUE_MAX);
	for (size_t i = 0; i < o->nlabels; i++)
		if (strlen(o->labels[i].key) == klen && memcmp(o->labels[i].key, arg, klen) == 0)
			return opt_usage_error("--label %.*s given twice", (int)klen, arg);
	if (o->nlabels == OPTIONS_MAX_LABELS)
		return opt_usage_error("too many --label options (at most %d)", OPTIONS_MAX_LABELS);
	memcpy(o->labels[o->nlabels].key, arg, klen);
	o->labels[o->nlabels].key[klen] = '\0';
	o->labels[o->nlabels].value = eq + 1;
	o->nlabels++;
	return OPTIONS_RUN;
}
