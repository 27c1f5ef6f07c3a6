#!/bin/sh
# sampler_unstopped: a thread waiting for its CPU at the tick is not
# stopped. tests/progs/pingpong's nap thread sleeps 100 us and computes
# 100 us in turn, attached at 199 and 999 Hz; it counts its own voluntary
# context switches and its sleeps (one switch each), so the rest are
# csampler's stops of it, set against the stops csampler kept (-v).
# Where the tick takes every CPU a running thread is on (csampler's own,
# a holder's), none of them can run before the interrupts are sent, so
# each is judged first (threads_judge_running); one woken by its timer
# while a holder held its CPU waited for it at the tick and is left out,
# not stopped to be dropped. The previous binary stopped it: 1.56-1.57
# stops for each one kept at 999 Hz, 1.96 at 199 Hz, 2.1-2.2 beside two
# busy loops; now 1.00, quiet and beside the loops. One in four of the
# threads left out is stopped all the same, only for where it arrives
# (its switch-in span is placed there: sampler_judge.c's ARRIVAL_EVERY);
# -v counts those stops, left out here (counted, 1.21 quiet and 1.48 in
# CI's sanitizer stage at 199 Hz). (Beside them it read
# 1.25-1.60: a thread a holder took off its CPU may get it back only after
# a busy loop's slice, and so stop after the round, where it stops exact
# and is kept, but such late stops were left out of -v's count of kept
# stops, and of the skid note's; they are counted now.)
TEST_TIMEOUT=120
. "$TESTS_SRCDIR/lib.sh"
need_root
[ -r /proc/self/sched ] || skip "no /proc/PID/sched (a kernel without CONFIG_SCHED_DEBUG)"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs (holders take the CPUs the tick thread does not run on)"
# (each rate's run is taken again for 8 s where it kept under 100 stops:
# under ASAN in CI's load a 3 s run at 199 Hz kept 66, too few for a ratio)
for rate in 199 999; do
for secs in 3 8; do
	start_fixture pingpong nap "$secs" wait
	: >"$T/cs.err"
	"$CSAMPLER" -v -F "$rate" -o "$T/nap.folded" -p "$FIXTURE_PID" >"$T/cs.out" 2>"$T/cs.err" &
	cs=$!
	wait_sampling "$cs"
	kill -USR2 "$FIXTURE_PID"
	CS_STATUS=0
	wait "$cs" || CS_STATUS=$?
	assert_eq "nap at $rate Hz: exit status ($(cat "$T/cs.err"))" "$CS_STATUS" 0
	held=$(sed -nE 's/.*other CPUs held at the ticks: ([0-9]+) of ([0-9]+).*/\1 \2/p' "$T/cs.err")
	[ -n "$held" ] || skip "no holders in this run (csampler not real-time?): $(cat "$T/cs.err")"
	kept=$(sed -nE "s/.*stops at a call's exit: [0-9]+ of ([0-9]+).*/\1/p" "$T/cs.err")
	[ -n "$kept" ] || fail "nap at $rate Hz: no count of kept stops in: $(cat "$T/cs.err")"
	line=$(grep '^switches napper ' "$T/pingpong.out") || fail "nap: no switch count: $(cat "$T/pingpong.out")"
	# (the stops made only for where a waiting thread arrived are not of
	# the ones prejudging saves: left out)
	arrival=$(sed -nE 's/.*dropped waiting for a CPU \(([0-9]+) stopped only for where they arrived\).*/\1/p' "$T/cs.err")
	[ -n "$arrival" ] || fail "nap at $rate Hz: no count of arrival stops in: $(cat "$T/cs.err")"
	set -- $line
	stops=$(($3 - $4 - arrival))
	note "nap at $rate Hz: $stops stops for $kept kept ($3 voluntary switches, $4 sleeps, $arrival stops for arrivals; CPUs held at $held ticks)"
	wait "$FIXTURE_PID" 2>/dev/null || true
	if [ "$kept" -lt 100 ]; then
		[ "$secs" = 3 ] && continue
		fail "nap at $rate Hz: only $kept stops kept in $secs s: $(cat "$T/cs.err")"
	fi
	ratio=$(awk -v s="$stops" -v k="$kept" 'BEGIN { printf "%.2f\n", s / k }')
	assert_within "nap at $rate Hz: stops per stop kept" "$ratio" 0.9 1.45
	break
done
done
exit 0
