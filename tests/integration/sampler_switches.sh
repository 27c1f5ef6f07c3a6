#!/bin/sh
# sampler_switches: the default (ptrace) backend on threads that sleep and
# wake thousands of times a second, against their own account of each
# phase (tests/progs/pingpong.c; check_phases), at 199 and 999 Hz,
# attached: a socketpair writer and reader of 16 KiB blocks, and an epoll
# ping-pong server and its client (64-byte messages, ~20 us of work a
# request). Every phase within 3 points and 3 standard errors of its own
# share.
# A thread running on the CPU csampler's tick takes is stopped when it
# gets that CPU back: its stop in a call that waits used to be taken for a
# wake-up and dropped (judge_stop), so on 2 CPUs the reader's read came out
# at 11.8-12.8% for its own 24.5%; now 23-27%. A thread on another CPU is
# reached by the interrupt's inter-processor interrupt 26-42 us later, by
# when a thread making calls has reached the next one's exit: the epoll
# phases were 10.8-12.8 points off (the previous binary fails here). The
# holders (sampling/holders.h) take every other CPU at the tick as the tick
# thread takes its own: every phase within 2.8 points.
# Two more: a thread that writes 4 KiB and fdatasyncs it, then computes
# 500 us (sync: the issue 44 row where fdatasync came out at 14.8% for its
# own 6.2%), and one that never sleeps, a getrandom of 4 KiB, a getppid and
# 10 us of user code in turn (calls: getrandom at 32.5% for perf's 16.9%).
# A thread that went to sleep after the tick's instant and before the
# holder's switch (the kernel ran it on to its wait) is copied where it
# sleeps: fdatasync within 2.9 points here, quiet or beside two busy loops.
TEST_TIMEOUT=400
. "$TESTS_SRCDIR/lib.sh"
need_root
for rate in 199 999; do
	check_phases socket "$rate" attach
	check_phases epoll "$rate" attach
	check_phases sync "$rate" attach
	check_phases calls "$rate" attach
done
exit 0
