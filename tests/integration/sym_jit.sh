#!/bin/sh
# sym_jit: code the fixture maps executable and describes in /tmp/perf-PID.map
# shows under the name the map gives it; without the map, under its
# absolute address ("[anon]@0xADDR").
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

# without the map, the code is named by its absolute address, inside the
# region the map gave (an offset in its mapping would merge two regions)
size=$(awk '{ print $2 }' "/tmp/perf-$FIXTURE_PID.map")
rm -f "/tmp/perf-$FIXTURE_PID.map"
run_csampler -F 199 -d 1 -o "$T/anon.folded" -p "$FIXTURE_PID"
assert_eq "exit status" "$CS_STATUS" 0
leaf=$(sed -n 's/.*;\(\[anon\]@0x[0-9a-f]*\) [0-9]*$/\1/p' "$T/anon.folded" | sort | uniq -c | sort -rn | awk 'NR == 1 { print $2 }')
[ -n "$leaf" ] || fail "no [anon]@0xADDR leaf: $(cat "$T/anon.folded")"
inside=$(perl -e 'my ($a, $s, $l) = map { hex } @ARGV; print $l >= $a && $l < $a + $s ? 1 : 0' \
	"$addr" "$size" "${leaf#\[anon\]@}")
assert_eq "$leaf inside the code at 0x$addr (+0x$size)" "$inside" 1
kill "$FIXTURE_PID"
exit 0
