#!/bin/sh
# sampler_new_threads: threads that name themselves as they start (as most
# servers' do), launched under csampler: 60 threads made one after
# another, each computing 15 ms of its own CPU (tests/progs/renamers.c),
# at 999 and 199 Hz. A new thread becomes known at its parent's clone
# event, before its own first stop is reported; one a tick chose in
# between was not interrupted (the stop it owes answers for it), and was
# waited for as a late stop for 200 ms: unsampled, its CPU counted under
# the name it was born with, on a key with no sample. That CPU then went
# to the pool of few-sample threads: onto the main thread's one sample
# (pthread_create's clone3: 7.5% of the samples of pingpong calls beside
# two busy loops) or, with none there, nowhere (the profile short by as
# much). Asserted: worker_work's share and the other threads' within 3
# points (and 3 standard errors) of the kernel's account of the workers
# and of the rest, and at 999 Hz the samples stand for the process's CPU
# within 5%. At 199 Hz that is only noted: 3 samples a worker are scaled
# with the pool of few-sample threads, which is never scaled below the
# samples it has (stackmap_scale.c), and beside two busy loops it came out
# at 102.3-107.1% (issue 44, row 5's one-sided excess).
# The previous binary, beside two busy loops: worker_work 83.4% and 92.4%
# for 98.9% and 99.2% in 2 runs of 3 (quiet, 0 of 6: the race is narrow).
TEST_TIMEOUT=120
. "$TESTS_SRCDIR/lib.sh"

for rate in 999 199; do
	F="$T/new-$rate.folded"
	run_csampler -F "$rate" --threads -o "$F" -- "$PROGS/renamers" 60 15
	assert_eq "status at $rate Hz ($(cat "$T/cs.err"))" "$CS_STATUS" 0
	workers=$(awk '$1 == "workers" { print $2 }' "$T/cs.out")
	process=$(awk '$1 == "process" { print $2 }' "$T/cs.out")
	[ -n "$workers" ] && [ -n "$process" ] || fail "renamers: no account: $(cat "$T/cs.out")"
	total=$(folded_total "$F")
	[ "$total" -gt 0 ] || fail "no samples at $rate Hz"
	note "$rate Hz: $(grep -E '^csampler: [0-9]+ samples' "$T/cs.err")"
	want=$(pct "$workers" "$process")
	tol=$(awk -v se="$(share_se 3 "$want" "$total")" 'BEGIN { print 3 + se }')
	assert_within "$rate Hz: worker_work, % of the samples (the workers' CPU: $want% of the process's; +- $tol)" \
		"$(pct "$(folded_count "$F" ';worker_work(;|$)')" "$total")" \
		"$(awk -v w="$want" -v t="$tol" 'BEGIN { print w - t }')" \
		"$(awk -v w="$want" -v t="$tol" 'BEGIN { print w + t }')"
	assert_within "$rate Hz: threads not named worker, % of the samples (their CPU: $(awk -v w="$want" 'BEGIN { print 100 - w }')%; +- $tol)" \
		"$(pct "$(folded_count "$F" '^renamers-')" "$total")" \
		0 "$(awk -v w="$want" -v t="$tol" 'BEGIN { print 100 - w + t }')"
	cpu=$(awk -v n="$total" -v p="$process" -v r="$rate" 'BEGIN { printf "%.1f\n", 100 * n * (1e9 / r) / p }')
	if [ "$rate" = 999 ]; then
		assert_within "$rate Hz: sampled CPU, % of the process's" "$cpu" 95 105
	else
		note "$rate Hz: sampled CPU, % of the process's: $cpu (not asserted: see above)"
	fi
done
exit 0
