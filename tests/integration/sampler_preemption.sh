#!/bin/sh
# sampler_preemption: the default (ptrace) backend on a thread that
# computes about 100 us (no call in it) and then reads the process's CPU
# clock (tests/progs/pingpong.c clock), beside two busy loops of the
# test's own, attached at 199 and 999 Hz: each phase within 3 points and
# 3 standard errors of its own account (check_phases). Reading a CPU clock
# brings the scheduler's account of the caller up to date, so on a busy
# host the thread's slice ends at that call's exit far more often than
# anywhere else, and it waits there for a CPU: a stop that came while it
# waited was counted there (issue 44, row 3: the clock read at 19.4% of
# the samples for perf's 1.9%; 25-38% at load 11-17). A thread waiting for
# a CPU at the tick is told from one running there by its se.exec_start
# (the switch that took the CPU at the tick, csampler's own or a
# holder's, stamps the one that ran): its stop is not counted. Measured
# 2026-11-30: the clock read at 0.9-2.3% for its own 1.5-2.3%, beside two
# and eight busy loops, with this binary and with the one before the
# holders alike (the exec_start rule of 2026-11-29 closed the row).
TEST_TIMEOUT=240
. "$TESTS_SRCDIR/lib.sh"
need_root
[ -r /proc/self/sched ] || skip "no /proc/PID/sched (a kernel without CONFIG_SCHED_DEBUG)"
start_fixture busy 2
for rate in 199 999; do
	check_phases clock "$rate" attach
done
exit 0
