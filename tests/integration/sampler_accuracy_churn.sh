#!/bin/sh
# sampler_accuracy_churn: short-lived threads (0.3, 1 and 3 ms of work
# each, one after another) next to a thread that works 1 ms in 2, launched
# under csampler at 199 Hz. The fixture measures what the kernel accounted
# (CLOCK_THREAD_CPUTIME_ID): S in the short threads' burst_work, L in
# steady_work, the rest creating and ending threads. Threads that live less
# than a tick are sampled in proportion to their CPU: the short threads'
# part of the two, S / (S + L), is within 5 points of the kernel's (8 under
# AddressSanitizer, see below; 3 standard errors where fewer samples make
# that more) (before this was fixed: 9 points short, and a third of the
# CPU unsampled); the
# rest is at most 5 points above the kernel's; and the samples stand for
# the process's CPU time within 10% under, 7% over (each thread's CPU is
# read at its exit, and the threads sampled fewer than 8 times are scaled
# to their account together; measured 96-102%: the CPU of a thread that
# ends during a tick's round before its first read is left out, and the
# fixture reads its own before its threads are joined; it was 87-98%,
# within 25%, when short threads kept their raw counts; with two busy
# loops beside it the 1 ms threads came out 105-111.6% while a thread that
# ended before its first read had its CPU counted twice, at its exit and
# again by a tick before the exit was reported: 99.0-100.8% now). Over
# by 7%, or 3 standard errors of the short threads' count where more: their
# pool was never scaled below the samples it has, and since a new thread
# is sampled from its first tick (it was left out 200 ms when a tick chose
# it before its first stop: most of these were never sampled, their CPU
# spread over the others') that count is what their CPU is worth, give or
# take its noise, of which that floor kept the excess: the 3 ms threads
# came out at 99.4% before, 102.6-107.1% after in four runs (about 260 of
# 540 samples pooled: 3 standard errors are 9%). Here every thread is read
# at its exit, so the pool is scaled to its account (stackmap.h,
# stackmap_set_account_whole), below its count too: the last case below.
TEST_TIMEOUT=180
. "$TESTS_SRCDIR/lib.sh"
need_root
# Under AddressSanitizer csampler's tick runs several times slower, so the
# state it reads lags its instant more, and 300 us threads (which start,
# run and end within one such lag) came out 4-5.4 points under the kernel's
# share in CI runs where the plain build is within 1-2: the sanitizer run
# is held to 8 points, the plain build to 5.
tol=5
ldd "$CSAMPLER" 2>/dev/null | grep -q libasan && tol=8

check_case() {
	local on=$1 off=$2 F="$T/churn-$1-$2.folded"
	run_burst "$F" 199 churn "$on" "$off" 1 4
	local work=$TRUTH_WORK steady=$TRUTH_STEADY process=$TRUTH_PROCESS total=$TOTAL short long
	short=$(folded_count "$F" ';short_lived;burst_work(;|$)')
	long=$(folded_count "$F" ';steady_work(;|$)')
	local part
	part=$(awk -v s="$work" -v l="$steady" 'BEGIN { printf "%.1f\n", 100 * s / (s + l) }')
	# (5 points, or 3 standard errors of the share over the samples of the
	# two, when a busy machine gives fewer: 350 samples, 8 points)
	local t
	t=$(share_se 3 "$part" "$((short + long))")
	t=$(awk -v se="$t" -v b="$tol" 'BEGIN { print (se > b) ? se : b }')
	assert_within "threads of ${on} us: % of short + steady (kernel: $part; +- $t)" \
		"$(pct "$short" "$((short + long))")" \
		"$(awk -v p="$part" -v t="$t" 'BEGIN { print p - t }')" \
		"$(awk -v p="$part" -v t="$t" 'BEGIN { print p + t }')"
	assert_within "threads of ${on} us: % for creating and ending threads" \
		"$(pct "$((total - short - long))" "$total")" 0 \
		"$(awk -v s="$work" -v l="$steady" -v p="$process" 'BEGIN { printf "%.1f\n", 100 * (p - s - l) / p + 5 }')"
	# (over: 7%, or 3 standard errors of the short threads' count, which
	# their pool keeps where it is above what their CPU is worth)
	assert_within "threads of ${on} us: sampled CPU, % of the process's" \
		"$(awk -v n="$total" -v p="$process" 'BEGIN { printf "%.1f\n", 100 * n * (1e9 / 199) / p }')" 90 \
		"$(awk -v n="$total" -v l="$long" "$AWK_ROOT"'BEGIN { h = 100 + 300 * root(n - l) / n; printf "%.1f\n", (h > 107) ? h : 107 }')"
}

check_case 300 0
check_case 1000 0
check_case 3000 1000

# Four chains of 1 ms threads side by side at 999 Hz: a tick stops every
# thread that ran since the last one and counts each a whole period, so
# threads that shared a period count more periods than they used; their
# pool is scaled down to their account, which is whole (each thread's CPU
# is read at its exit stop): 97.2-98.6% of the process's CPU, where the
# pool kept its count (the floor a short account needs) 107.3-111.5%
# (python's http.server, a thread a request: 120% of the kernel's).
run_burst "$T/four.folded" 999 churn 1000 0 4 4
assert_within "four chains of 1 ms threads at 999 Hz: sampled CPU, % of the process's" \
	"$(awk -v n="$TOTAL" -v p="$TRUTH_PROCESS" 'BEGIN { printf "%.1f\n", 100 * n * (1e9 / 999) / p }')" 90 105
exit 0
