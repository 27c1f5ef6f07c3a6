#!/bin/sh
# sampler_sleeps: the default (ptrace) backend on a thread that writes 4 KiB
# and fdatasyncs it (it sleeps until the disk has it), then computes 500 us
# (tests/progs/pingpong.c sync), beside two busy loops of the test's own,
# the fixture, the loops and csampler all kept to CPU 0, attached at 199
# and 999 Hz: every phase within 3 points and 3 standard errors of its own
# account (check_phases).
# Woken from fdatasync onto csampler's CPU, the thread waits there for it,
# then sleeps again inside fdatasync before it stops at its exit: its run
# delay alone (shorter than the time since the tick) took it for running
# at the tick, and fdatasync came out at 31-37% for its own 9-16%. A
# thread the read finds on csampler's CPU that the tick did not take that
# CPU from was waiting for it (its /proc/TID/sched exec_start is not
# csampler's): its stop is not counted. And the CPU the call uses just
# before it sleeps: the kernel runs the thread on to its sleep before the
# tick's switch (no kernel preemption), so csampler reads it asleep; its
# exec_start, set as it left the CPU, falls between the tick's instant and
# csampler's switch, and it is copied where it sleeps (the previous binary
# counted fdatasync at 3-6% for its own 10-19%; now 7.6 for 8.4-10.0 at
# 199 Hz, 11.0 for 12.0-13.3 at 999 Hz).
TEST_TIMEOUT=240
. "$TESTS_SRCDIR/lib.sh"
need_root
[ -r /proc/self/sched ] || skip "no /proc/PID/sched (a kernel without CONFIG_SCHED_DEBUG)"
start_fixture busy 2
taskset -a -p -c 0 "$FIXTURE_PID" >/dev/null || harness "cannot pin the busy loops to CPU 0"
PHASES_CPU=0

for rate in 199 999; do
	check_phases sync "$rate" attach
done
exit 0
