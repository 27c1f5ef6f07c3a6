#!/bin/sh
# target_churn: a program creating and joining 5000 short threads runs to
# completion under csampler (launch and attach), every thread intact, and
# the short threads appear in the samples (their own function when launched;
# when attached, as many distinct threads seen by the sampler).
. "$TESTS_SRCDIR/lib.sh"
need_root

run_csampler -q -F 499 -o "$T/launch.folded" -- "$PROGS/churn" 5000
assert_eq "launch: exit status" "$CS_STATUS" 0
assert_match "launch: churn result" "$(grep '^done' "$T/cs.out")" '^done 5000 wrong 0$'
assert_folded_has "$T/launch.folded" 'short_thread_work'
# a new thread stopped on its first instructions, the child side of clone3
# (no CFI there: its stack is fresh) has no caller: a whole stack "clone3",
# not one cut short (6% of this profile's samples, two thirds of those at
# clone3, were "[truncated];clone3"; and beside other load, up to 7 of 73
# were, their stacks made since the maps were read and the code above them,
# a library's, taken for their live stack: such a stack now ends at the
# next mapping known, 0 cut in 12 runs six at a time; a few may still be,
# whose code could not be read: 2 of 380, the process gone before their
# unwinding)
starts=$(folded_count "$T/launch.folded" '^clone3$')
cut=$(folded_count "$T/launch.folded" '^\[truncated\];clone3$')
note "launch: $starts samples of threads on their first instructions, $cut cut short there"
[ $((cut * 20)) -le $((starts + cut)) ] ||
	fail "launch: samples of new threads cut short at clone3: $cut of $((starts + cut))"

start_fixture churn 20000
pid=$FIXTURE_PID
run_csampler -v -F 499 -d 1 -o "$T/attach.folded" -p "$pid"
assert_eq "attach: exit status" "$CS_STATUS" 0
seen=$(sed -n 's/^csampler: .* \([0-9][0-9]*\) threads seen.*/\1/p' "$T/cs.err")
[ -n "$seen" ] || fail "attach: no statistics line: $(cat "$T/cs.err")"
[ "$seen" -ge 20 ] || fail "attach: only $seen threads seen"
assert_untraced_running "$pid"
wait "$pid" || fail "churn failed after attach: $(cat "$T/churn.out")"
assert_match "attach: churn result" "$(grep '^done' "$T/churn.out")" '^done 20000 wrong 0$'
exit 0
