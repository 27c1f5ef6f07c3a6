#!/bin/sh
# target_stop_signals: SIGINT, SIGTERM, SIGHUP and SIGQUIT to csampler in
# attach mode end the run cleanly: exit 0, output written, target untraced
# and running.
. "$TESTS_SRCDIR/lib.sh"
need_root

start_fixture stopme 2 busy
pid=$FIXTURE_PID
for sig in INT TERM HUP QUIT; do
	rm -f "$T/out.folded"
	"$CSAMPLER" -q -F 199 -o "$T/out.folded" -p "$pid" >"$T/cs.out" 2>"$T/cs.err" &
	cs=$!
	i=0
	while [ "$(tracer_tgid "$pid")" != "$cs" ]; do
		i=$((i + 1))
		[ $i -lt 400 ] || fail "csampler never attached: $(cat "$T/cs.err")"
		sleep 0.05
	done
	sleep 0.5
	kill -"$sig" "$cs"
	status=0
	wait "$cs" || status=$?
	assert_eq "SIG$sig: exit status" "$status" 0
	assert_folded_has "$T/out.folded" 'check_round'
	assert_untraced_running "$pid"
done
kill -TERM "$pid"
wait "$pid" || fail "fixture reported damage: $(cat "$T/stopme.out")"
exit 0
