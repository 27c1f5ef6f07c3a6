#!/bin/sh
# soak: csampler at 999 Hz for SOAK_SECONDS (default 600) against the
# self-checking ledger fixture (4 workers plus thread churn) while realtime
# signals are queued to it without pause. Ends with exact totals: the folded
# and pprof outputs hold exactly the samples csampler reported, the ledger
# received every signal sent, found no checksum error, and runs on untraced.
# Not part of make check. Run from a build directory:
#   CSAMPLER=src/csampler PROGS=tests/progs TESTS_SRCDIR=/path/to/tests \
#     SOAK_SECONDS=600 sh /path/to/tests/soak.sh
: "${SOAK_SECONDS:=600}"
TEST_TIMEOUT=$((SOAK_SECONDS + 300))
. "$TESTS_SRCDIR/lib.sh"
. "$TESTS_SRCDIR/ledger_lib.sh"
need_root

start_fixture ledger 4 1
L=$FIXTURE_PID
ledger_check "$L" "$T/ledger.out" 0

# the signal storm: batches of 500 until csampler is done
(
	n=0
	while [ ! -e "$T/stop" ]; do
		"$PROGS/ledger" send "$L" 500 >/dev/null || exit 1
		n=$((n + 500))
		echo "$n" >"$T/sent"
		sleep 0.05
	done
) &
sender=$!

run_csampler_soak() {
	CS_STATUS=0
	timeout -k 5 $((SOAK_SECONDS + 240)) ${CSAMPLER_WRAPPER:-} "$CSAMPLER" -F 999 -d "$SOAK_SECONDS" \
		-o "$T/soak.folded" -o "$T/soak.pb.gz" -p "$L" 2>"$T/cs.err" || CS_STATUS=$?
}
run_csampler_soak
touch "$T/stop"
wait "$sender" || fail "the signal sender failed"
sent=$(cat "$T/sent")
cat "$T/cs.err"
assert_eq "csampler status" "$CS_STATUS" 0
reported=$(sed -n 's/^csampler: wrote .*(folded): \([0-9]*\) samples.*/\1/p' "$T/cs.err")
assert_eq "samples in the folded output" "$(folded_total "$T/soak.folded")" "$reported"
if [ -n "${GO:-}" ] || command -v go >/dev/null 2>&1; then
	"${GO:-go}" tool pprof -raw "$T/soak.pb.gz" >"$T/raw.txt" 2>/dev/null || fail "pprof cannot read the profile"
	total=$(awk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 } on && /^ *[0-9]+ +[0-9]+: / { s += $1 } END { print s + 0 }' "$T/raw.txt")
	assert_eq "samples in the pprof output" "$total" "$reported"
fi
ledger_check "$L" "$T/ledger.out" "$sent"
note "soak ${SOAK_SECONDS}s at 999 Hz: $reported samples, ledger $LEDGER_R rounds, $LEDGER_CHURNED threads churned, $LEDGER_RT of $sent signals, $LEDGER_ERR errors"
echo "PASS: soak"
exit 0
