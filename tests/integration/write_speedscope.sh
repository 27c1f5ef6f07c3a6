#!/bin/sh
# write_speedscope: the speedscope output is a real per-thread timeline.
# The phases fixture has a known one: its main thread runs phase_one for
# 600 ms then phase_two for 600 ms; its thread "late" sleeps 300 ms, then
# runs late_work for 600 ms. The file must pass speedscope's own JSON schema
# (where the npm package is installed) and ours (stricter); each thread's
# profile must put those functions at those times, weigh them at the CPU
# they had (the CPU the fixture's own thread clocks counted), and agree
# sample for sample with the folded output of the run.
. "$TESTS_SRCDIR/lib.sh"
need_root
PY=
for py in /usr/bin/python3 python3; do
	if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import jsonschema' 2>/dev/null; then
		PY=$py
		break
	fi
done
[ -n "$PY" ] || skip "needs python3 with jsonschema (Debian python3-jsonschema)"
CHECK="$TESTS_SRCDIR/speedscope/check.py"
OFFICIAL="$TESTS_SRCDIR/speedscope/node_modules/speedscope/dist/release/file-format-schema.json"
[ -f "$OFFICIAL" ] || skip "speedscope's npm package is not installed (cd tests/speedscope && npm ci; scripts/install-deps does)"

run_csampler -F 199 --threads -o "$T/out.speedscope.json" -o "$T/out.folded" \
	-- "$PROGS/phases" </dev/null
assert_eq "exit status ($(cat "$T/cs.err"))" "$CS_STATUS" 0
grep -q '^done' "$T/cs.out" || fail "phases did not finish: $(cat "$T/cs.out")"
"$PY" "$CHECK" "$T/out.speedscope.json" 5025125 "$T/out.folded" $OFFICIAL >"$T/facts" ||
	fail "$(tail -1 "$T/facts")"
note "$(tail -1 "$T/facts")"
main_tid=$(sed -n 's/^ready //p' "$T/cs.out")

# fact THREAD-PREFIX FUNCTION: "first_start last_end cpu" in ms
fact() { awk -v t="$1" -v f="$2" '$1 == "fact" && index($2, t) == 1 && $3 == f {print $4, $5, $6}' "$T/facts"; }
# The fixture's clock starts when it has read its first line, which a busy
# machine may delay by tens of ms after sampling starts (the launch, the
# dynamic loader): the phases are judged from phase_one's first sample,
# the fixture's own start as the timeline shows it.
origin=$(fact "phases-$main_tid" phase_one | awk '{ print $1 }')
[ -n "$origin" ] || fail "no sample of phase_one in the main thread's timeline"
assert_within "phase_one's first sample, from the start of sampling (ms)" "$origin" 0 250
check_phase() { # THREAD FUNCTION FIRST_MIN FIRST_MAX LAST_MIN LAST_MAX (ms from ORIGIN)
	local got first last cpu
	got=$(fact "$1" "$2")
	[ -n "$got" ] || fail "$1: no sample of $2 in its timeline"
	set -- "$@" $got
	first=$(awk -v a="$7" -v o="$origin" 'BEGIN { printf "%.1f", a - o }')
	last=$(awk -v a="$8" -v o="$origin" 'BEGIN { printf "%.1f", a - o }')
	cpu=$9
	want=$(awk -v f="$2" '$1 == "cpu" && $2 == f { printf "%.1f\n", $3 / 1e6 }' "$T/cs.out")
	[ -n "$want" ] || fail "phases reported no CPU for $2: $(cat "$T/cs.out")"
	# A phase is 600 ms of the clock on the wall; the time of it the
	# thread spent off a CPU (a loaded host: 600 ms less its CPU) may fall
	# at its start or its end, where no sample can be: the first sample
	# may come that much later, the last that much earlier (in CI: the
	# last at 533 ms for the quiet host's 540 to 660).
	off=$(awk -v w="$want" 'BEGIN { o = 600 - w; printf "%.1f\n", (o > 0) ? o : 0 }')
	note "$1 $2: from $first ms to $last ms after phase_one's first sample, $cpu ms of CPU, $off ms of the phase off a CPU"
	assert_within "$1 $2: start (ms)" "$first" "$3" "$(awk -v a="$4" -v o="$off" 'BEGIN { print a + o }')"
	assert_within "$1 $2: end (ms)" "$last" "$(awk -v a="$5" -v o="$off" 'BEGIN { print a - o }')" "$6"
	# 600 ms at 199 Hz are ~120 samples: 17% are 1.9 standard errors of
	# that count, (the weights are the kernel's counts, closer than that)
	assert_within "$1 $2: CPU (ms; the fixture's clock: $want)" "$cpu" \
		"$(awk -v w="$want" 'BEGIN { print w * 0.83 }')" "$(awk -v w="$want" 'BEGIN { print w * 1.17 }')"
}
check_phase "phases-$main_tid" phase_one 0 0 540 660
check_phase "phases-$main_tid" phase_two 520 660 1140 1300
check_phase "late-" late_work 230 380 840 960
# phase_two only after phase_one, in time
one=$(fact "phases-$main_tid" phase_one) two=$(fact "phases-$main_tid" phase_two)
awk -v a="${one#* }" -v b="${two%% *}" 'BEGIN { split(a, x, " "); exit !(x[1] <= b + 0.01) }' ||
	fail "phase_one ends at ${one#* } ms, after phase_two starts at ${two%% *} ms"
# the busiest thread is the one speedscope opens
active=$("$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["profiles"][d["activeProfileIndex"]]["name"])' "$T/out.speedscope.json")
assert_eq "the profile speedscope opens" "$active" "phases-$main_tid"

# -f speedscope to standard output: the same format, and only it (the
# program's own output goes to standard error)
run_csampler -q -F 99 -f speedscope -o - -- "$PROGS/phases" </dev/null
assert_eq "exit status with -f speedscope -o -" "$CS_STATUS" 0
"$PY" "$CHECK" "$T/cs.out" 10101010 "" $OFFICIAL >"$T/facts2" || fail "stdout: $(tail -1 "$T/facts2")"
grep -q "^fact phases-[0-9]* phase_two " "$T/facts2" || fail "stdout: no phase_two in $(head -3 "$T/facts2")"
exit 0
