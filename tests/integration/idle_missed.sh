#!/bin/sh
# idle_missed: --idle counts every thread's whole wall-clock time even when
# csampler misses ticks. Against the sleepers fixture (6 threads asleep),
# csampler is stopped (SIGSTOP) for 1.5 s of a 5 s run at 999 Hz:
# (a 5 s run: in CI's load a 2 s one had ended before the stop came, 3
# ticks missed) the periods it missed are put on the next tick's read of each thread, so
# the profile holds threads x 999 x 2 periods, and its warning says so.
# (Before: the missed periods were lost, 8,800 of 11,988: a wall-clock
# profile that says the threads lived three quarters of the window.)
. "$TESTS_SRCDIR/lib.sh"
need_root

start_fixture sleepers 4
"$CSAMPLER" --idle -v -F 999 -d 5 -o "$T/idle.folded" -p "$FIXTURE_PID" 2>"$T/cs.err" &
CS=$!
FIXTURE_PIDS="$FIXTURE_PIDS $CS"
# (stopped once its clock ticks. The fixture's TracerPid came too early:
# in CI's load the stop came before csampler's clock began, 9 ticks
# missed; beside 6 busy loops its "sampling" line came 0.46 s after the
# TracerPid, its timerfd 0.09 s after that)
wait_ticking "$CS"
sleep 0.3
kill -STOP "$CS"
sleep 1.5
kill -CONT "$CS"
st=0
wait "$CS" || st=$?
assert_eq "exit status ($(cat "$T/cs.err"))" "$st" 0
missed=$(sed -n 's/.* \([0-9][0-9]*\) ticks missed.*/\1/p' "$T/cs.err")
threads=$(sed -n 's/.* \([0-9][0-9]*\) threads seen.*/\1/p' "$T/cs.err")
[ -n "$missed" ] && [ -n "$threads" ] || fail "no -v line: $(cat "$T/cs.err")"
# (1.5 s stopped: about 1,500 ticks)
[ "$missed" -ge 1000 ] || fail "only $missed ticks missed while csampler was stopped for 1.5 s"
assert_eq "threads of the fixture" "$threads" 6
total=$(folded_total "$T/idle.folded")
note "$total periods of $threads threads, $missed ticks missed"
# (the run's 2 s are its ticks' clock: every thread every period, within a
# tick or two at each end)
due=$((threads * 999 * 5))
assert_within "periods of the 6 threads for 5 s at 999 Hz" "$total" $((due * 98 / 100)) $((due * 101 / 100))
grep -q "warning: sampled at [0-9]* Hz of the 999 Hz asked .*: the periods without a tick are counted at the next tick's reads" "$T/cs.err" ||
	fail "the warning: $(grep warning "$T/cs.err")"
exit 0
