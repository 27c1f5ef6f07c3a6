#!/bin/sh
# sampler_many_threads: 500 threads asleep and one that starts to compute
# 1.5 s into a 4 s window at 99 Hz. csampler reads the run time of a thread
# that does not run seldom (at most every 100 ms), so by then it reads the
# late thread's seldom too: it must still be sampled about 99 times per
# second of the CPU time it used while csampler ran, every stack whole, and
# the SIGUSR1 that starts it must reach it through csampler.
. "$TESTS_SRCDIR/lib.sh"
need_root

n=500
start_fixture sleepers "$n"
late=
for task in /proc/"$FIXTURE_PID"/task/*; do
	[ "$(cat "$task/comm" 2>/dev/null)" = late-spin ] && late=${task##*/}
done
[ -n "$late" ] || harness "no late-spin thread in the fixture"
runtime() { awk '{print $1}' "/proc/$FIXTURE_PID/task/$late/schedstat"; }

# (the window ends with SIGINT once the late thread's run time is read:
# read after csampler's exit, it counted the time csampler took to write
# its profile, slow under AddressSanitizer: 5.4 s of CPU for 376 samples
# of a 4 s window, in CI's sanitizer stage)
start_sampling_csampler -v -F 99 -o "$T/out.folded" -p "$FIXTURE_PID"
cs=$BG_CSAMPLER
sleep 1.5
before=$(runtime)
kill -USR1 "$FIXTURE_PID"
sleep 2.5
after=$(runtime)
kill -INT "$cs"
st=0
wait "$cs" || st=$?
assert_eq "exit status after SIGINT ($(tail -3 "$T/cs.err"))" "$st" 0
stats=$(grep -E '^csampler: [0-9]+ samples' "$T/cs.err")
note "$stats"
seen=$(printf '%s\n' "$stats" | sed -nE 's/.*, ([0-9]+) threads seen,.*/\1/p')
[ "${seen:-0}" -ge $((n + 2)) ] || fail "threads seen: '$seen', expected at least $((n + 2))"

# The late thread ran from the signal to the window's end (its run time is
# read just before csampler's SIGINT: its samples may be a few more). How
# much CPU it got in those 2.5 s depends on the machine (626 ms with
# another test and AddressSanitizer): that it ran at all shows the signal
# reached it; its samples are judged against what it got.
cpu_ms=$(( (after - before) / 1000000 ))
[ "$cpu_ms" -ge 100 ] || fail "late-spin used only $cpu_ms ms of CPU after SIGUSR1: did the signal reach it?"
want=$((cpu_ms * 99 / 1000))
F=$T/out.folded
got=$(folded_count "$F" ';late_spin;late_leaf$')
note "late-spin: $got samples for $cpu_ms ms of CPU (about $want at 99 Hz)"
[ "$got" -ge $((want * 80 / 100)) ] || fail "late-spin: $got samples, expected about $want"
[ "$got" -le $((want * 110 / 100)) ] || fail "late-spin: $got samples, expected about $want"
total=$(folded_total "$F")
[ "$got" -eq "$total" ] || fail "$got of $total samples are late-spin's whole stack; the others: $(grep -v ';late_spin;late_leaf ' "$F" | head -5 | tr '\n' '|')"
assert_eq "threads left" "$(ls /proc/"$FIXTURE_PID"/task | wc -l)" $((n + 2))
assert_untraced_running "$FIXTURE_PID"
