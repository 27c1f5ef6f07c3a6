#!/bin/sh
# target_no_eintr: no blocked thread of the target ever sees EINTR because
# of csampler, in any mode and by any way out. The blockers fixture has one
# thread in each of epoll_wait, sigtimedwait, read and recv on a socket with
# SO_RCVTIMEO, accept with SO_RCVTIMEO, poll, select, nanosleep, a futex
# wait and semtimedop, plus a spinning thread, and counts every EINTR (and
# any other unexpected result) itself. Two shapes: long waits (200 ms), and
# 300 us of work then a 3 ms wait, where a thread read as running blocks
# just before csampler's interrupt lands (the race a ptrace sampler has).
# Each way out is repeated: duration (on-CPU, --idle, both attach modes),
# --dump, SIGINT, SIGTERM, SIGHUP, SIGKILL of csampler, an output error,
# --top quit (with tmux), and the launched program's own exit. After each,
# every thread is untraced and running, and the count is still 0. --dump
# reads each blocked thread in place and unwinds it to its thread function,
# also in a build with frame pointers (blockers_fp).
TEST_TIMEOUT=300
. "$TESTS_SRCDIR/lib.sh"
need_root

# check_clean WHAT: the fixture's latest count is 0 EINTR, 0 odd; the target
# is untraced and not stopped.
check_clean() {
	local line
	sleep 0.05                  # one more report line after csampler is gone
	line=$(grep '^eintr' "$T/blockers.out" | tail -n 1)
	case "$line" in
	"eintr 0 odd 0 "*) ;;
	*) fail "$1: the target saw: $line" ;;
	esac
	assert_untraced_running "$FIXTURE_PID"
}

# run_bg_then_signal SIG ARGS...: csampler without -d, ended by SIG.
run_bg_then_signal() {
	local sig=$1 cs
	shift
	"$CSAMPLER" -q "$@" -o "$T/sig.folded" -p "$FIXTURE_PID" 2>"$T/sig.err" &
	cs=$!
	sleep 0.8
	kill -"$sig" "$cs"
	wait_exit "$cs" 30 "csampler after SIG$sig" "$FIXTURE_PID"
	case "$sig" in
	KILL) assert_eq "status after SIGKILL" "$WAIT_STATUS" 137 ;;
	*) assert_eq "status after SIG$sig ($*)" "$WAIT_STATUS" 0
	   assert_folded_has "$T/sig.folded" 'spin_forever' ;;
	esac
}

SOCK=csampler-test-$$
tm() { env -u TMUX tmux -L "$SOCK" -f /dev/null "$@"; }
trap 'tm kill-server 2>/dev/null; cleanup' EXIT

# top_quit: --top in a tmux pane, quit with 'q' once it shows the spinner.
top_quit() {
	local i
	rm -f "$T/top.status"
	tm new-session -d -s top -x 100 -y 30 \
		"TERM=screen '$CSAMPLER' --top -p $FIXTURE_PID 2>'$T/top.err'; echo \$? >'$T/top.status'; sleep 30" ||
		harness "cannot start tmux"
	for i in $(seq 1 50); do
		tm capture-pane -p -t top | grep -q 'spin_forever' && break
		sleep 0.1
	done
	tm send-keys -t top q
	for i in $(seq 1 100); do
		[ -s "$T/top.status" ] && break
		sleep 0.1
	done
	assert_eq "--top quit: status" "$(cat "$T/top.status" 2>/dev/null)" 0
	tm kill-session -t top 2>/dev/null
}

# dump_shows_all_blocked: --dump names each blocked thread's call, reads it
# in place and unwinds it to its thread function. A thread can be caught
# between two waits (then it is stopped instead): up to 5 tries.
dump_shows_all_blocked() {
	local try pair th call missing
	for try in 1 2 3 4 5; do
		run_csampler --dump -p "$FIXTURE_PID"
		assert_eq "--dump status" "$CS_STATUS" 0
		missing=""
		for pair in epoll:epoll_wait sigwait:rt_sigtimedwait read:read recv:recvfrom \
			    accept:accept poll:poll select:pselect6 nanosleep:clock_nanosleep \
			    futex:futex semop:semtimedop; do
			th=${pair%%:*} call=${pair#*:}
			awk -v th="$th" -v call="$call" '
				/^Thread / { cur = index($0, "Thread " th " (tid ") == 1 &&
					     index($0, ", in syscall " call ", ") > 0 &&
					     $0 ~ /read in place$/ }
				cur && / in blocker / { found = 1 }
				END { exit !found }' "$T/cs.out" || missing="$missing $th"
		done
		[ -z "$missing" ] && return 0
	done
	fail "--dump: not shown blocked, read in place and unwound to blocker:$missing
$(cat "$T/cs.out")"
}

for shape in "0 200" "300 3"; do
	start_fixture blockers 200 $shape
	note "shape: work/wait $shape"
	sleep 0.3
	check_clean "before profiling ($shape)"
	for rep in 1 2; do
		for args in "" "--idle" "--attach-mode=per-sample" "--idle --attach-mode=per-sample"; do
			run_csampler -q $args --threads -F 999 -d 1 -o "$T/out.folded" -p "$FIXTURE_PID"
			assert_eq "status ($args)" "$CS_STATUS" 0
			check_clean "-d 1 $args, run $rep ($shape)"
			assert_folded_has "$T/out.folded" '^spin-[0-9]+;.*spin_forever'
			case "$args" in
			*--idle*)
				# blocked threads, read where they wait, unwind to their thread's root
				for th in epoll sigwait accept semop; do
					assert_folded_has "$T/out.folded" "^$th-[0-9]+;(.*;)?start_thread;(.*;)?blocker;"
				done ;;
			esac
		done
		run_csampler --dump -p "$FIXTURE_PID"
		assert_eq "--dump status" "$CS_STATUS" 0
		check_clean "--dump, run $rep ($shape)"
		run_bg_then_signal INT
		check_clean "SIGINT, run $rep ($shape)"
		run_bg_then_signal TERM --idle
		check_clean "SIGTERM, run $rep ($shape)"
	done
	run_bg_then_signal HUP -F 999
	check_clean "SIGHUP ($shape)"
	run_bg_then_signal KILL -F 999
	check_clean "SIGKILL of csampler ($shape)"
	run_csampler -q -F 999 -d 1 -o "$T/no/such/dir/out.folded" -p "$FIXTURE_PID"
	assert_eq "output error status" "$CS_STATUS" 69
	check_clean "output error ($shape)"
	if command -v tmux >/dev/null 2>&1; then
		top_quit
		check_clean "--top quit ($shape)"
	else
		note "tmux absent: --top not checked"
	fi
	[ "$shape" = "0 200" ] && dump_shows_all_blocked
	kill -TERM "$FIXTURE_PID"
	wait "$FIXTURE_PID"
	assert_eq "fixture status ($shape: 3 = it saw EINTR)" "$?" 0
	note "$shape: $(grep '^eintr' "$T/blockers.out" | tail -n 1)"
done

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
