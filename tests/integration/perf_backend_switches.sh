#!/bin/sh
# perf_backend_switches: --backend=perf on threads that sleep and wake
# thousands of times a second, against their own account of each phase
# (tests/progs/pingpong.c, CLOCK_THREAD_CPUTIME_ID around each call): an
# epoll ping-pong server and its client (64-byte messages, 20 us of work a
# request), a socketpair writer and reader of 16 KiB blocks, and a thread
# that sleeps 100 us and computes 100 us in turn; at 199 and 999 Hz,
# attached to threads that exist already and launched. Each phase within 3
# points (or 3 standard errors) of its own share. A CPU's clock alone loses
# the periods that end in a switch to sleep (the epoll server's wait came
# out at 6% for its own 12-13%); a thread's own clock does not
# (perf_sampler.c). The napper is judged by its time on a CPU
# (check_phases' "run" clock): the kernel charges a thread woken on an idle
# CPU the CPU's ~20 us exit from idle (measured here: schedstat 36 us a
# nap, task-clock 14 us), which neither csampler nor perf record -p sees.
TEST_TIMEOUT=240
. "$TESTS_SRCDIR/lib.sh"
need_root
PHASES_CS_ARGS="--backend=perf"
for rate in 199 999; do
	check_phases epoll "$rate" attach cpu
	check_phases socket "$rate" launch cpu
	check_phases nap "$rate" attach run
done
exit 0
