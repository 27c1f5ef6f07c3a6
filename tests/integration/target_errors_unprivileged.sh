#!/bin/sh
# target_errors_unprivileged: the refusals csampler meets without privilege
# (setpriv drops it): another owner's process, a process that is not
# dumpable, and a launched program that makes itself non-dumpable; each one
# line naming the cause and the fix, status 67, the target left untraced;
# and the user's own process profiled, with one line on the real-time
# priority refused.
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

# The same user's own program is profiled; refused real-time priority
# (no CAP_SYS_NICE, an RLIMIT_RTPRIO of 0), csampler says once what that
# costs: it cannot take the CPUs at its ticks.
mkdir "$T/own" && chown 65534:65534 "$T/own" || harness "mkdir"
setpriv --reuid=65534 --regid=65534 --clear-groups "$PROGS/busy" 2 >"$T/own/busy.out" 2>&1 &
busy=$!   # (setpriv execs it)
FIXTURE_PIDS="$FIXTURE_PIDS $busy"
i=0
until grep -q '^ready' "$T/own/busy.out"; do
	i=$((i + 1)); [ $i -lt 200 ] || harness "busy never ready: $(cat "$T/own/busy.out")"
	sleep 0.05
done
CS_STATUS=0
prlimit --rtprio=0 setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$CSAMPLER" -d 1 -o "$T/own/busy.folded" -p "$busy" >"$T/cs.out" 2>"$T/cs.err" || CS_STATUS=$?
assert_eq "unprivileged, own program: exit status ($(cat "$T/cs.err"))" "$CS_STATUS" 0
assert_eq "unprivileged: real-time priority refused, said once ($(cat "$T/cs.err"))" \
	"$(grep -c '^csampler: cannot sample at real-time priority 1 (Operation not permitted; needs root, CAP_SYS_NICE or RLIMIT_RTPRIO): csampler cannot take the CPUs at its ticks, so a thread may be stopped late, in a call it made after the tick' "$T/cs.err")" 1
assert_folded_has "$T/own/busy.folded" 'busy_leaf'
assert_untraced_running "$busy"
kill "$busy"
assert_untraced_running "$pid"
exit 0
