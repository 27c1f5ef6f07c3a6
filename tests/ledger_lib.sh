# ledger_lib.sh: helpers for the tests that run the self-checking ledger
# fixture (tests/progs/ledger.c). Source after lib.sh.

LEDGER_ROUNDS=0

# ledger_report PID OUTFILE: ask PID for a report (SIGUSR2) and wait for its
# line; sets LEDGER_SEQ LEDGER_R LEDGER_ERR LEDGER_RT LEDGER_CHURNED.
ledger_report() {
	local pid=$1 out=$2 before i line
	before=$(grep -c '^report ' "$out" 2>/dev/null)
	kill -USR2 "$pid" 2>/dev/null || fail "ledger $pid is gone: $(tail -3 "$out")"
	for i in $(seq 1 400); do
		line=$(grep '^report ' "$out" | sed -n "$((before + 1))p")
		[ -n "$line" ] && break
		sleep 0.01
	done
	[ -n "$line" ] || fail "ledger $pid did not answer SIGUSR2 (state $(proc_state "$pid"))"
	set -- $line
	LEDGER_SEQ=$2 LEDGER_R=$4 LEDGER_ERR=$6 LEDGER_RT=$8 LEDGER_CHURNED=${10}
}

# ledger_check PID OUTFILE WANT_RT: PID is running, untraced, made progress
# since the last check, found no checksum error, and has received exactly
# WANT_RT realtime signals (waiting briefly for queued ones to land).
ledger_check() {
	local pid=$1 out=$2 want=$3 i
	assert_untraced_running "$pid"
	for i in $(seq 1 100); do
		ledger_report "$pid" "$out"
		[ "$LEDGER_RT" -ge "$want" ] && break
		sleep 0.02
	done
	assert_eq "ledger checksum errors" "$LEDGER_ERR" 0
	assert_eq "realtime signals received by the ledger" "$LEDGER_RT" "$want"
	[ "$LEDGER_R" -gt "$LEDGER_ROUNDS" ] ||
		fail "ledger made no progress: $LEDGER_R rounds, $LEDGER_ROUNDS before"
	LEDGER_ROUNDS=$LEDGER_R
}

# rand_below N: sets RAND to a pseudo-random integer in [0, N); the sequence
# is fixed by RANDOM_SEED (printed, so a failing run can be replayed).
RAND_STATE=${RANDOM_SEED:-$(( $(date +%s) % 100000 + $$ ))}
note "RANDOM_SEED=$RAND_STATE"
rand_below() {
	RAND_STATE=$(( (RAND_STATE * 1103515245 + 12345) % 2147483648 ))
	RAND=$(( (RAND_STATE / 65536) % $1 ))
}
