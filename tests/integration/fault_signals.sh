#!/bin/sh
# fault_signals: 50 rounds of csampler attached to the self-checking ledger
# fixture (2 workers and thread churn) while realtime signals are queued to it,
# stopped after a random 0-300 ms by SIGINT, SIGTERM, SIGHUP or SIGKILL, or
# writing to a pipe nobody reads (-o -, SIGPIPE) or to a closed stdout. After
# every round the ledger runs untraced, made progress, found no checksum error
# and received exactly every signal sent; csampler's status is the documented
# one and its output is whole (counts add up to the samples it reported) or
# absent. RANDOM_SEED=N replays a run. (CSAMPLER_STRESS=light: 15
# rounds, stress_rounds)
. "$TESTS_SRCDIR/lib.sh"
. "$TESTS_SRCDIR/ledger_lib.sh"
need_root
need_cmd env
env --default-signal=INT true 2>/dev/null || skip "needs env --default-signal (coreutils 8.31)"

ROUNDS=${FAULT_ROUNDS:-$(stress_rounds 50 15)}
start_fixture ledger 2 1
L=$FIXTURE_PID
LOUT=$T/ledger.out
sent=0
early=0
ledger_check "$L" "$LOUT" 0

# csampler started from a script must see SIGINT as a user would (sh ignores
# it in background jobs); env execs csampler, so $! is csampler's pid.
cs="env --default-signal=INT,QUIT $CSAMPLER"

round=1
while [ "$round" -le "$ROUNDS" ]; do
	rand_below 6; kind=$RAND
	rand_below 301; delay_ms=$RAND
	rand_below 3; rate_pick=$RAND
	case $rate_pick in 0) rate=99 ;; 1) rate=999 ;; *) rate=4999 ;; esac
	rm -f "$T/r.folded" "$T/cs.err" "$T/fifo"
	# queue signals while csampler attaches, samples and detaches
	"$PROGS/ledger" send "$L" 300 >"$T/send.out" &
	sender=$!
	case $kind in
	0) sig=INT;  $cs -F "$rate" -o "$T/r.folded" -p "$L" 2>"$T/cs.err" & ;;
	1) sig=TERM; $cs -F "$rate" -o "$T/r.folded" -p "$L" 2>"$T/cs.err" & ;;
	2) sig=HUP;  $cs -F "$rate" -o "$T/r.folded" -p "$L" 2>"$T/cs.err" & ;;
	3) sig=KILL; $cs -F "$rate" -o "$T/r.folded" -p "$L" 2>"$T/cs.err" & ;;
	4) sig=PIPE; mkfifo "$T/fifo" || harness "mkfifo"
	   # the reader opens the pipe and goes away at once
	   ( exec 0<"$T/fifo" ) &
	   $cs -F "$rate" -o - -p "$L" >"$T/fifo" 2>"$T/cs.err" & ;;
	5) sig=CLOSED; $cs -F "$rate" -o - -p "$L" >&- 2>"$T/cs.err" & ;;
	esac
	cspid=$!
	sleep "$(awk -v d="$delay_ms" 'BEGIN { printf "%.3f", d / 1000 }')"
	case $sig in PIPE|CLOSED) kill -INT "$cspid" 2>/dev/null ;; *) kill -"$sig" "$cspid" 2>/dev/null ;; esac
	what="round $round: $sig after ${delay_ms} ms at $rate Hz"
	wait_exit "$cspid" 60 "$what: csampler" "$L"
	st=$WAIT_STATUS
	wait_exit "$sender" 60 "$what: the signal sender" "$L"
	[ "$WAIT_STATUS" = 0 ] || harness "the signal sender failed"
	sent=$((sent + 300))
	# a signal that lands before csampler blocks it (during start-up and the
	# attach) kills it: then there is no output, and the target is unharmed
	case "$sig:$st" in INT:130|TERM:143|HUP:129|PIPE:130|CLOSED:130)
		[ -e "$T/r.folded" ] && fail "$what: killed by the signal, yet an output exists"
		early=$((early + 1))
		ledger_check "$L" "$LOUT" "$sent"
		round=$((round + 1))
		continue ;;
	esac
	case $sig in
	KILL)
		assert_eq "$what: status" "$st" 137
		[ -e "$T/r.folded" ] && fail "$what: an output file exists after SIGKILL" ;;
	PIPE|CLOSED)
		# the run may end before it had anything to write: then 0 is right
		# (a closed stdout is found before sampling, a reader gone when
		# the profile is written)
		if [ "$st" != 0 ]; then
			assert_eq "$what: status ($(cat "$T/cs.err"))" "$st" 69
			case $sig in
			CLOSED) msg='^csampler: cannot write to stdout: Bad file descriptor$' ;;
			*) msg='^csampler: cannot write the folded output to stdout: ' ;;
			esac
			grep -q "$msg" "$T/cs.err" || fail "$what: no clear message: $(cat "$T/cs.err")"
		fi ;;
	*)
		assert_eq "$what: status ($(cat "$T/cs.err"))" "$st" 0
		[ -f "$T/r.folded" ] || fail "$what: no output file: $(cat "$T/cs.err")"
		reported=$(sed -nE 's/^csampler: wrote .* \(folded stacks, ([0-9]+) samples?\).*/\1/p' "$T/cs.err")
		[ -n "$reported" ] || fail "$what: no summary line: $(cat "$T/cs.err")"
		assert_eq "$what: samples in the output" "$(folded_total "$T/r.folded")" "$reported" ;;
	esac
	ls "$T" | grep -v -e '^ledger\.' -e '^send\.out$' -e '^cs\.err$' -e '^r\.folded$' -e '^fifo$' |
		grep . && fail "$what: stray files left in the output directory"
	ledger_check "$L" "$LOUT" "$sent"
	round=$((round + 1))
done
note "$ROUNDS rounds ($early stopped by a signal before csampler handled it): ledger at $LEDGER_R rounds, $LEDGER_CHURNED threads churned, $sent signals, 0 errors"
exit 0
