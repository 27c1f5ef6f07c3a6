#!/bin/sh
# target_launch_status: in launch mode csampler exits with the program's
# status as a shell would report it: 0, 7, 128+9 for SIGKILL, 127 with
# "command not found", 126 for a file that is not executable or a directory.
. "$TESTS_SRCDIR/lib.sh"
need_root

run_csampler -q -o "$T/a.folded" -- true
assert_eq "true" "$CS_STATUS" 0
run_csampler -q -o "$T/a.folded" -- sh -c 'exit 7'
assert_eq "exit 7" "$CS_STATUS" 7
run_csampler -q -o "$T/a.folded" -- sh -c 'kill -9 $$'
assert_eq "killed by SIGKILL" "$CS_STATUS" 137
run_csampler -q -o "$T/a.folded" -- csampler-no-such-command-xyz arg
assert_eq "not found" "$CS_STATUS" 127
assert_eq "not found message" "$(cat "$T/cs.err")" "csampler: csampler-no-such-command-xyz: command not found"
run_csampler -q -o "$T/a.folded" -- "$T/missing/prog"
assert_eq "missing path" "$CS_STATUS" 127
assert_eq "missing path message" "$(cat "$T/cs.err")" "csampler: $T/missing/prog: No such file or directory"
printf 'echo hi\n' >"$T/noexec"
chmod 644 "$T/noexec"
run_csampler -q -o "$T/a.folded" -- "$T/noexec"
assert_eq "not executable" "$CS_STATUS" 126
assert_eq "not executable message" "$(cat "$T/cs.err")" "csampler: $T/noexec: Permission denied"
run_csampler -q -o "$T/a.folded" -- "$T"
assert_eq "directory" "$CS_STATUS" 126
assert_eq "directory message" "$(cat "$T/cs.err")" "csampler: $T: Is a directory"
# A script without #! runs with sh, as a shell would run it.
printf 'echo script "$@"\nexit 3\n' >"$T/script"
chmod 755 "$T/script"
run_csampler -q -o "$T/a.folded" -- "$T/script" x y
assert_eq "script without #!" "$CS_STATUS" 3
assert_eq "script output" "$(cat "$T/cs.out")" "script x y"
exit 0
