/* Unit tests for serve_params: --serve's addresses (port only, host and
 * port, IPv6 in brackets, unix:PATH, and the malformed ones refused with a
 * reason), the routes of request paths (Go's other profiles apart from
 * ours, look-alike prefixes not ours), a profile request's parameters (each
 * bound, the aliases, bare flags, unknown keys ignored, a refused value
 * leaving the query as it was), and the bearer check. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "serve_params.h"

static void test_addresses(void **state)
{
	struct serve_address a;
	char err[256];
	(void)state;
	assert_int_equal(serve_parse_address("6060", &a, err, sizeof err), 0);
	assert_false(a.unix_socket);
	assert_string_equal(a.host, "127.0.0.1");
	assert_string_equal(a.port, "6060");
	assert_int_equal(serve_parse_address("0.0.0.0:80", &a, err, sizeof err), 0);
	assert_string_equal(a.host, "0.0.0.0");
	assert_string_equal(a.port, "80");
	assert_int_equal(serve_parse_address("[::1]:0", &a, err, sizeof err), 0);
	assert_string_equal(a.host, "::1");
	assert_string_equal(a.port, "0");
	assert_int_equal(serve_parse_address("localhost:65535", &a, err, sizeof err), 0);
	assert_string_equal(a.host, "localhost");
	assert_int_equal(serve_parse_address("unix:/run/cs.sock", &a, err, sizeof err), 0);
	assert_true(a.unix_socket);
	assert_string_equal(a.path, "/run/cs.sock");

	static const char *const bad[] = {
		"", "65536", "-1", "http", "6060x", ":6060x", "::1:6060", "[::1:6060", "[]:80",
		":", "unix:", "1.2.3.4:", "99999999999999999999",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err[0] = '\0';
		assert_int_equal(serve_parse_address(bad[i], &a, err, sizeof err), -1);
		assert_true(strlen(err) > 10);
	}
	char longpath[200] = "unix:/";
	memset(longpath + 6, 'a', 150);
	longpath[156] = '\0';
	assert_int_equal(serve_parse_address(longpath, &a, err, sizeof err), -1);
	assert_non_null(strstr(err, "longer than"));
}

static void test_routes(void **state)
{
	(void)state;
	assert_int_equal(serve_route("/"), SERVE_ROUTE_INDEX);
	assert_int_equal(serve_route("/debug/pprof"), SERVE_ROUTE_INDEX);
	assert_int_equal(serve_route("/debug/pprof/"), SERVE_ROUTE_INDEX);
	assert_int_equal(serve_route("/debug/pprof/profile"), SERVE_ROUTE_PROFILE);
	assert_int_equal(serve_route("/debug/pprof/dump"), SERVE_ROUTE_DUMP);
	assert_int_equal(serve_route("/debug/pprof/heap"), SERVE_ROUTE_GO_ONLY);
	assert_int_equal(serve_route("/debug/pprof/goroutine"), SERVE_ROUTE_GO_ONLY);
	assert_int_equal(serve_route("/debug/pprof/profile/x"), SERVE_ROUTE_GO_ONLY);
	assert_int_equal(serve_route("/debug/pprofile"), SERVE_ROUTE_NONE);
	assert_int_equal(serve_route("/debug"), SERVE_ROUTE_NONE);
	assert_int_equal(serve_route("/metrics"), SERVE_ROUTE_NONE);
	assert_int_equal(serve_route(""), SERVE_ROUTE_NONE);
}

static void test_query(void **state)
{
	struct serve_query q = { .seconds = 30, .rate = 99, .format = FORMAT_PPROF };
	char err[256];
	(void)state;
	assert_int_equal(serve_query_set(&q, "seconds", "10", 300, 10000, err, sizeof err), 0);
	assert_int_equal(q.seconds, 10);
	assert_int_equal(serve_query_set(&q, "seconds", "300", 300, 10000, err, sizeof err), 0);
	assert_int_equal(q.seconds, 300);
	assert_int_equal(serve_query_set(&q, "hz", "999", 300, 10000, err, sizeof err), 0);
	assert_int_equal(q.rate, 999);
	assert_int_equal(serve_query_set(&q, "frequency", "49", 300, 10000, err, sizeof err), 0);
	assert_int_equal(q.rate, 49);
	assert_int_equal(serve_query_set(&q, "idle", NULL, 300, 10000, err, sizeof err), 0);
	assert_true(q.idle);
	assert_int_equal(serve_query_set(&q, "idle", "0", 300, 10000, err, sizeof err), 0);
	assert_false(q.idle);
	assert_int_equal(serve_query_set(&q, "threads", "true", 300, 10000, err, sizeof err), 0);
	assert_true(q.threads);
	assert_int_equal(serve_query_set(&q, "format", "svg", 300, 10000, err, sizeof err), 0);
	assert_int_equal(q.format, FORMAT_SVG);
	assert_int_equal(serve_query_set(&q, "format", "speedscope", 300, 10000, err, sizeof err), 0);
	assert_int_equal(q.format, FORMAT_SPEEDSCOPE);
	assert_int_equal(serve_query_set(&q, "tid", "4242", 300, 10000, err, sizeof err), 0);
	assert_int_equal(serve_query_set(&q, "tid", "17", 300, 10000, err, sizeof err), 0);
	assert_int_equal(q.ntids, 2);
	assert_int_equal(q.tids[0], 4242);
	assert_int_equal(q.tids[1], 17);
	/* what Go's handlers take and we have no use for */
	assert_int_equal(serve_query_set(&q, "debug", "1", 300, 10000, err, sizeof err), 0);
	assert_int_equal(serve_query_set(&q, "gc", NULL, 300, 10000, err, sizeof err), 0);

	struct serve_query before = q;
	static const char *const bad[][2] = {
		{ "seconds", "0" }, { "seconds", "301" }, { "seconds", "1.5" }, { "seconds", "" },
		{ "seconds", NULL }, { "seconds", "-3" }, { "seconds", "10s" },
		{ "seconds", "99999999999999999999" }, { "hz", "0" }, { "hz", "10001" },
		{ "frequency", "x" }, { "idle", "2" }, { "threads", "maybe" }, { "format", "png" },
		{ "format", NULL }, { "tid", "0" }, { "tid", "x" }, { "tid", NULL },
		{ "tid", "4194305" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err[0] = '\0';
		assert_int_equal(serve_query_set(&q, bad[i][0], bad[i][1], 300, 10000, err,
						 sizeof err), -1);
		assert_non_null(strstr(err, bad[i][0]));
		assert_memory_equal(&q, &before, sizeof q);
	}
	/* at most SERVE_MAX_TIDS */
	while (q.ntids < SERVE_MAX_TIDS)
		assert_int_equal(serve_query_set(&q, "tid", "5", 300, 10000, err, sizeof err), 0);
	assert_int_equal(serve_query_set(&q, "tid", "5", 300, 10000, err, sizeof err), -1);
	assert_non_null(strstr(err, "at most 16 tid parameters"));
}

static void test_bearer(void **state)
{
	(void)state;
	assert_true(serve_bearer_matches("Bearer s3cret", sizeof "Bearer s3cret" - 1, "s3cret", 6));
	assert_true(serve_bearer_matches("bearer  s3cret ", sizeof "bearer  s3cret " - 1, "s3cret", 6));
	assert_false(serve_bearer_matches(NULL, 0, "s3cret", 6));
	assert_false(serve_bearer_matches("", sizeof "" - 1, "s3cret", 6));
	assert_false(serve_bearer_matches("Bearer", sizeof "Bearer" - 1, "s3cret", 6));
	assert_false(serve_bearer_matches("Bearer ", sizeof "Bearer " - 1, "s3cret", 6));
	assert_false(serve_bearer_matches("Bearer s3cre", sizeof "Bearer s3cre" - 1, "s3cret", 6));
	assert_false(serve_bearer_matches("Bearer s3cret2", sizeof "Bearer s3cret2" - 1, "s3cret", 6));
	assert_false(serve_bearer_matches("Bearer S3cret", sizeof "Bearer S3cret" - 1, "s3cret", 6));
	assert_false(serve_bearer_matches("Basic s3cret", sizeof "Basic s3cret" - 1, "s3cret", 6));
	assert_false(serve_bearer_matches("s3cret", sizeof "s3cret" - 1, "s3cret", 6));
	/* a NUL inside the value: not the token followed by junk */
	assert_false(serve_bearer_matches("Bearer s3cret\0junk", sizeof "Bearer s3cret\0junk" - 1,
					  "s3cret", 6));
	assert_false(serve_bearer_matches("Bearer s3cret\0", sizeof "Bearer s3cret\0" - 1, "s3cret", 6));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_addresses),
		cmocka_unit_test(test_routes),
		cmocka_unit_test(test_query),
		cmocka_unit_test(test_bearer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
