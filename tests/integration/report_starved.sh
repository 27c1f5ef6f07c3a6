#!/bin/sh
# report_starved: a target that is runnable but given no CPU (SCHED_IDLE,
# pinned to a CPU beside four busy loops) has next to no samples; csampler
# says its threads waited for a CPU, and how long (the -v line's waited for
# a CPU: schedstat's run delay, which grows only when a wait ends, and for
# a wait not ended the time the thread stayed runnable without running),
# instead of "no thread ran on a CPU" and --idle (before: the same hint as
# for a sleeping target).
. "$TESTS_SRCDIR/lib.sh"
need_root
need_cmd taskset
need_cmd chrt
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs (the busy loops take one)"
cpu=$(($(nproc) - 1))
for i in 1 2 3 4; do
	taskset -c "$cpu" sh -c 'while :; do :; done' &
	FIXTURE_PIDS="$FIXTURE_PIDS $!"
done
taskset -c "$cpu" chrt -i 0 "$PROGS/hot" 30 >"$T/hot.out" 2>&1 &
HOT=$!
FIXTURE_PIDS="$FIXTURE_PIDS $HOT"
sleep 0.5
run_csampler -v -F 99 -d 2 -o "$T/s.folded" -p "$HOT"
assert_eq "exit status ($(cat "$T/cs.err"))" "$CS_STATUS" 0
waited=$(sed -nE 's/.* switches, ([0-9.]+) s waited for a CPU, .*/\1/p' "$T/cs.err")
[ -n "$waited" ] || fail "no time waited in the -v line: $(cat "$T/cs.err")"
# (it ran a few milliseconds at most in the 2 s)
assert_within "seconds waited for a CPU in 2 s" "$waited" 1.6 3
# (the time sampled, as measured: with -d 2 it read 2.1 s once in CI's
# load, its end some 50 ms late)
if grep -q '^csampler: 0 samples' "$T/cs.err"; then
	assert_match "the hint for a starved target" "$(grep 'hint:' "$T/cs.err")" \
		"^csampler: hint: the target's threads waited [0-9.]+ s for a CPU in the 2\\.[0-9] s sampled \\(runnable, but given none"
else
	note "a sample was kept (it ran at a tick): $(grep -E '^csampler: [0-9]+ samples \(' "$T/cs.err")"
fi
grep -q 'no thread ran on a CPU' "$T/cs.err" && fail "the sleeping target's hint: $(cat "$T/cs.err")"
assert_untraced_running "$HOT"
exit 0
