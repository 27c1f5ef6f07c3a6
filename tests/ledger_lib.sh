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
	# (a queued signal is counted when a thread of the ledger runs its
	# handler: on a loaded host that took longer than the 2 s waited here
	# once, or the signal was lost (CI: 3599 of 3600, not replayed); up to
	# 10 s now, and a count that needed more than 2 s is noted, so a late
	# signal is told from a lost one)
	i=0
	while :; do
		ledger_report "$pid" "$out"
		[ "$LEDGER_RT" -ge "$want" ] && break
		i=$((i + 1))
		[ "$i" -le 500 ] || break
		sleep 0.02
	done
	[ "$i" -le 100 ] ||
		note "ledger: the realtime signals came to $LEDGER_RT of $want after about $((i / 50)) s ($i reports)"
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
