/* serve_params: see serve_params.h. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "serve_params.h"

/* A decimal number MIN..MAX, digits only. */
static bool parse_number(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	unsigned long v = 0;
	if (!s || !*s || strlen(s) > 10)
		return false;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		v = v * 10 + (unsigned long)(*p - '0');
	}
	if (v < min || v > max)
		return false;
	*out = v;
	return true;
}

int serve_parse_address(const char *arg, struct serve_address *out, char *err, size_t errsz)
{
	memset(out, 0, sizeof *out);
	if (strncmp(arg, "unix:", 5) == 0) {
		const char *path = arg + 5;
		if (!*path) {
			snprintf(err, errsz, "'%s' names no socket: give unix:PATH", arg);
			return -1;
		}
		if (strlen(path) >= sizeof out->path) {
			snprintf(err, errsz, "the socket path '%s' is longer than %zu bytes, the most a "
				 "Unix socket can have", path, sizeof out->path - 1);
			return -1;
		}
		out->unix_socket = true;
		strcpy(out->path, path);
		return 0;
	}
	const char *port = arg, *colon = strrchr(arg, ':');
	snprintf(out->host, sizeof out->host, "127.0.0.1");
	if (colon) {
		const char *host = arg;
		size_t len = (size_t)(colon - arg);
		if (host[0] == '[') {
			if (len < 2 || host[len - 1] != ']') {
				snprintf(err, errsz, "invalid address '%s': an IPv6 address goes in brackets, "
					 "e.g. [::1]:6060", arg);
				return -1;
			}
			host++;
			len -= 2;
		} else if (memchr(host, ':', len)) {
			snprintf(err, errsz, "invalid address '%s': put an IPv6 address in brackets, "
				 "e.g. [::1]:6060", arg);
			return -1;
		}
		if (len == 0 || len >= sizeof out->host) {
			snprintf(err, errsz, "invalid address '%s': expected [ADDR:]PORT or unix:PATH", arg);
			return -1;
		}
		memcpy(out->host, host, len);
		out->host[len] = '\0';
		port = colon + 1;
	}
	unsigned long v;
	if (!parse_number(port, 0, 65535, &v)) {
		snprintf(err, errsz, "invalid port in '%s': expected a number from 0 to 65535 (0: any "
			 "free port)", arg);
		return -1;
	}
	snprintf(out->port, sizeof out->port, "%lu", v);
	return 0;
}

enum serve_route serve_route(const char *path)
{
	static const char prefix[] = "/debug/pprof";
	if (strcmp(path, "/") == 0)
		return SERVE_ROUTE_INDEX;
	if (strncmp(path, prefix, sizeof prefix - 1) != 0)
		return SERVE_ROUTE_NONE;
	const char *rest = path + sizeof prefix - 1;
	if (strcmp(rest, "") == 0 || strcmp(rest, "/") == 0)
		return SERVE_ROUTE_INDEX;
	if (rest[0] != '/')
		return SERVE_ROUTE_NONE;  /* /debug/pprofX */
	rest++;
	if (strcmp(rest, "profile") == 0)
		return SERVE_ROUTE_PROFILE;
	if (strcmp(rest, "dump") == 0)
		return SERVE_ROUTE_DUMP;
	return SERVE_ROUTE_GO_ONLY;
}

/* A boolean parameter: 1/0, true/false, yes/no; a bare key is true. */
static bool parse_flag(const char *value, bool *out)
{
	if (!value || !*value || strcmp(value, "1") == 0 || strcasecmp(value, "true") == 0 ||
	    strcasecmp(value, "yes") == 0) {
		*out = true;
		return true;
	}
	if (strcmp(value, "0") == 0 || strcasecmp(value, "false") == 0 ||
	    strcasecmp(value, "no") == 0) {
		*out = false;
		return true;
	}
	return false;
}

int serve_query_set(struct serve_query *q, const char *key, const char *value,
		    unsigned max_seconds, unsigned max_rate, char *err, size_t errsz)
{
	unsigned long v;
	bool flag;
	if (strcmp(key, "seconds") == 0) {
		if (!parse_number(value, 1, max_seconds, &v)) {
			snprintf(err, errsz, "seconds must be a whole number from 1 to %u "
				 "(--serve-max-seconds)", max_seconds);
			return -1;
		}
		q->seconds = (unsigned)v;
	} else if (strcmp(key, "hz") == 0 || strcmp(key, "frequency") == 0) {
		if (!parse_number(value, 1, max_rate, &v)) {
			snprintf(err, errsz, "%s must be a whole number of Hz from 1 to %u", key, max_rate);
			return -1;
		}
		q->rate = (unsigned)v;
	} else if (strcmp(key, "idle") == 0 || strcmp(key, "threads") == 0) {
		if (!parse_flag(value, &flag)) {
			snprintf(err, errsz, "%s must be 1 or 0", key);
			return -1;
		}
		*(strcmp(key, "idle") == 0 ? &q->idle : &q->threads) = flag;
	} else if (strcmp(key, "tid") == 0) {
		if (!parse_number(value, 1, 4194304, &v)) {
			snprintf(err, errsz, "tid must be a thread id (a whole number from 1)");
			return -1;
		}
		if (q->ntids == SERVE_MAX_TIDS) {
			snprintf(err, errsz, "at most %d tid parameters", SERVE_MAX_TIDS);
			return -1;
		}
		q->tids[q->ntids++] = (int)v;
	} else if (strcmp(key, "format") == 0) {
		enum output_format f = value ? write_format_from_name(value) : FORMAT_AUTO;
		if (f == FORMAT_AUTO) {
			char names[128];
			snprintf(err, errsz, "format must be %s",
				 write_format_names(names, sizeof names, false));
			return -1;
		}
		q->format = f;
	}
	return 0;
}

bool serve_bearer_matches(const char *header, size_t header_len, const char *token,
			  size_t token_len)
{
	if (!header || header_len < 7 || strncasecmp(header, "Bearer ", 7) != 0)
		return false;
	const char *given = header + 7, *end = header + header_len;
	while (given < end && *given == ' ')
		given++;
	size_t len = (size_t)(end - given);
	while (len > 0 && (given[len - 1] == ' ' || given[len - 1] == '\t'))
		len--;
	/* every byte of the token is compared whatever differs first (a NUL
	 * in the value is a byte like any other: "TOKEN\0junk" is not TOKEN) */
	unsigned char diff = len != token_len;
	for (size_t i = 0; i < token_len; i++)
		diff |= (unsigned char)(token[i] ^ (i < len ? given[i] : 0));
	return diff == 0;
}
