#!/bin/sh
# python_names: Python function names are the target's to choose, so
# csampler reads every kind of CPython string (1, 2 and 4 bytes a
# character: Latin-1, Cyrillic and CJK, beyond the BMP) into UTF-8, and a
# name made of the separators and markup of the output formats (; newline
# < & " and a control character, set with code.replace) is escaped in each:
# the folded stacks keep one frame per name and one stack per line, the SVG
# is well-formed XML, the speedscope file is JSON with the name as it
# was, and go tool pprof reads the profile and names every frame, <module>
# too (tests/progs/pynames.py). A
# chain deeper than 512 frames ends with its mark, [python: frames cut]. A
# program with the interpreter in it under another name is found by its
# dynamic symbols. The names' chain and the hostile name's one frame are
# checked on every CPython from 3.8 present (python_each; code.replace is
# 3.8's), the rest on Debian's python3.11.
# (its programs at the quick group's nice, as start_fixture's fixtures:
# they are busy, and take the CPU the other tests leave)
. "$TESTS_SRCDIR/lib.sh"
need_root
python_each >"$T/pythons"
while read -r label root py; do
	case $label in *-2.7|*-3.[67]|debian-3.11) continue ;; esac
	python_file "$root" "$TESTS_SRCDIR/progs/pynames.py"
	run_csampler -F 199 -o "$T/$label.folded" -- chroot "$root" "$py" "$PY_FILE" 1
	assert_eq "$label: exit status" "$CS_STATUS" 0
	# (before 3.11 each Python frame has a call of the loop of its own: C
	# frames between them)
	chain=$(folded_count "$T/$label.folded" ';evil[^;]*name[^;]*<script>&"x[^;]*;(.*;)?wide_😀;(.*;)?latin_é;(.*;)?函数;(.*;)?привет_мир(;|$)')
	total=$(folded_total "$T/$label.folded")
	note "$label: samples through the whole chain of names, the hostile one first: $chain of $total"
	[ $((chain * 2)) -ge "$total" ] ||
		fail "$label: the names were not read: $(sort -t' ' -k2 -nr "$T/$label.folded" | head -3)"
done <"$T/pythons"
PY=/usr/bin/python3.11
[ -x "$PY" ] || skip "no $PY (Debian bookworm's python3.11): its outputs' checks need it"

run_csampler -F 199 -o "$T/n.folded" -o "$T/n.svg" -o "$T/n.speedscope.json" -o "$T/n.pb.gz" -- \
	${CSAMPLER_FIXTURE_NICE:+nice -n "$CSAMPLER_FIXTURE_NICE"} "$PY" "$TESTS_SRCDIR/progs/pynames.py" 2
assert_eq "exit status" "$CS_STATUS" 0
total=$(folded_total "$T/n.folded")
# the four names of other kinds of string, in the order of the calls
chain=$(folded_count "$T/n.folded" ';wide_😀;latin_é;函数;привет_мир(;|$)')
note "samples through the whole chain of names: $chain of $total"
[ $((chain * 2)) -ge "$total" ] || fail "the names were not read: $(sort -t' ' -k2 -nr "$T/n.folded" | head -3)"
# the hostile name: one frame, escaped, before the others
awk '{ n = $NF; sub(/ [0-9]+$/, ""); if ($0 ~ /wide_/ && $0 !~ /;evil[^;]*name[^;]*<script>&"x[^;]*;wide_/) bad++ }
	END { exit bad > 0 }' "$T/n.folded" || fail "the hostile name is not one frame: $(grep -m2 wide_ "$T/n.folded")"
# every line a stack and a count (no newline let through)
awk 'NF < 2 || $NF !~ /^[0-9]+$/ { bad++ } END { exit bad > 0 }' "$T/n.folded" ||
	fail "a folded line is not 'stack count': $(awk 'NF < 2 || $NF !~ /^[0-9]+$/' "$T/n.folded" | head -3)"
# the SVG and the speedscope file parse, with the names as they were
"$PY" - "$T/n.svg" "$T/n.speedscope.json" >"$T/parse" 2>&1 <<'PYEOF' || fail "an output does not parse: $(cat "$T/parse")"
import json, sys, xml.etree.ElementTree as ET
ET.parse(sys.argv[1])
names = {f["name"] for f in json.load(open(sys.argv[2]))["shared"]["frames"]}
want = {"evil;name\n<script>&\"x\x01", "wide_\U0001F600", "latin_é", "函数", "привет_мир"}
missing = want - names
if missing:
    sys.exit("speedscope lacks %r" % sorted(missing))
files = {f.get("file") for f in json.load(open(sys.argv[2]))["shared"]["frames"]}
if "/tmp/a;b\nc.py" not in files:
    sys.exit("speedscope lacks the hostile file name")
print("ok")
PYEOF
if command -v go >/dev/null 2>&1; then
	need_go
	"$GO" tool pprof -raw "$T/n.pb.gz" >"$T/raw" 2>"$T/pprof.err" || fail "go tool pprof -raw: $(cat "$T/pprof.err")"
	grep -q ' привет_мир ' "$T/raw" || fail "pprof lacks привет_мир: $(grep -m3 M= "$T/raw")"
	# (<module> and <lambda> have no system name: go tool pprof took one
	# equal to the name for C++ and made them empty, printed [[python]])
	"$GO" tool pprof -traces "$T/n.pb.gz" >"$T/traces" 2>"$T/pprof.err" ||
		fail "go tool pprof -traces: $(cat "$T/pprof.err")"
	assert_eq "go tool pprof -traces: Python frames without a name" \
		"$(grep -c '\[\[python\]\]' "$T/traces")" 0
	grep -Eq '^ +<module>$' "$T/traces" || fail "go tool pprof -traces lacks <module>: $(head -20 "$T/traces")"
fi
# a chain deeper than csampler reads (512 frames): its innermost 511 and
# the mark that the rest was cut, [python: frames cut], in their place
# (the deepest frame spins for 1.5 s of its own CPU, not wall time: in CI's
# sanitizer run the niced interpreter had 29 samples there, and the 2 of
# its way down, shallower, were 6.5% of the deep stacks)
cat >"$T/deep.py" <<'PYEOF'
import sys, time
sys.setrecursionlimit(5000)
def down(n):
    if n == 0:
        end = time.process_time() + 1.5
        while time.process_time() < end:
            pass
        return 0
    return down(n - 1)
down(700)
PYEOF
run_csampler -F 199 -o "$T/deep.folded" -- ${CSAMPLER_FIXTURE_NICE:+nice -n "$CSAMPLER_FIXTURE_NICE"} "$PY" "$T/deep.py"
assert_eq "exit status (deep)" "$CS_STATUS" 0
awk '{ c = $NF; sub(/ [0-9]+$/, ""); n = split($0, f, ";"); d = 0; m = 0
	for (i = 1; i <= n; i++) { if (f[i] == "down") d++; if (f[i] == "[python: frames cut]" && i < n && f[i + 1] == "down") m++ }
	if (d > 0) { deep += c; if (d == 511 && m == 1) ok += c } }
	END { printf "%d %d\n", deep, ok }' "$T/deep.folded" >"$T/deep"
note "deep stacks: $(cut -d' ' -f1 "$T/deep"); with 511 frames of down under the cut mark: $(cut -d' ' -f2 "$T/deep")"
read -r deep ok <"$T/deep"
[ "$deep" -gt 0 ] && [ $((ok * 100)) -ge $((deep * 95)) ] ||
	fail "a deep chain is not cut at 511 frames under its mark: $(sort -t' ' -k2 -nr "$T/deep.folded" | head -2 | cut -c1-300)"
# a program that embeds the interpreter under a name of its own (here a
# copy of python3.11 called myapp) is found by its dynamic symbols
cp "$PY" "$T/myapp"
run_csampler -F 199 -o "$T/app.folded" -- ${CSAMPLER_FIXTURE_NICE:+nice -n "$CSAMPLER_FIXTURE_NICE"} "$T/myapp" "$TESTS_SRCDIR/progs/pynames.py" 1
assert_eq "exit status (myapp)" "$CS_STATUS" 0
app=$(folded_count "$T/app.folded" '(^|;)привет_мир(;|$)')
loop=$(folded_count "$T/app.folded" '(^|;)_PyEval_EvalFrameDefault(;|$)')
note "myapp: привет_мир in $app of $(folded_total "$T/app.folded") samples, the evaluation loop left in $loop"
# (the loop's own frame left in at most 1% of them, as python_split allows
# for the stops it cannot splice; a make distcheck in CI had 1 of 204, not
# diagnosed: the profile was not kept)
[ "$app" -gt 0 ] && [ $((loop * 100)) -le "$app" ] ||
	fail "the embedded interpreter's frames were not read: $(grep -m2 _PyEval_EvalFrameDefault "$T/app.folded" || head -2 "$T/app.folded")"
exit 0
