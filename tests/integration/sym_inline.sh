#!/bin/sh
# sym_inline: an always_inline chain outer -> mid -> inner. symlookup over
# outer's code must show the chain innermost first with the exact lines
# (inner's loop line, mid's and outer's call sites), -n (--no-inline) must
# keep only outer at its call line, and a real profile must show
# main;outer;mid;inner in that order.
. "$TESTS_SRCDIR/lib.sh"
need_root
need_cmd nm

src="$TESTS_SRCDIR/progs/inline.c"
li=$(grep -n 'LINE-INNER' "$src" | cut -d: -f1)
lm=$(grep -n 'LINE-MID' "$src" | cut -d: -f1)
lo=$(grep -n 'LINE-OUTER' "$src" | cut -d: -f1)

start_fixture inline 30
# outer's runtime address: the binary's offset-0 mapping + outer's st_value (PIE).
bin=$(readlink -f "$PROGS/inline")
base=$(awk -v b="$bin" '$6 == b && $3 ~ /^0+$/ { split($1, r, "-"); print r[1]; exit }' "/proc/$FIXTURE_PID/maps")
[ -n "$base" ] || harness "no mapping of $bin"
set -- $(nm -S "$PROGS/inline" | awk '$4 == "outer" { print $1, $2 }')
[ $# = 2 ] || harness "no symbol outer in the fixture"
start=$(printf '%x' $((0x$base + 0x$1)))

"$PROGS/symlookup" -r "$FIXTURE_PID" "$start" "0x$2" >"$T/chains" || fail "symlookup failed"
note "chains in outer: $(grep -c . "$T/chains")"
grep -qxF "inner@inline.c:$li (inlined) ; mid@inline.c:$lm (inlined) ; outer@inline.c:$lo" "$T/chains" ||
	fail "no inner;mid;outer chain at lines $li/$lm/$lo: $(cat "$T/chains")"
grep -q '^mid@inline.c:[0-9]* (inlined) ; outer@inline.c:[0-9]*$' "$T/chains" ||
	fail "no mid;outer chain: $(cat "$T/chains")"
# every chain ends in outer, the only real function here
grep -v '^module ' "$T/chains" | grep -v ' ; outer@inline.c:[0-9]*$' | grep -v '^outer@inline.c:' &&
	fail "a chain in outer does not end in outer"
grep -q "^module $bin build-id [0-9a-f]\{40\}$" "$T/chains" || fail "module line: $(tail -1 "$T/chains")"

"$PROGS/symlookup" -n -r "$FIXTURE_PID" "$start" "0x$2" >"$T/flat" || fail "symlookup -n failed"
grep -v '^module ' "$T/flat" | grep -v '^outer@inline.c:[0-9]*$' && fail "-n left more than outer"
grep -qxF "outer@inline.c:$lo" "$T/flat" || fail "-n: outer not at its call line $lo: $(cat "$T/flat")"

run_csampler -F 199 -d 2 -o "$T/out.folded" -p "$FIXTURE_PID"
assert_eq "exit status" "$CS_STATUS" 0
assert_folded_has "$T/out.folded" ';main;outer;mid;inner [0-9]+$'
assert_share "$T/out.folded" ';outer;mid;inner ?$' 95 5
exit 0
