/* names: shortening demangled names (see names.h). */
#include "config.h"

#include <stdbool.h>
#include <string.h>

#include "names.h"

/* Whether s[i] is part of an operator's own name: it lies in the token
 * right after "operator" (operator<<, operator(), operator->...). */
static bool operator_bracket(const char *s, size_t i)
{
	static const char *const tokens[] = {
		"<<=", ">>=", "<=>", "->*", "<<", ">>", "<=", ">=", "->", "()", "<", ">",
	};
	for (size_t k = i >= 3 ? i - 3 : 0; k <= i; k++) {
		if (k < 8 || strncmp(s + k - 8, "operator", 8) != 0)
			continue;
		for (size_t t = 0; t < sizeof tokens / sizeof tokens[0]; t++) {
			size_t len = strlen(tokens[t]);
			if (strncmp(s + k, tokens[t], len) == 0)
				return i < k + len;
		}
	}
	return false;
}

/* The index just past the group opened at s[i] ('<', '(' or '{'), counting
 * every kind of bracket; 0 if it does not close. */
static size_t group_end(const char *s, size_t n, size_t i)
{
	int depth = 0;
	for (size_t j = i; j < n; j++) {
		char c = s[j];
		if ((c == '<' || c == '>' || c == '(' || c == ')') && j != i && operator_bracket(s, j))
			continue;
		if (c == '-' && j + 1 < n && s[j + 1] == '>') {
			j++;
			continue;
		}
		if (c == '<' || c == '(' || c == '{')
			depth++;
		else if (c == '>' || c == ')' || c == '}')
			if (--depth == 0)
				return j + 1;
		if (depth < 0)
			return 0;
	}
	return 0;
}

/* The length of S without its trailing parameter list (and the qualifiers
 * after it: " const", " &", " noexcept"...). */
static size_t without_parameters(const char *s, size_t n)
{
	size_t cut = n;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if ((c == '<' || c == '(' || c == '{') && !operator_bracket(s, i)) {
			size_t end = group_end(s, n, i);
			if (!end)
				return n;
			/* a parameter list: after a name, and only qualifiers follow */
			if (c == '(' && i > 0 && strspn(s + end, " abcdefghijklmnopqrstuvwxyz&") == n - end)
				cut = i;
			i = end - 1;
		}
	}
	return cut;
}

size_t names_shorten(const char *in, char *out, size_t outsz)
{
	if (!outsz)
		return 0;
	size_t n = in ? strlen(in) : 0, o = 0;
	/* Rust legacy mangling's hash: "::h" and 16 hex digits at the end */
	if (n > 19 && strncmp(in + n - 19, "::h", 3) == 0 &&
	    strspn(in + n - 16, "0123456789abcdef") == 16)
		n -= 19;
	n = without_parameters(in, n);
	for (size_t i = 0; i < n && o + 1 < outsz; i++) {
		size_t end;
		if (in[i] == '<' && !operator_bracket(in, i) && (end = group_end(in, n, i)) != 0) {
			const char *dots = "<...>";
			for (const char *d = dots; *d && o + 1 < outsz; d++)
				out[o++] = *d;
			i = end - 1;
			continue;
		}
		out[o++] = in[i];
	}
	out[o] = '\0';
	return o;
}
