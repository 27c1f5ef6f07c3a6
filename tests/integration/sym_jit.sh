#!/bin/sh
# sym_jit: code the fixture maps executable and describes in /tmp/perf-PID.map
# shows under the name the map gives it.
. "$TESTS_SRCDIR/lib.sh"
need_root

start_fixture jitmap 30
[ -s "/tmp/perf-$FIXTURE_PID.map" ] || harness "fixture wrote no perf map"
addr=$(awk '{ print $1 }' "/tmp/perf-$FIXTURE_PID.map")
"$PROGS/symlookup" "$FIXTURE_PID" "$addr" >"$T/one" || fail "symlookup failed"
grep -qx 'jit_hot_loop@??:0 \[jit\]' "$T/one" || fail "jit frame: $(cat "$T/one")"

run_csampler -F 199 -d 2 -o "$T/out.folded" -p "$FIXTURE_PID"
assert_eq "exit status" "$CS_STATUS" 0
assert_folded_has "$T/out.folded" '(^|;)jit_hot_loop [0-9]+$'
assert_share "$T/out.folded" 'jit_hot_loop ?$' 90 10
kill "$FIXTURE_PID"
rm -f "/tmp/perf-$FIXTURE_PID.map"
exit 0
