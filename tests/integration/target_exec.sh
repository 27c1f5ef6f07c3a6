#!/bin/sh
# target_exec: a program whose second thread calls execve (so its tid
# changes to the process id) is followed across the exec: samples from both
# programs, the program's own exit status, nothing left traced.
. "$TESTS_SRCDIR/lib.sh"
need_root

run_csampler -q -F 199 -o "$T/out.folded" -- "$PROGS/execer" 1
assert_eq "exit status" "$CS_STATUS" 0
assert_match "program ran after exec" "$(grep '^after' "$T/cs.out")" '^after [0-9]+ '
assert_folded_has "$T/out.folded" 'before_exec'
assert_folded_has "$T/out.folded" 'after_exec'

# Attach mode: the same, then detach from the new program.
start_fixture execer 1
pid=$FIXTURE_PID
run_csampler -q -F 199 -d 60 -o "$T/attach.folded" -p "$pid"
assert_eq "attach: exit status" "$CS_STATUS" 0
assert_folded_has "$T/attach.folded" 'after_exec'
wait "$pid" || fail "execer failed"
exit 0
