#!/bin/sh
# sampler_switches: the default (ptrace) backend on a socketpair writer and
# reader of 16 KiB blocks that sleep and wake thousands of times a second,
# against their own account of each phase (tests/progs/pingpong.c;
# check_phases), at 199 and 999 Hz, attached. The reader's read and sum
# are asserted within 3 points and 3 standard errors of their own share;
# the writer's phases are noted. A thread running on the CPU csampler's
# tick takes is stopped when it gets that CPU back: its stop in a call that
# waits used to be taken for a wake-up and dropped (judge_stop), so on 2
# CPUs the reader's read came out at 11.8-12.8% for its own 24.5% quiet,
# 10.8% with two busy loops (the previous binary fails here); now 23-27%.
# Measured and not asserted (issue 44, row 2): beside another share test's
# fixture the epoll ping-pong server's read comes out at ~1% at 199 Hz for
# its own 10% (its threads, woken between the tick and csampler's read of
# them, or moved to the other CPU while csampler holds theirs, stop in the
# next call they sleep in, and such stops are dropped), and with two busy
# loops its write gains 8-10 points from its work.
TEST_TIMEOUT=240
. "$TESTS_SRCDIR/lib.sh"
need_root
PHASES_ASSERTED="reader_read|reader_sum"
for rate in 199 999; do
	check_phases socket "$rate" attach
done
exit 0
