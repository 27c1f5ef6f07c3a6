#!/bin/sh
# target_no_eintr_launch: the blockers fixture launched under csampler
# (on-CPU and --idle) sees no EINTR through its own exit, and its status
# (3 had it seen one) passes through; built -O0 with frame pointers
# (blockers_fp), --dump still shows every blocked thread read in place and
# unwound to its thread function.
TEST_TIMEOUT=120
. "$TESTS_SRCDIR/lib.sh"
need_root
. "$TESTS_SRCDIR/blockers_lib.sh"

# Built -O0 with frame pointers, a blocked thread's callers are found
# through rbp, which /proc does not give: --dump still unwinds each whole.
start_fixture blockers_fp 60 0 200
dump_shows_all_blocked
kill -TERM "$FIXTURE_PID"
wait "$FIXTURE_PID"
assert_eq "blockers_fp status (3 = it saw EINTR)" "$?" 0

# The program's own exit, in launch mode: its status (3 if it saw EINTR)
# passes through.
for args in "" "--idle"; do
	run_csampler -q $args -F 999 -o "$T/launch.folded" -- "$PROGS/blockers" 2 300 3
	assert_eq "launched blockers ($args): status" "$CS_STATUS" 0
	assert_folded_has "$T/launch.folded" 'spin_forever'
done
exit 0
