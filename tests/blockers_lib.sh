# blockers_lib.sh: helpers for the tests on the blockers fixture (sourced
# after lib.sh, with the fixture started: FIXTURE_PID).

# check_clean WHAT: the fixture's latest count is 0 EINTR, 0 odd; the target
# is untraced and not stopped.
check_clean() {
	local line i
	sleep 0.05                  # one more report line after csampler is gone
	# (the first comes 20 ms after "ready": at CI's load 10 none had come
	# 50 ms after it, and "before profiling" read an empty line)
	for i in $(seq 1 200); do
		grep -q '^eintr' "$T/blockers.out" && break
		sleep 0.05
	done
	line=$(grep '^eintr' "$T/blockers.out" | tail -n 1)
	case "$line" in
	"eintr 0 odd 0 "*) ;;
	*) fail "$1: the target saw: $line" ;;
	esac
	assert_untraced_running "$FIXTURE_PID"
}

# check_after_kill WHAT: as check_clean, after csampler was killed with
# SIGKILL, which cannot be caught: a thread that blocked in the
# microseconds between csampler's look and its interrupt, woken by it and
# not yet handled, sees its call end with EINTR (the man page's measured
# window): one kill, so at most the threads interrupted and not yet
# handled then, one round's: a random subset of the running ones, one per
# CPU on average and at most 4 per CPU (SUBSET_HARD_MAX; 2 seen once on a
# loaded machine); never an unexpected result. Sets KILL_EINTR to the
# count.
check_after_kill() {
	local line odd
	sleep 0.05
	line=$(grep '^eintr' "$T/blockers.out" | tail -n 1)
	KILL_EINTR=$(echo "$line" | awk '{ print $2 }')
	odd=$(echo "$line" | awk '{ print $4 }')
	[ "$odd" = 0 ] && [ -n "$KILL_EINTR" ] && [ "$KILL_EINTR" -le $((4 * $(nproc))) ] ||
		fail "$1: the target saw: $line"
	[ "$KILL_EINTR" = 0 ] || note "$1: the SIGKILL window was hit: $line"
	assert_untraced_running "$FIXTURE_PID"
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

# start_bg_csampler ARGS...: csampler -q ARGS -o $T/sig.folded on the
# fixture in the background (its stderr in $T/sig.err), returned once it
# traces the fixture; its pid in BG_CS (killed at the end like a fixture).
start_bg_csampler() {
	local i
	"$CSAMPLER" -q "$@" -o "$T/sig.folded" -p "$FIXTURE_PID" 2>"$T/sig.err" &
	BG_CS=$!
	FIXTURE_PIDS="$FIXTURE_PIDS $BG_CS"
	for i in $(seq 1 400); do
		[ "$(tracer_tgid "$FIXTURE_PID")" = "$BG_CS" ] && return 0
		kill -0 "$BG_CS" 2>/dev/null || fail "csampler $* ended before it traced the target: $(cat "$T/sig.err")"
		sleep 0.05
	done
	fail "csampler $* did not trace the target within 20 s"
}

# thread_named NAME: the tid of the fixture's thread NAME (each names
# itself once it runs: up to 5 s); false if there is none.
thread_named() {
	local i tid
	for i in $(seq 1 100); do
		tid=$(grep -lx "$1" /proc/"$FIXTURE_PID"/task/*/comm 2>/dev/null |
			sed 's|.*/task/\([0-9]*\)/comm|\1|')
		[ -n "$tid" ] && { echo "$tid"; return 0; }
		sleep 0.05
	done
	return 1
}
