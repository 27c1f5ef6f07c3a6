/* Unit tests for taskclock: the span a thread's own arrivals cost, from its
 * run time, its task clock, its arrivals and those our stops made (none
 * when the clock is not behind, no arrival, or every arrival ours; the
 * span shared by arrivals otherwise); and a task clock of this very thread
 * opened and read against its CLOCK_THREAD_CPUTIME_ID over a busy stretch
 * (skipped where perf events are refused: perf_event_paranoid 3, seccomp). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "taskclock.h"

static void test_span(void **state)
{
	(void)state;
	assert_int_equal(taskclock_span(1000, 1000, 10, 0), 0);   /* not behind */
	assert_int_equal(taskclock_span(1000, 1200, 10, 0), 0);   /* ahead: none */
	assert_int_equal(taskclock_span(1000, 900, 0, 0), 0);     /* no arrival */
	assert_int_equal(taskclock_span(1000, 900, 10, 10), 0);   /* all ours */
	assert_int_equal(taskclock_span(1000, 900, 10, 12), 0);
	assert_int_equal(taskclock_span(1000, 900, 10, 0), 100);
	assert_int_equal(taskclock_span(1000, 600, 10, 5), 200);  /* half ours */
	assert_int_equal(taskclock_span(10000000000ull, 7000000000ull, 4, 1), 2250000000ull);
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void test_own_clock(void **state)
{
	(void)state;
	int fd = taskclock_open(0);   /* (0: the calling thread) */
	if (fd < 0) {
		if (errno == EACCES || errno == EPERM || errno == ENOENT || errno == ENOSYS)
			skip();
		fail_msg("taskclock_open: errno %d", errno);
	}
	uint64_t c0 = 0, c1 = 0, t0 = thread_cpu_ns();
	assert_true(taskclock_read(fd, &c0));
	volatile uint64_t x = 1;
	while (thread_cpu_ns() - t0 < 50000000u)  /* 50 ms; each clock read a system call */
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005u + 1442695040888963407u;
	uint64_t t1 = thread_cpu_ns();
	assert_true(taskclock_read(fd, &c1));
	/* on its own CPU all along, the two clocks agree to a few percent */
	uint64_t d = c1 - c0, want = t1 - t0;
	assert_true(d > want * 95 / 100);
	assert_true(d < want * 105 / 100 + 1000000u);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_span),
		cmocka_unit_test(test_own_clock),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
