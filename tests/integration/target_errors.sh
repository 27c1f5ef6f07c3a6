#!/bin/sh
# target_errors: every attach refusal prints one line naming the cause and
# exits with its own status (65 no process, 66 bad target, 67 permission,
# 68 already traced), and leaves the target untouched.
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

# Launched under a tracer that follows forks: the child is the tracer's
# already; the message names that tracer (it blamed SELinux/AppArmor).
if command -v strace >/dev/null 2>&1; then
	CS_STATUS=0
	# (LeakSanitizer cannot run under a tracer: no leak check in that run)
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	strace -f -o /dev/null "$CSAMPLER" -q -d 1 -o "$T/st.folded" -- true \
		>"$T/cs.out" 2>"$T/cs.err" || CS_STATUS=$?
	assert_eq "under strace -f: exit status" "$CS_STATUS" 68
	assert_match "under strace -f: message" "$(cat "$T/cs.err")" \
		"^csampler: cannot trace true: csampler itself runs under a tracer, process [0-9]+ \\(strace\\), that follows its children; run csampler outside it \\(or without -f\\)$"
else
	note "strace missing: the launch under strace -f not checked"
fi

# EPERM: a seccomp filter on csampler itself refuses ptrace.
CS_STATUS=0
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$PROGS/noptrace" "$CSAMPLER" -q -d 1 -o "$T/s.folded" -p "$pid" >"$T/cs.out" 2>"$T/cs.err" || CS_STATUS=$?
assert_eq "seccomp: exit status" "$CS_STATUS" 67
assert_match "seccomp: message" "$(cat "$T/cs.err")" "^csampler: cannot trace process $pid: csampler runs under a seccomp filter"
CS_STATUS=0
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$PROGS/noptrace" "$CSAMPLER" -q -o "$T/s.folded" -- true >"$T/cs.out" 2>"$T/cs.err" || CS_STATUS=$?
assert_eq "seccomp launch: exit status" "$CS_STATUS" 67
assert_match "seccomp launch: message" "$(cat "$T/cs.err")" "csampler runs under a seccomp filter"

if command -v setpriv >/dev/null 2>&1; then
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
else
	note "setpriv missing: owner and dumpable cases not run"
fi

scope=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo none)
if [ "$scope" = 1 ] || [ "$scope" = 2 ] && command -v setpriv >/dev/null 2>&1; then
	CS_STATUS=0
	setpriv --inh-caps=-sys_ptrace --bounding-set=-sys_ptrace \
		"$CSAMPLER" -q -d 1 -o /dev/null -p "$pid" >"$T/cs.out" 2>"$T/cs.err" || CS_STATUS=$?
	assert_eq "yama: exit status" "$CS_STATUS" 67
	assert_match "yama: message" "$(cat "$T/cs.err")" "kernel.yama.ptrace_scope is $scope"
else
	note "Yama ptrace_scope is $scope here: its case not run"
fi
assert_untraced_running "$pid"
exit 0
