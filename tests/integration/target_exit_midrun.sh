#!/bin/sh
# target_exit_midrun: a target that exits before the duration ends stops the
# run early, and the output is still written (attach and launch). The
# duration asked is 600 s and csampler's timeout 120 s: a run that ends
# within 60 s (the target lives 1 s launched, 3 s attached) ended because the target did.
. "$TESTS_SRCDIR/lib.sh"
need_root

# timed_run WHAT ARGS...: run_csampler ARGS, failing unless it ends within 60 s
timed_run() {
	local what=$1 t0 t1
	shift
	t0=$(date +%s%N)
	CS_TIMEOUT=120 run_csampler "$@"
	t1=$(date +%s%N)
	assert_within "$what: seconds until csampler ended (-d 600; the target lives 1-3 s)" \
		"$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f\n", (b - a) / 1e9 }')" 0 60
}

timed_run launch -q -F 199 -d 600 -o "$T/launch.folded" -- "$PROGS/hot" 1
assert_eq "launch: exit status" "$CS_STATUS" 0
assert_folded_has "$T/launch.folded" 'leaf_a'

# (3 s: under ASAN beside the suite, csampler's start took the whole of a
# 1 s target's life, and the profile had no sample)
start_fixture hot 3
pid=$FIXTURE_PID
timed_run attach -q -F 199 -d 600 -o "$T/attach.folded" -p "$pid"
assert_eq "attach: exit status" "$CS_STATUS" 0
assert_folded_has "$T/attach.folded" 'leaf_a'
kill -0 "$pid" 2>/dev/null && [ "$(proc_state "$pid")" != Z ] && fail "hot still running"
exit 0
