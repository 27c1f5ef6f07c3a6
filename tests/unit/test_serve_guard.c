/* Unit tests for serve_guard: the per-client and total connection limits
 * (a slot freed by a close admits again), the header deadline (a
 * connection overdue is shut down, its peer reads end of file; one whose
 * headers are in is not; an answer starts the next request's deadline),
 * and a guard with no connections expiring nothing. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "serve_guard.h"

#define SEC 1000000000ull

static struct sockaddr_in addr_of(const char *ip, unsigned port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	inet_pton(AF_INET, ip, &a.sin_addr);
	return a;
}

static void test_limits(void **state)
{
	(void)state;
	struct serve_guard *g = guard_new(5, 2, 10, true);
	assert_non_null(g);
	void *slot[5];
	struct sockaddr_in a = addr_of("10.0.0.1", 1000), b = addr_of("10.0.0.2", 1000);
	for (int i = 0; i < 2; i++) {
		a.sin_port = htons((uint16_t)(1000 + i));
		assert_true(guard_admit(g, (struct sockaddr *)&a, sizeof a));
		guard_opened(g, -1, (struct sockaddr *)&a, sizeof a, &slot[i], 0);
		assert_non_null(slot[i]);
	}
	/* a third from the same address (another port): refused */
	a.sin_port = htons(2000);
	assert_false(guard_admit(g, (struct sockaddr *)&a, sizeof a));
	for (int i = 2; i < 4; i++) {
		assert_true(guard_admit(g, (struct sockaddr *)&b, sizeof b));
		guard_opened(g, -1, (struct sockaddr *)&b, sizeof b, &slot[i], 0);
	}
	struct sockaddr_in c = addr_of("10.0.0.3", 1);
	assert_true(guard_admit(g, (struct sockaddr *)&c, sizeof c));
	guard_opened(g, -1, (struct sockaddr *)&c, sizeof c, &slot[4], 0);
	/* full: anyone refused, until one goes */
	struct sockaddr_in d = addr_of("10.0.0.4", 1);
	assert_false(guard_admit(g, (struct sockaddr *)&d, sizeof d));
	guard_closed(g, slot[0]);
	assert_true(guard_admit(g, (struct sockaddr *)&d, sizeof d));
	assert_true(guard_admit(g, (struct sockaddr *)&a, sizeof a));
	guard_free(g);
}

/* Whether the peer of a shut-down socket reads end of file now. */
static int reads_eof(int fd)
{
	char c;
	return recv(fd, &c, 1, MSG_DONTWAIT) == 0;
}

static void test_deadline(void **state)
{
	(void)state;
	struct serve_guard *g = guard_new(4, 4, 10, true);
	int slow[2], quick[2], kept[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, slow), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, quick), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, kept), 0);
	struct sockaddr_in a = addr_of("10.0.0.1", 1);
	void *s_slow, *s_quick, *s_kept;
	guard_opened(g, slow[0], (struct sockaddr *)&a, sizeof a, &s_slow, 100 * SEC);
	guard_opened(g, quick[0], (struct sockaddr *)&a, sizeof a, &s_quick, 100 * SEC);
	guard_opened(g, kept[0], (struct sockaddr *)&a, sizeof a, &s_kept, 105 * SEC);
	guard_headers_done(g, s_quick);
	assert_int_equal(guard_expire(g, 109 * SEC), 0);
	assert_false(reads_eof(slow[1]));
	assert_int_equal(guard_expire(g, 110 * SEC), 1);
	assert_true(reads_eof(slow[1]));
	assert_false(reads_eof(quick[1]));
	/* once expired, not again */
	assert_int_equal(guard_expire(g, 111 * SEC), 0);
	/* the quick one answered at 120 s: its next request is due by 130 s */
	guard_answered(g, s_quick, 120 * SEC);
	assert_int_equal(guard_expire(g, 129 * SEC), 1);  /* (kept's, due at 115 s) */
	assert_true(reads_eof(kept[1]));
	assert_false(reads_eof(quick[1]));
	assert_int_equal(guard_expire(g, 130 * SEC), 1);
	assert_true(reads_eof(quick[1]));
	guard_closed(g, s_slow);
	guard_closed(g, s_quick);
	guard_closed(g, s_kept);
	assert_int_equal(guard_expire(g, 1000 * SEC), 0);
	for (int i = 0; i < 2; i++) {
		close(slow[i]);
		close(quick[i]);
		close(kept[i]);
	}
	guard_free(g);
}

static void test_thread(void **state)
{
	(void)state;
	struct serve_guard *g = guard_new(2, 2, 1, true);
	assert_int_equal(guard_start(g), 0);
	guard_free(g);  /* stops and joins at once */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_deadline),
		cmocka_unit_test(test_thread),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
