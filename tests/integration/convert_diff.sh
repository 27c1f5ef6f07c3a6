#!/bin/sh
# convert_diff: -i BASE -i NEW --diff compares two profiles, shares against
# shares (the base's counts scaled to the new one's total). On two pprof
# files made here with known stacks (base: main;b 100, main;c 100; new:
# main;b 300, main;c 100), the folded output is "stack BASE NEW" exactly as
# difffolded.pl writes it (main;b 200 300, main;c 200 100) and
# flamegraph.pl draws it; the text report's table puts b at +25 points and c
# at -25; in the SVG (well-formed) b is drawn red, c blue, main unchanged.
# A real profile against itself changes nothing anywhere. A --diff without
# two inputs, two inputs without --diff, and a pprof output are usage
# errors.
. "$TESTS_SRCDIR/lib.sh"
need_cmd python3
need_flamegraph

python3 "$TESTS_SRCDIR/mkpprof.py" cpu "$T/base.pb.gz" 'main;b=100' 'main;c=100' &&
	python3 "$TESTS_SRCDIR/mkpprof.py" cpu "$T/new.pb.gz" 'main;b=300' 'main;c=100' ||
	harness "mkpprof.py failed"
run_csampler -i "$T/base.pb.gz" -i "$T/new.pb.gz" --diff -o "$T/d.folded" -o "$T/d.txt" -o "$T/d.svg"
assert_eq "--diff: status" "$CS_STATUS" 0
assert_eq "--diff folded" "$(sort "$T/d.folded" | tr '\n' '|')" "main;b 200 300|main;c 200 100|"
assert_match "--diff text: b" "$(grep ' b$' "$T/d.txt")" '^ *50\.00% +75\.00% +\+25\.00 +75\.00% +\+25\.00  b$'
assert_match "--diff text: c" "$(grep ' c$' "$T/d.txt")" '^ *50\.00% +25\.00% +-25\.00 +25\.00% +-25\.00  c$'
"$FLAMEGRAPH_PL" "$T/d.folded" >"$T/fg.svg" 2>"$T/fg.err" || fail "flamegraph.pl: $(cat "$T/fg.err")"
grep -q '<title>b (300 samples, 75.00%; +25.00%)</title>' "$T/fg.svg" ||
	fail "flamegraph.pl does not draw the difference: $(grep -o '<title>b [^<]*' "$T/fg.svg")"
python3 - "$T/d.svg" <<'PY' || fail "the SVG: $(cat "$T/svg.err" 2>/dev/null)"
import re, sys, xml.etree.ElementTree as ET
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(sys.argv[1]).getroot()
fill = {}
for g in root.iter("{http://www.w3.org/2000/svg}g"):
    if g.get("class") == "f":
        r, gr, b = map(int, re.findall(r"\d+", g.find("s:rect", ns).get("fill")))
        fill[g.get("data-name")] = (r, gr, b)
assert fill["b"][0] > fill["b"][2] + 100, fill      # red: grew
assert fill["c"][2] > fill["c"][0] + 100, fill      # blue: shrank
assert fill["main"][0] == fill["main"][1] == fill["main"][2], fill  # unchanged: grey
PY

# a real profile against itself: no change anywhere
run_csampler -q -F 499 -o "$T/h.pb.gz" -- "$PROGS/hot" 1
run_csampler -i "$T/h.pb.gz" -i "$T/h.pb.gz" --diff -o "$T/self.folded" -o "$T/self.txt"
assert_eq "self --diff: status" "$CS_STATUS" 0
[ -s "$T/self.folded" ] || fail "self --diff: no stacks"
awk 'NF < 3 || $(NF - 1) != $NF { bad = 1 } END { exit bad }' "$T/self.folded" ||
	fail "self --diff: a stack changed: $(awk '$(NF - 1) != $NF' "$T/self.folded" | head -3)"
assert_eq "self --diff: the text's table of changes is empty" \
	"$(sed -n '/^Largest changes/,/^$/p' "$T/self.txt" | grep -c '%')" 1

# usage
run_csampler -i "$T/h.pb.gz" --diff -o "$T/x.svg"
assert_eq "--diff with one input: status" "$CS_STATUS" 64
run_csampler -i "$T/h.pb.gz" -i "$T/h.pb.gz" -o "$T/x.svg"
assert_eq "two inputs without --diff: status" "$CS_STATUS" 64
run_csampler -i "$T/h.pb.gz" -i "$T/h.pb.gz" --diff -o "$T/x.pb.gz"
assert_eq "--diff to pprof: status" "$CS_STATUS" 64
grep -q 'go tool pprof -diff_base' "$T/cs.err" || fail "--diff to pprof: $(cat "$T/cs.err")"
exit 0
