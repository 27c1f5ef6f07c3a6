#!/bin/sh
# target_attach_detach: attaching to a running, a sleeping and a stopped
# process and detaching again leaves every thread untraced (TracerPid 0) and
# as it was: running/sleeping ones not stopped, the stopped one still stopped
# (T, not t) until SIGCONT. Both attach modes.
. "$TESTS_SRCDIR/lib.sh"
need_root

for mode in persistent per-sample; do
	start_fixture stopme 3 busy
	busy=$FIXTURE_PID
	start_fixture stopme 3 sleep
	sleeper=$FIXTURE_PID

	run_csampler -q --attach-mode "$mode" -d 1 -o "$T/busy.folded" -p "$busy"
	assert_eq "$mode busy: exit status" "$CS_STATUS" 0
	assert_folded_has "$T/busy.folded" 'check_round'
	assert_untraced_running "$busy"

	run_csampler -q --attach-mode "$mode" -d 1 -o "$T/sleep.folded" -p "$sleeper"
	assert_eq "$mode sleeping: exit status" "$CS_STATUS" 0
	assert_untraced_running "$sleeper"
	assert_match "$mode sleeping: state" "$(proc_state "$sleeper")" '^[RS]$'

	kill -STOP "$busy"
	wait_all_stopped "$busy"
	run_csampler -q --attach-mode "$mode" -d 1 -o "$T/stopped.folded" -p "$busy"
	assert_eq "$mode stopped: exit status" "$CS_STATUS" 0
	# (a thread woken to trap for the attach, or kicked into its stop at the
	# detach, is runnable until it gets a CPU and stops: R for a moment under
	# load, once in CI at load 12; one left running stays R, and fails here)
	wait_all_stopped "$busy"
	for task in /proc/"$busy"/task/*; do
		assert_eq "$mode stopped: state of thread ${task##*/}" \
			"$(awk '/^State:/ {print $2}' "$task/status")" T
		assert_eq "$mode stopped: tracer of thread ${task##*/}" \
			"$(awk '/^TracerPid:/ {print $2}' "$task/status")" 0
	done
	kill -CONT "$busy"
	wait_state "$busy" RS
	assert_untraced_running "$busy"

	# Each fixture checks its own arithmetic and exits 0 only if intact.
	kill -TERM "$busy" "$sleeper"
	wait "$busy" || fail "$mode: busy fixture reported damage: $(cat "$T/stopme.out")"
	wait "$sleeper" || fail "$mode: sleeping fixture failed"
done
exit 0
