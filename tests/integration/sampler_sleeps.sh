#!/bin/sh
# sampler_sleeps: the default (ptrace) backend on a thread that writes 4 KiB
# and fdatasyncs it (it sleeps until the disk has it), then computes 500 us
# (tests/progs/pingpong.c sync), beside two busy loops of the test's own,
# attached at 199 and 999 Hz: fdatasync and the work each within 3 points
# and 3 standard errors of their own account (check_phases). Woken from
# fdatasync onto the CPU csampler's tick runs on, the thread waits there
# for it, then sleeps again inside fdatasync before it stops at its exit:
# its run delay alone (shorter than the time since the tick) took it for
# running at the tick, and fdatasync came out at 16-22% for its own 7-11%
# (the previous binary fails here). A thread the read finds on csampler's
# CPU that the tick did not take that CPU from was waiting for it (its
# /proc/TID/sched exec_start is not csampler's): its stop is not counted.
TEST_TIMEOUT=240
. "$TESTS_SRCDIR/lib.sh"
need_root
[ -r /proc/self/sched ] || skip "no /proc/PID/sched (a kernel without CONFIG_SCHED_DEBUG)"
start_fixture busy 2
PHASES_ASSERTED="syncer_flush|syncer_work"
for rate in 199 999; do
	check_phases sync "$rate" attach
done
exit 0
