/* libFuzzer harness for serve_params, which parses what a --serve client
 * and command line send (any bytes): the input as an address, a request
 * path, a query parameter (split at its first '='; no '=' is a bare key),
 * and an Authorization header. Nothing may crash or read out of bounds, a
 * parsed address fits its fields, and an accepted parameter leaves the
 * query within its bounds. Built and run by make fuzz (tests/Makefile.am);
 * replayed over corpus/serve_params/ by make check. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fuzz_text.h"
#include "serve_params.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	char err[256];

	struct serve_address a;
	if (serve_parse_address(text, &a, err, sizeof err) == 0) {
		if (a.unix_socket ? strlen(a.path) == 0 || strlen(a.path) >= sizeof a.path
				  : strlen(a.host) == 0 || atol(a.port) > 65535 || strlen(a.port) > 5)
			abort();
	} else if (strlen(err) == 0) {
		abort();
	}
	enum serve_route r = serve_route(text);
	if (r != SERVE_ROUTE_NONE && r != SERVE_ROUTE_INDEX && r != SERVE_ROUTE_PROFILE &&
	    r != SERVE_ROUTE_DUMP && r != SERVE_ROUTE_GO_ONLY)
		abort();

	struct serve_query q = { .seconds = 30, .rate = 99, .format = FORMAT_PPROF };
	char *eq = strchr(text, '=');
	if (eq)
		*eq = '\0';
	if (serve_query_set(&q, text, eq ? eq + 1 : NULL, 300, 10000, err, sizeof err) == 0) {
		if (q.seconds < 1 || q.seconds > 300 || q.rate < 1 || q.rate > 10000 ||
		    q.format == FORMAT_AUTO)
			abort();
	} else if (strlen(err) == 0) {
		abort();
	}
	if (eq)
		*eq = '=';
	if (serve_bearer_matches(text, strlen(text), "s3cret", 6) &&
	    (strncasecmp(text, "bearer ", 7) != 0 || !strstr(text, "s3cret")))
		abort();
	free(text);
	return 0;
}
