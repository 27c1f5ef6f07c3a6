#!/bin/sh
# sampler_accuracy_burst: threads that compute in bursts and block between
# them (clock_nanosleep, futex, epoll_wait, read of a socket with a timeout,
# read of a pipe written by another thread), at several duty cycles and
# thread counts, launched under csampler at 499 Hz. The fixture measures
# its own split with CLOCK_THREAD_CPUTIME_ID, i.e. the kernel's accounting:
# W in burst_work, B inside the blocking calls (entry, exit, and the
# fixture's own clock reads around them; perf record -e cpu-clock puts 1-2%
# of the thread there where B says 5%). The share of samples in burst_work
# is within 5 points of W, B counting on either side (it lies between the
# work and the wait); the share in the blocking calls is at most B + 5 (a
# thread woken from a wait is not running where it slept: before this was
# fixed, 20-35%); and the samples stand for the process's CPU time within
# -8%/+6% (each thread's samples are scaled to its kernel-counted CPU, so
# no sampling error is left in the total; what is left is CPU the fixture
# used outside its threads' windows: 97.4-100.5% measured).
TEST_TIMEOUT=240
. "$TESTS_SRCDIR/lib.sh"
need_root

# the fewest samples (10% of one thread) get the longest run
check_burst 499 92 106 sleep 500 4500 1 6
check_burst 499 92 106 sleep 2000 2000 1 3
check_burst 499 92 106 sleep 1000 1000 4 3
check_burst 499 92 106 futex 500 4500 2 3
check_burst 499 92 106 epoll 300 3000 2 3
check_burst 499 92 106 read 500 2000 2 3
check_burst 499 92 106 pipe 500 2000 2 3
exit 0
