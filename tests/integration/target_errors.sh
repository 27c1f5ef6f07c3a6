#!/bin/sh
# target_errors: every attach refusal prints one line naming the cause and
# exits with its own status (65 no process, 66 bad target, 67 permission,
# 68 already traced), and leaves the target untouched. (target_errors_strace,
# _unprivileged and _yama: the cases that need strace, setpriv or Yama.)
. "$TESTS_SRCDIR/lib.sh"
need_root

# expect_error WHAT STATUS MESSAGE-ERE ARGS...
expect_error() {
	local what=$1 want=$2 re=$3
	shift 3
	run_csampler -q -d 1 -o "$T/e.folded" "$@"
	assert_eq "$what: exit status" "$CS_STATUS" "$want"
	assert_eq "$what: lines on stderr" "$(wc -l <"$T/cs.err")" 1
	assert_match "$what: message" "$(cat "$T/cs.err")" "$re"
	[ -e "$T/e.folded" ] && fail "$what: an output file was written"
	return 0
}

max=$(cat /proc/sys/kernel/pid_max)
expect_error "no such process" 65 "^csampler: no such process: $((max + 1))\$" -p $((max + 1))

# the child outlives the exec, so only sleep 30 (which never reaps) is its
# parent when it ends: a zombie for sure (with 'sleep 0' the shell could
# reap it before the exec)
sh -c 'sleep 0.2 & echo $! >"$1"; exec sleep 30' sh "$T/zombie" &
FIXTURE_PIDS="$FIXTURE_PIDS $!"
i=0
while [ "$(proc_state "$(cat "$T/zombie" 2>/dev/null)")" != Z ]; do
	i=$((i + 1)); [ $i -lt 200 ] || harness "no zombie"; sleep 0.05
done
expect_error "zombie" 66 "process $(cat "$T/zombie"): it is a zombie" -p "$(cat "$T/zombie")"

expect_error "kernel thread" 66 "process 2: it is a kernel thread" -p 2

CS_STATUS=0
sh -c 'exec "$1" -q -d 1 -o "$2" -p $$' sh "$CSAMPLER" "$T/e.folded" >"$T/cs.out" 2>"$T/cs.err" || CS_STATUS=$?
assert_eq "itself: exit status" "$CS_STATUS" 66
assert_match "itself: message" "$(cat "$T/cs.err")" '^csampler: cannot profile process [0-9]+: it is csampler itself$'

expect_error "ancestor" 66 "process $$: it is an ancestor of csampler" -p $$

start_fixture stopme 2 sleep
pid=$FIXTURE_PID
"$CSAMPLER" -q -d 60 -o "$T/first.folded" -p "$pid" >"$T/first.out" 2>"$T/first.err" &
first=$!
i=0
while [ "$(tracer_tgid "$pid")" != "$first" ]; do
	i=$((i + 1)); [ $i -lt 400 ] || fail "first csampler never attached"; sleep 0.05
done
expect_error "already traced" 68 "process $pid: it is already traced by process $first \\(csampler\\)" -p "$pid"
kill -INT "$first"
wait "$first" || fail "first csampler failed"
assert_untraced_running "$pid"

# EPERM: a seccomp filter on csampler itself refuses ptrace.
CS_STATUS=0
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$PROGS/noptrace" "$CSAMPLER" -q -d 1 -o "$T/s.folded" -p "$pid" >"$T/cs.out" 2>"$T/cs.err" || CS_STATUS=$?
assert_eq "seccomp: exit status" "$CS_STATUS" 67
assert_match "seccomp: message" "$(cat "$T/cs.err")" "^csampler: cannot trace process $pid: csampler runs under a seccomp filter"
CS_STATUS=0
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$PROGS/noptrace" "$CSAMPLER" -q -o "$T/s.folded" -- true >"$T/cs.out" 2>"$T/cs.err" || CS_STATUS=$?
assert_eq "seccomp launch: exit status" "$CS_STATUS" 67
assert_match "seccomp launch: message" "$(cat "$T/cs.err")" "csampler runs under a seccomp filter"

assert_untraced_running "$pid"
exit 0
