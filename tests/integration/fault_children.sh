#!/bin/sh
# fault_children: --children on shell pipelines that start thousands of
# short processes ends when the program ends, every time: 10 runs, each
# under a 150 s timeout, alternating normal and real-time priority (a child
# that exec'd and exited before its parent's fork event was read was added
# again by that event, and csampler then waited for it for ever; 150 s: a
# run of 3 s alone took more than 60 beside the quick group). Each run
# exits with the program's status and has samples of the pipeline.
# (the binary that hung did so at its second run; 20 runs were 91 s of
# CPU, the quick group's most. CSAMPLER_STRESS=light: 6 runs,
# stress_rounds)
TEST_TIMEOUT=400
. "$TESTS_SRCDIR/lib.sh"
need_root

run=0
for script in 'for i in $(seq 80); do x=$(echo $i | cat | cat); done' \
	      'for i in $(seq 60); do echo $i | md5sum | cut -c1-4 | cat >/dev/null; done; exit 3'; do
	for i in $(seq 1 "$(stress_rounds 5 3)"); do
		run=$((run + 1))
		prio=""
		[ $((run % 2)) = 0 ] && prio="--realtime=0"
		CS_STATUS=0
		timeout -k 5 150 "$CSAMPLER" -q $prio --children -F 499 -o "$T/c.folded" -- sh -c "$script" \
			>"$T/cs.out" 2>"$T/cs.err" || CS_STATUS=$?
		[ "$CS_STATUS" = 124 ] || [ "$CS_STATUS" = 137 ] &&
			fail "run $run ($prio): csampler --children did not end within 150 s: $script"
		case "$script" in
		*'exit 3') want=3 ;;
		*) want=0 ;;
		esac
		assert_eq "run $run ($prio): status" "$CS_STATUS" "$want"
		[ "$(folded_total "$T/c.folded")" -gt 0 ] || fail "run $run: no samples: $(cat "$T/cs.err")"
	done
done
note "$run runs ended with the program"
exit 0
