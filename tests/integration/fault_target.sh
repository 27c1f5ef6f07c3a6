#!/bin/sh
# fault_target: the target changes under csampler mid-run. 16 rounds at
# 999 Hz against the self-checking ledger fixture (2 workers, thread churn),
# each picking at random: the target exits, execs itself, forks (with or
# without --children), or is SIGKILLed, 30-400 ms into the run, attached (-p)
# or launched (-- PROGRAM; csampler then waits for the program after writing
# its profile). After each: csampler's status is the documented one (the
# program's, when launched), its output is whole (counts add up to the samples it reported), and
# every process still alive is untraced, running, and found no checksum error.
# RANDOM_SEED=N replays a run. (CSAMPLER_STRESS=light: 8 rounds,
# stress_rounds)
. "$TESTS_SRCDIR/lib.sh"
. "$TESTS_SRCDIR/ledger_lib.sh"
need_root

ROUNDS=${FAULT_ROUNDS:-$(stress_rounds 16 8)}

# check_output WHAT: the run's folded output holds exactly the samples csampler
# said it wrote.
check_output() {
	local reported
	[ -f "$T/r.folded" ] || fail "$1: no output file: $(cat "$T/cs.err")"
	reported=$(sed -nE 's/^csampler: wrote .* \(folded stacks, ([0-9]+) samples?\).*/\1/p' "$T/cs.err")
	[ -n "$reported" ] || fail "$1: no summary line: $(cat "$T/cs.err")"
	assert_eq "$1: samples in the output" "$(folded_total "$T/r.folded")" "$reported"
}

# wait_line FILE REGEX: wait until FILE has a line matching REGEX.
wait_line() {
	local i
	for i in $(seq 1 1000); do
		grep -Eq -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.01
	done
	fail "no line /$2/ in $1: $(cat "$1")"
}

round=1
early=0
while [ "$round" -le "$ROUNDS" ]; do
	rand_below 4; kind=$RAND
	rand_below 371; at=$((RAND + 30))
	rand_below 2; launch=$RAND
	rand_below 2; children=$RAND
	case $kind in 0) action=exit ;; 1) action=exec ;; 2) action=fork ;; *) action=kill ;; esac
	flags=""
	[ "$action" = fork ] && [ "$children" = 1 ] && flags=--children
	what="round $round: target does $action after $at ms ($( [ "$launch" = 1 ] && echo launched || echo attached) $flags)"
	rm -f "$T/r.folded" "$T/cs.err" "$T/lg.out"
	st=0 want=0
	LEDGER_ROUNDS=0
	if [ "$launch" = 1 ]; then
		la=$action; [ "$action" = kill ] && la=none
		timeout -k 5 60 "$CSAMPLER" -F 999 -d 1 $flags -o "$T/r.folded" -- \
			"$PROGS/ledger" 2 1 "$la" "$at" >"$T/lg.out" 2>"$T/cs.err" &
		cspid=$!
		wait_line "$T/lg.out" '^ready '
		L=$(awk '/^ready/ { print $2; exit }' "$T/lg.out")
	else
		"$PROGS/ledger" 2 1 "$action" "$at" >"$T/lg.out" 2>&1 &
		L=$!
		FIXTURE_PIDS="$FIXTURE_PIDS $L"
		wait_line "$T/lg.out" '^ready '
		timeout -k 5 60 "$CSAMPLER" -F 999 -d 1 $flags -o "$T/r.folded" -p "$L" 2>"$T/cs.err" &
		cspid=$!
	fi
	FIXTURE_PIDS="$FIXTURE_PIDS $L"
	if [ "$action" = kill ]; then
		sleep "$(awk -v d="$at" 'BEGIN { printf "%.3f", d / 1000 }')"
		kill -KILL "$L"
	fi
	# launched, csampler writes its profile after -d 1 and then waits for
	# the program: the ledger that execs or forks is checked, then killed
	lives_on=0
	[ "$launch" = 1 ] && { [ "$action" = exec ] || [ "$action" = fork ]; } && lives_on=1
	if [ "$lives_on" = 1 ]; then
		wait_line "$T/cs.err" '^csampler: wrote '
	else
		st=0
		wait "$cspid" || st=$?
		want=0
		[ "$launch" = 1 ] && [ "$action" = kill ] && want=137
		# attached, a ledger that ends 30 ms in can be gone before
		# csampler looks at it (a slow start under sanitizers, a busy
		# machine): then the documented answer is "no such process",
		# status 65, or, not yet reaped by this shell, "a zombie", 66
		if [ "$launch" = 0 ] && { [ "$action" = exit ] || [ "$action" = kill ]; } &&
		   { { [ "$st" = 65 ] && [ "$(cat "$T/cs.err")" = "csampler: no such process: $L" ]; } ||
		     { [ "$st" = 66 ] && grep -q "^csampler: cannot profile process $L: it is a zombie" "$T/cs.err"; }; }; then
			note "$what: the ledger was gone before csampler attached"
			want=$st
			early=$((early + 1))
		fi
		assert_eq "$what: csampler status ($(cat "$T/cs.err"))" "$st" "$want"
	fi
	{ [ "$st" = 65 ] || [ "$st" = 66 ]; } && [ "$want" = "$st" ] || check_output "$what"
	case $action in
	exit)
		wait_line "$T/lg.out" '^report '
		set -- $(grep '^report ' "$T/lg.out" | tail -1)
		assert_eq "$what: checksum errors" "$6" 0 ;;
	exec)
		# the exec'd ledger said ready again; it runs on, intact
		wait_line "$T/lg.out" '^ready .*'
		[ "$(grep -c '^ready ' "$T/lg.out")" = 2 ] || fail "$what: no second ready line: $(cat "$T/lg.out")"
		ledger_check "$L" "$T/lg.out" 0 ;;
	fork)
		wait_line "$T/lg.out" '^child '
		C=$(awk '/^child/ { print $2; exit }' "$T/lg.out")
		FIXTURE_PIDS="$FIXTURE_PIDS $C"
		ledger_check "$L" "$T/lg.out" 0
		LEDGER_ROUNDS=0
		# the child answers SIGUSR2 into the same file: its line follows
		assert_untraced_running "$C"
		ledger_check "$C" "$T/lg.out" 0
		kill -KILL "$C" ;;
	kill)
		[ -d "/proc/$L" ] && [ "$(proc_state "$L")" != Z ] && fail "$what: the ledger survived SIGKILL" ;;
	esac
	kill_ours KILL "$L"
	if [ "$lives_on" = 1 ]; then
		st=0
		wait "$cspid" || st=$?
		assert_eq "$what: csampler status when the program is killed" "$st" 137
	fi
	wait "$L" 2>/dev/null
	round=$((round + 1))
done
[ "$early" -lt "$ROUNDS" ] || fail "every round's ledger was gone before csampler attached"
note "$ROUNDS rounds passed ($early with the ledger gone before the attach)"
exit 0
