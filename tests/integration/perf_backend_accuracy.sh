#!/bin/sh
# perf_backend_accuracy: --backend=perf against the kernel's own accounting
# (the perf_event backend: one cpu-clock event per CPU, filtered to the
# target, so a thread's first period has no phase of its own). The burst
# fixture measures its split with CLOCK_THREAD_CPUTIME_ID: threads that
# compute in bursts and sleep, wait on a futex or in epoll between them,
# and short-lived threads next to a steady one. The share of burst_work is
# within 5 points of the kernel's (the time in the blocking calls counting
# on either side), the blocking calls' share at most theirs + 5, the
# short-lived threads' part of short + steady within 5 points (or 3
# standard errors of its samples, if more), and the
# samples stand for the process's CPU within 15% (the kernel counts each
# period itself: no tick can be missed or late); up to 20% above it for
# 1,400 threads born and ended a second, each stopped at its birth by the
# tracer: a timer interrupt held back through a context switch lands on
# the thread switched in (perf record -a -e cpu-clock on the same run
# counts alike: 103.0% against our 103.7%; 104-114% seen). perf record
# -e cpu-clock -p on the same run is the reference for where too: on this
# VM with two busy loops, the kernel's own samples give burst_work less
# than its clock does (epoll 300/3000: 82.8 and 87.8% of perf record's
# against 89.1 and 89.8% by the fixture's clock; csampler's 75.7-87.6;
# 87.0 against 91.9 with no busy loop),
# the rest in the clock reads and the blocking call after it, where a
# timer's interrupt lands as the thread switches in (pvm_irq_enable in
# finish_task_switch: 6-11% of perf record's samples); where perf's share
# lies outside the range, it widens it.
TEST_TIMEOUT=240
. "$TESTS_SRCDIR/lib.sh"
need_root

check_churn() {
	local on=$1 off=$2 F="$T/churn-$1-$2.folded"
	run_burst "$F" 199 churn "$on" "$off" 1 4
	grep -q "perf events: a clock per CPU" "$T/cs.err" || fail "not sampled by perf events: $(cat "$T/cs.err")"
	local short long part
	short=$(folded_count "$F" ';short_lived;burst_work(;|$)')
	long=$(folded_count "$F" ';steady_work(;|$)')
	part=$(awk -v s="$TRUTH_WORK" -v l="$TRUTH_STEADY" 'BEGIN { printf "%.1f\n", 100 * s / (s + l) }')
	# (5 points, or 3 standard errors of the samples there are, whichever
	# is more: a loaded machine gives the fixture half a CPU, and half the
	# samples)
	local tol
	tol=$(share_se 3 "$part" "$((short + long))")
	tol=$(awk -v se="$tol" 'BEGIN { print (se > 5) ? se : 5 }')
	assert_within "threads of ${on} us: % of short + steady (kernel: $part; +- $tol)" \
		"$(pct "$short" "$((short + long))")" \
		"$(awk -v p="$part" -v t="$tol" 'BEGIN { print p - t }')" "$(awk -v p="$part" -v t="$tol" 'BEGIN { print p + t }')"
	assert_within "threads of ${on} us: sampled CPU, % of the process's" \
		"$(awk -v n="$TOTAL" -v p="$TRUTH_PROCESS" 'BEGIN { printf "%.1f\n", 100 * n * (1e9 / 199) / p }')" 85 120
}

BURST_CS_ARGS="--backend=perf -v"
BURST_REFERENCE=perf
check_burst 499 85 115 sleep 500 4500 1 4
check_burst 499 85 115 sleep 1000 1000 4 3
check_burst 499 85 115 futex 500 4500 2 3
check_burst 499 85 115 epoll 300 3000 2 3
BURST_REFERENCE=
check_churn 300 0
check_churn 3000 1000
exit 0
