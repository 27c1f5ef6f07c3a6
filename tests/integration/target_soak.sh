#!/bin/sh
# target_soak: 100 attach/detach cycles (alternating attach modes) on a busy
# multi-threaded fixture that checks its own arithmetic; it must end intact,
# untraced, with every round's result right. Cycles skip symbolization
# (--addresses) to keep the test near 30 s; the last one symbolizes.
# ~30 s on an idle 2-core machine; allow for a loaded one.
# (CSAMPLER_STRESS=light: 40 cycles, stress_rounds; 2 busy threads: 4
# made it 92 s of CPU in CI's sanitizer stage)
: "${TEST_TIMEOUT:=300}"
. "$TESTS_SRCDIR/lib.sh"
need_root
: "${SOAK_CYCLES:=$(stress_rounds 100 40)}"

start_fixture stopme 2 busy
pid=$FIXTURE_PID
i=0
while [ $i -lt "$SOAK_CYCLES" ]; do
	mode=persistent
	[ $((i % 2)) = 1 ] && mode=per-sample
	run_csampler -q --addresses --attach-mode "$mode" -F 499 -d 0.2 -o "$T/out.folded" -p "$pid"
	assert_eq "cycle $i ($mode): exit status" "$CS_STATUS" 0
	assert_untraced_running "$pid"
	i=$((i + 1))
done
run_csampler -q -F 499 -d 2 -o "$T/out.folded" -p "$pid"
assert_eq "last cycle: exit status" "$CS_STATUS" 0
assert_folded_has "$T/out.folded" 'check_round'
assert_untraced_running "$pid"
kill -TERM "$pid"
wait "$pid" || fail "fixture reported damage: $(cat "$T/stopme.out")"
assert_match "fixture result" "$(cat "$T/stopme.out")" 'rounds [1-9][0-9]* bad 0'
exit 0
