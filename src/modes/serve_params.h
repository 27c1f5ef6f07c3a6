/* serve_params: what --serve's command line and requests say, parsed; pure
 * (no I/O), unit-tested.
 *
 * serve_parse_address reads --serve's [ADDR:]PORT (ADDR a host name or
 * address, IPv6 in brackets, default 127.0.0.1; PORT 0 to 65535, 0 picking
 * a free one) or unix:PATH. serve_route names what a request path asks for.
 * serve_query_set applies one query parameter of /debug/pprof/profile to a
 * request (unknown ones are ignored, as Go's handlers do; a bad value gives
 * the reason a 400 answer states). serve_bearer_matches checks an
 * Authorization header against the token in time independent of where they
 * differ. */
#ifndef CSAMPLER_SERVE_PARAMS_H
#define CSAMPLER_SERVE_PARAMS_H
#include <stdbool.h>
#include <stddef.h>

#include "write.h"

/* --serve-max-seconds is at most a day. */
#define SERVE_MAX_SECONDS_LIMIT 86400u

struct serve_address {
	bool unix_socket;
	char path[108];                 /* unix:PATH (sun_path's size) */
	char host[256];                 /* without brackets */
	char port[6];                   /* decimal */
};

/* 0, or -1 with the reason in ERR. */
int serve_parse_address(const char *arg, struct serve_address *out, char *err, size_t errsz);

enum serve_route {
	SERVE_ROUTE_NONE,               /* not ours: 404 */
	SERVE_ROUTE_INDEX,              /* "/", "/debug/pprof", "/debug/pprof/" */
	SERVE_ROUTE_PROFILE,            /* /debug/pprof/profile */
	SERVE_ROUTE_DUMP,               /* /debug/pprof/dump */
	SERVE_ROUTE_GO_ONLY,            /* any other /debug/pprof/NAME (heap, allocs...) */
};
enum serve_route serve_route(const char *path);

/* A profile request: the command line's defaults, then its parameters. */
#define SERVE_MAX_TIDS 16
struct serve_query {
	unsigned seconds;               /* 1 .. max_seconds */
	unsigned rate;                  /* Hz */
	bool idle, threads;
	enum output_format format;      /* pprof unless asked */
	int tids[SERVE_MAX_TIDS];       /* tid=N (repeatable): only these threads */
	size_t ntids;
};
#define SERVE_DEFAULT_SECONDS 30u
/* Apply KEY=VALUE (VALUE NULL for a bare key). 0, or -1 with the reason in
 * ERR. */
int serve_query_set(struct serve_query *q, const char *key, const char *value,
		    unsigned max_seconds, unsigned max_rate, char *err, size_t errsz);

/* Whether HEADER (an Authorization value of HEADER_LEN bytes, or NULL) is
 * "Bearer TOKEN". */
bool serve_bearer_matches(const char *header, size_t header_len, const char *token,
			  size_t token_len);
#endif
