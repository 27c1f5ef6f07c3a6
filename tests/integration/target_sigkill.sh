#!/bin/sh
# target_sigkill: csampler killed with SIGKILL mid-run leaves its target
# running and untraced (the kernel detaches; nothing was EXITKILL).
. "$TESTS_SRCDIR/lib.sh"
need_root

for mode in persistent per-sample; do
	start_fixture stopme 3 busy
	pid=$FIXTURE_PID
	"$CSAMPLER" -q --attach-mode "$mode" -F 999 -d 60 -o "$T/out.folded" -p "$pid" \
		>"$T/cs.out" 2>"$T/cs.err" &
	cs=$!
	sleep 1
	kill -KILL "$cs"
	wait "$cs" 2>/dev/null
	sleep 0.2
	kill -0 "$pid" 2>/dev/null || fail "$mode: target died with csampler"
	wait_state "$pid" RS
	assert_untraced_running "$pid"
	kill -TERM "$pid"
	wait "$pid" || fail "$mode: fixture reported damage: $(cat "$T/stopme.out")"
done
exit 0
