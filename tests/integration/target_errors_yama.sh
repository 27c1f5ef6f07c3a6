#!/bin/sh
# target_errors_yama: with Yama's ptrace_scope at 1 or 2, csampler without
# CAP_SYS_PTRACE is refused attaching to a process that is not its child:
# one line naming kernel.yama.ptrace_scope, status 67.
. "$TESTS_SRCDIR/lib.sh"
need_root
need_cmd setpriv
scope=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null) || skip "no Yama LSM in this kernel: nothing refuses"
case "$scope" in 1|2) ;; *) skip "kernel.yama.ptrace_scope is $scope here: nothing for csampler to report" ;; esac

start_fixture stopme 2 sleep
pid=$FIXTURE_PID
CS_STATUS=0
setpriv --inh-caps=-sys_ptrace --bounding-set=-sys_ptrace \
	"$CSAMPLER" -q -d 1 -o /dev/null -p "$pid" >"$T/cs.out" 2>"$T/cs.err" || CS_STATUS=$?
assert_eq "yama: exit status" "$CS_STATUS" 67
assert_match "yama: message" "$(cat "$T/cs.err")" "kernel.yama.ptrace_scope is $scope"
assert_untraced_running "$pid"
exit 0
