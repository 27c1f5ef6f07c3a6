#!/bin/sh
# perf_backend_launch: a program csampler starts is its own child until the
# exec: the forked csampler that waits for its go and then calls execve.
# --backend=perf followed that process from the fork, so a sample that
# fired in the exec (which copies the environment: about 1.7 MB here, 14
# variables of 120 KB) showed csampler's own run_child and launch_fork in
# the program's profile: 1-2 such samples in each of 5 runs at 999 Hz with
# the previous binary. The launched process is now followed from its exec:
# none of csampler's functions in 3 runs, and the program's own samples
# all there (the default backend stops the child at its exec and never
# samples it before).
TEST_TIMEOUT=120
. "$TESTS_SRCDIR/lib.sh"
need_root
big=$(head -c 120000 /dev/zero | tr '\0' x)
for k in 1 2 3 4 5 6 7 8 9 10 11 12 13 14; do
	export "CS_TEST_PAD$k=$big"
done
for run in 1 2 3; do
	run_csampler --backend=perf -F 999 -o "$T/hot.folded" -- "$PROGS/hot" 1
	assert_eq "run $run: exit status" "$CS_STATUS" 0
	assert_eq "run $run: samples in csampler's own code (run_child, launch_fork): $(grep -E '(^|;)(run_child|launch_fork|target_launch)(;| )' "$T/hot.folded" | head -3)" \
		"$(folded_count "$T/hot.folded" '(^|;)(run_child|launch_fork|target_launch|target_start)(;|$)')" 0
	assert_folded_has "$T/hot.folded" '^_start;.*main;'
done
exit 0
