#!/bin/sh
# hostile_names: thread names and symbol names built to forge output
# (progs/evilnames.c: ';', newlines, a trailing " 999 77", ANSI escapes,
# markup, printf formats, invalid UTF-8, a 10 kB symbol) cannot add a line, a
# frame or a count to any format: every folded line is one stack and one
# count, no control byte reaches any output, the SVG parses as XML, pprof
# reads the profile, and the long name is bounded. A launched program's
# arguments with a newline keep the text report's command line one line.
# --idle samples every thread at every tick, so each one is seen however
# loaded the machine is.
. "$TESTS_SRCDIR/lib.sh"
need_root
need_cmd python3
need_go

start_fixture evilnames
run_csampler --idle -F 499 -d 2 --threads -o "$T/out.folded" -o "$T/out.svg" -o "$T/out.txt" \
	-o "$T/out.pb.gz" -o "$T/out.speedscope.json" -p "$FIXTURE_PID"
assert_eq "exit status ($(cat "$T/cs.err"))" "$CS_STATUS" 0
F=$T/out.folded
reported=$(sed -nE 's/^csampler: wrote .* \(folded stacks, ([0-9]+) samples?\).*/\1/p' "$T/cs.err")
assert_eq "samples in the output" "$(folded_total "$F")" "$reported"

# one stack per line: thread root, clone3;start_thread;spinner_main, the leaf
lines=$(wc -l <"$F")
[ "$lines" -ge 7 ] || fail "expected at least 7 stacks, got $lines: $(cat "$F")"
bad=$(LC_ALL=C awk '!/^[^;]+-[0-9]+;([^;]+;)*[^;]+ [0-9]+$/' "$F" | head -3)
[ -z "$bad" ] || fail "malformed folded lines: $bad"
LC_ALL=C grep -q "$(printf '[\001-\037\177]')" "$F" && fail "a control byte in the folded output"
LC_ALL=C grep -q "$(printf '\033')" "$T/out.txt" && fail "an escape byte in the text report"
LC_ALL=C grep -q "$(printf '\033')" "$T/out.svg" && fail "an escape byte in the SVG"
# no frame ends in " <digits>", so no line carries two counts
LC_ALL=C awk '{ s = $0; sub(/ [0-9]+$/, "", s); n = split(s, f, ";")
	for (i = 1; i <= n; i++) if (f[i] ~ / [0-9]+$/) { print f[i]; bad = 1 } }
	END { exit bad }' "$F" || fail "a frame ends in a number"
# the forged pieces did not become frames or counts of their own
LC_ALL=C grep -Eq '(^|;)(b999 77|999|frame 999)( |;|$)' "$F" && fail "a name was split into frames"
for leaf in 'evil:frame' 'evil_digits' '</text><script>&amp:' 'evil%s%n%x' 'evil_long_L+'; do
	LC_ALL=C grep -Eq -- "spinner_main;\"?$leaf" "$F" || fail "no stack ends in $leaf: $(cut -c1-200 "$F")"
done
longest=$(LC_ALL=C awk '{ s = $0; sub(/ [0-9]+$/, "", s); n = split(s, f, ";")
	for (i = 1; i <= n; i++) if (length(f[i]) > m) m = length(f[i]) } END { print m + 0 }' "$F")
note "longest frame: $longest bytes (symbol of 10010)"
[ "$longest" -le 8192 ] || fail "a $longest-byte frame: long names are not bounded"

LC_ALL=C grep -q "$(printf '[\001-\037\177]')" "$T/out.speedscope.json" &&
	fail "a control byte in the speedscope file"
python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$T/out.svg" ||
	fail "the SVG is not well-formed XML"
# strict UTF-8 and JSON; every thread a profile of its own, named
python3 -c '
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
names = [p["name"] for p in d["profiles"]]
assert len(names) >= 7 and all(names), names
assert any("evil" in f["name"] for f in d["shared"]["frames"])
' "$T/out.speedscope.json" || fail "the speedscope file is not valid UTF-8 JSON of every thread"
"$GO" tool pprof -raw "$T/out.pb.gz" >"$T/raw.txt" 2>"$T/pprof.err" ||
	fail "go tool pprof cannot read the profile: $(cat "$T/pprof.err")"
total=$(awk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 } on && /^ *[0-9]+ +[0-9]+: / { s += $1 } END { print s + 0 }' "$T/raw.txt")
assert_eq "pprof sample total" "$total" "$reported"
assert_untraced_running "$FIXTURE_PID"

# the text report's command line stays one line: arguments holding a
# newline, a tab or a backslash are escaped as --dump and --top escape
# (a\x0ab, not "ab" on two lines)
run_csampler -F 99 -d 1 -o "$T/cmd.txt" -- "$PROGS/hot" 1 1 "$(printf 'a\nb\tc\\d')"
assert_eq "exit status ($(cat "$T/cs.err"))" "$CS_STATUS" 0
assert_eq "command line of the text report" "$(sed -n 's/^command:  //p' "$T/cmd.txt")" \
	"$PROGS/hot 1 1 a\\x0ab\\x09c\\\\d"
exit 0
