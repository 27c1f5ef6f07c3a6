#!/bin/sh
# target_stopcont: SIGSTOP/SIGCONT of a profiled process behave as without
# csampler: every thread stops (shown as t while traced) and stays stopped
# across many ticks, then runs again after SIGCONT; after csampler ends the
# process is untraced and running.
. "$TESTS_SRCDIR/lib.sh"
need_root

for mode in persistent per-sample; do
	start_fixture stopme 3 busy
	pid=$FIXTURE_PID
	"$CSAMPLER" --attach-mode "$mode" -F 199 -d 60 -o "$T/out.folded" -p "$pid" \
		>"$T/cs.out" 2>"$T/cs.err" &
	cs=$!
	FIXTURE_PIDS="$FIXTURE_PIDS $cs"
	# stopped once csampler samples: its start line is printed when the
	# sampling begins (and, persistent, once it traces the process)
	i=0
	until grep -q '^csampler: sampling process' "$T/cs.err" &&
		{ [ "$mode" = per-sample ] || [ "$(tracer_tgid "$pid")" = "$cs" ]; }; do
		i=$((i + 1))
		[ $i -lt 400 ] || fail "csampler never began sampling: $(cat "$T/cs.err")"
		sleep 0.05
	done
	kill -STOP "$pid"
	wait_all_stopped "$pid" tT
	# and they stay stopped through a second of csampler's ticks
	sleep 1
	for task in /proc/"$pid"/task/*; do
		s=$(awk '/^State:/ {print $2}' "$task/status")
		case "$s" in t|T) ;; *) fail "$mode: thread ${task##*/} is '$s' while the process is stopped" ;; esac
	done
	if [ "$mode" = persistent ]; then
		# Kept in group-stop with PTRACE_LISTEN: not one clock tick of CPU.
		cpu1=$(awk '{print $14 + $15}' "/proc/$pid/stat")
		sleep 1
		cpu2=$(awk '{print $14 + $15}' "/proc/$pid/stat")
		assert_eq "$mode: CPU ticks used while stopped" "$((cpu2 - cpu1))" 0
	fi
	kill -CONT "$pid"
	wait_state "$pid" R
	kill -INT "$cs"
	status=0
	wait "$cs" || status=$?
	assert_eq "$mode: csampler exit status" "$status" 0
	assert_untraced_running "$pid"
	kill -TERM "$pid"
	wait "$pid" || fail "$mode: fixture reported damage: $(cat "$T/stopme.out")"
done
exit 0
