#!/bin/sh
# target_errors_unprivileged: the refusals csampler meets without privilege
# (setpriv drops it): another owner's process, a process that is not
# dumpable, and a launched program that makes itself non-dumpable; each one
# line naming the cause and the fix, status 67, the target left untraced.
. "$TESTS_SRCDIR/lib.sh"
need_root
need_cmd setpriv

start_fixture stopme 2 sleep
pid=$FIXTURE_PID
# EPERM: another owner, and csampler without CAP_SYS_PTRACE.
CS_STATUS=0
setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$CSAMPLER" -q -d 1 -o /dev/null -p "$pid" >"$T/cs.out" 2>"$T/cs.err" || CS_STATUS=$?
assert_eq "other owner: exit status" "$CS_STATUS" 67
assert_match "other owner: message" "$(cat "$T/cs.err")" \
	"^csampler: cannot trace process $pid: it belongs to uid 0 and csampler runs as uid 65534 without CAP_SYS_PTRACE"

# EPERM: same owner, target not dumpable, no CAP_SYS_PTRACE.
start_fixture nodump
nd=$FIXTURE_PID
CS_STATUS=0
setpriv --inh-caps=-sys_ptrace --bounding-set=-sys_ptrace \
	"$CSAMPLER" -q -d 1 -o "$T/n.folded" -p "$nd" >"$T/cs.out" 2>"$T/cs.err" || CS_STATUS=$?
assert_eq "not dumpable: exit status" "$CS_STATUS" 67
assert_match "not dumpable: message" "$(cat "$T/cs.err")" "^csampler: cannot trace process $nd: it is not dumpable"
[ "$(tracer_pid "$nd")" = 0 ] || fail "nodump left traced"

# A launched program that makes itself non-dumpable: traced, but its
# memory is refused to its own user: one line saying why, status 67
# (it was 0 samples, status 0, no word). The directory must be
# reachable by the unprivileged user.
mkdir "$T/nd" && chmod 755 "$T" "$T/nd" || harness "mkdir"
CS_STATUS=0
( cd "$T/nd" && setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$CSAMPLER" -q -d 3 -o /dev/null -- "$PROGS/nodump" busy 1 ) >"$T/cs.out" 2>"$T/cs.err" || CS_STATUS=$?
assert_eq "launched, not dumpable: exit status" "$CS_STATUS" 67
assert_match "launched, not dumpable: message" "$(cat "$T/cs.err")" \
	"^csampler: cannot read the memory of process [0-9]+ \\(nodump\\): it is not dumpable .*; profile it as root or with CAP_SYS_PTRACE$"
assert_untraced_running "$pid"
exit 0
