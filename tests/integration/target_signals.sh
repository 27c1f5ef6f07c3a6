#!/bin/sh
# target_signals: every signal sent to a profiled process arrives exactly
# once: 20000 queued real-time signals and 3000 SIGUSR1, each SIGUSR1 sent
# only after the previous one was acknowledged (so none can merge), in both
# attach modes.
. "$TESTS_SRCDIR/lib.sh"
need_root

for mode in persistent per-sample; do
	start_fixture sigcount recv 2
	pid=$FIXTURE_PID
	"$CSAMPLER" -q --attach-mode "$mode" -F 499 -d 60 -o "$T/out.folded" -p "$pid" \
		>"$T/cs.out" 2>"$T/cs.err" &
	cs=$!
	# Sampling has begun once csampler holds the fixture's thread state
	# open (per-sample mode is attached only for microseconds at a time).
	i=0
	until ls -l "/proc/$cs/fd" 2>/dev/null | grep -q "/proc/$pid/task/.*/schedstat"; do
		i=$((i + 1))
		[ $i -lt 400 ] || fail "$mode: csampler never started sampling: $(cat "$T/cs.err")"
		sleep 0.05
	done
	"$PROGS/sigcount" send "$pid" 20000 >/dev/null || fail "$mode: sending real-time signals failed"
	"$PROGS/sigcount" sendusr1 "$pid" 3000 >/dev/null || fail "$mode: a SIGUSR1 was not acknowledged"
	kill -INT "$cs"
	status=0
	wait "$cs" || status=$?
	assert_eq "$mode: csampler exit status" "$status" 0
	assert_untraced_running "$pid"
	kill -TERM "$pid"
	wait "$pid" || fail "$mode: sigcount failed"
	assert_eq "$mode: signals received (rt usr1)" "$(sed -n 's/^received //p' "$T/sigcount.out")" "20000 3000"
	assert_folded_has "$T/out.folded" 'spin_work'
done
exit 0
