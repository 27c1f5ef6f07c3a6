#!/bin/sh
# python_code_churn: a Python program that makes, runs and frees code
# objects all the time (tests/progs/pycodechurn.py: gen_N compiled from
# text, its lines N % 50 + 1 to N % 50 + 5, its file "<gen_N>"). CPython
# gives a freed code object's memory to the next one: csampler must name
# each frame by the code object its frame ran at the sample (a code object
# is named again when the header at its address is not the one it named),
# never by the one that was there before. Every gen_N location of the
# pprof profile has gen_N's file and one of gen_N's lines, and thousands
# of code objects were named (more than 300: the table of them grows). In time order (the
# speedscope timeline), the gen_N sampled only go up: a frame named by a
# code object freed before would name an older one. The file and line
# check runs on every CPython from 3.6 present too (python_each), 0.5 s of
# CPU each (about 180 gen_N samples).
# (the program at the quick group's nice, as start_fixture's fixtures:
# it is busy, and takes the CPU the other tests leave)
. "$TESTS_SRCDIR/lib.sh"
need_root
need_go

# check_raw: $T/raw's gen_N locations each with gen_N's own file and
# lines, into $T/check ("seen N names K bad B")
check_raw() {
awk '/^Locations/ { on = 1; next } /^Mappings/ { on = 0 }
	on && $4 ~ /^gen_[0-9]+$/ {
		n = substr($4, 5) + 0; fl = $5; line = fl; sub(/^.*:/, "", line); file = fl; sub(/:[0-9]+$/, "", file)
		seen++; names[$4] = 1
		if (file != "<" $4 ">" || line - n % 50 < 1 || line - n % 50 > 5) { bad++; if (bad <= 5) print "bad " $0 }
	}
	END { k = 0; for (x in names) k++; print "seen " seen + 0 " names " k " bad " bad + 0 }' "$T/raw" >"$T/check"
}

python_each >"$T/pythons"
while read -r label root py; do
	case $label in *-2.7|debian-3.11) continue ;; esac
	python_file "$root" "$TESTS_SRCDIR/progs/pycodechurn.py"
	run_csampler -F 499 -o "$T/$label.pb.gz" -- chroot "$root" "$py" "$PY_FILE" 0.5
	assert_eq "$label: exit status" "$CS_STATUS" 0
	"$GO" tool pprof -raw "$T/$label.pb.gz" >"$T/raw" 2>"$T/pprof.err" || fail "$label: go tool pprof -raw: $(cat "$T/pprof.err")"
	check_raw
	note "$label: $(sed -n 's/^made //p' "$T/cs.out") functions made; $(tail -1 "$T/check")"
	grep -q '^seen [1-9][0-9]* .* bad 0$' "$T/check" ||
		fail "$label: a gen_N frame has another function's file or line, or none was seen: $(cat "$T/check")"
done <"$T/pythons"

PY=/usr/bin/python3.11
[ -x "$PY" ] || skip "no $PY (Debian bookworm's python3.11): the time-order check needs it"
run_csampler -F 499 -o "$T/churn.pb.gz" -o "$T/churn.speedscope.json" -- ${CSAMPLER_FIXTURE_NICE:+nice -n "$CSAMPLER_FIXTURE_NICE"} "$PY" "$TESTS_SRCDIR/progs/pycodechurn.py" 3
assert_eq "exit status" "$CS_STATUS" 0
made=$(sed -n 's/^made //p' "$T/cs.out")
[ -n "$made" ] || fail "pycodechurn did not finish: $(cat "$T/cs.out" "$T/cs.err")"
"$GO" tool pprof -raw "$T/churn.pb.gz" >"$T/raw" 2>"$T/pprof.err" || fail "go tool pprof -raw: $(cat "$T/pprof.err")"
# "ID: 0xADDR M=K gen_N <gen_M>:LINE s=FIRST": gen_N's own file and lines
check_raw
note "$made functions made; $(tail -1 "$T/check")"
grep -q ' bad 0$' "$T/check" || fail "a gen_N frame has another function's file or line: $(cat "$T/check")"
# (past 256 code objects named, the table grows beyond its first 1024
# slots; the program runs for 3 s of its own CPU: about 1500 samples
# however loaded the machine)
names=$(awk '/^seen/ { print $4 }' "$T/check")
[ "$names" -ge 300 ] || fail "only $names gen_N functions sampled (expected hundreds: $made made)"
# in time order, the functions sampled only go up
"$PY" - "$T/churn.speedscope.json" >"$T/order" <<'PYEOF' || fail "the speedscope file cannot be read: $(cat "$T/order")"
import json, re, sys
d = json.load(open(sys.argv[1]))
frames = d["shared"]["frames"]
gen = [int(m.group(1)) if (m := re.fullmatch(r"gen_(\d+)", f["name"])) else None for f in frames]
seen = back = 0
for prof in d["profiles"]:
    last = -1
    for stack in prof["samples"]:
        ns = [gen[i] for i in stack if gen[i] is not None]
        if not ns:
            continue
        seen += 1
        if ns[-1] < last:
            back += 1
        last = ns[-1]
print("samples %d back %d" % (seen, back))
PYEOF
note "in time order: $(cat "$T/order")"
grep -q '^samples [1-9][0-9]* back 0$' "$T/order" || fail "an older gen_N was sampled after a newer one: $(cat "$T/order")"
exit 0
