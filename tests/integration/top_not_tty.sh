#!/bin/sh
# top_not_tty: --top with stdout not a terminal refuses with a clear message
# and the usage status, before touching the target.
. "$TESTS_SRCDIR/lib.sh"

start_fixture hot
run_csampler --top -p "$FIXTURE_PID"
assert_eq "exit status" "$CS_STATUS" 64
assert_eq "message" "$(cat "$T/cs.err")" "csampler: --top needs a terminal on stdout"
assert_eq "stdout" "$(cat "$T/cs.out")" ""
assert_untraced_running "$FIXTURE_PID"
exit 0
