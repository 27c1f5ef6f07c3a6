#!/bin/sh
# target_exit_midrun: a target that exits before the duration ends stops the
# run early, and the output is still written (attach and launch).
. "$TESTS_SRCDIR/lib.sh"
need_root

run_csampler -q -F 199 -d 60 -o "$T/launch.folded" -- "$PROGS/hot" 1
assert_eq "launch: exit status" "$CS_STATUS" 0
assert_folded_has "$T/launch.folded" 'leaf_a'

start_fixture hot 1
pid=$FIXTURE_PID
run_csampler -q -F 199 -d 60 -o "$T/attach.folded" -p "$pid"
assert_eq "attach: exit status" "$CS_STATUS" 0
assert_folded_has "$T/attach.folded" 'leaf_a'
kill -0 "$pid" 2>/dev/null && [ "$(proc_state "$pid")" != Z ] && fail "hot still running"
exit 0
