#!/bin/sh
# write_speedscope_view: speedscope itself (its npm release, in headless
# Chromium) opens csampler's speedscope file of the phases fixture: no
# error, the busiest thread opened first, and its Sandwich view shows
# phase_one and phase_two with the CPU time the file gives them (to the
# viewer's rounding). Skips, saying why, without Chromium or the npm
# packages (scripts/install-deps installs both).
. "$TESTS_SRCDIR/lib.sh"
need_root
need_cmd node
VIEW="$TESTS_SRCDIR/speedscope/view.js"
[ -d "$TESTS_SRCDIR/speedscope/node_modules/speedscope" ] ||
	skip "speedscope's npm package is not installed (cd tests/speedscope && npm ci)"
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || skip "needs Chromium (Debian chromium)"

run_csampler -F 199 -o "$T/out.speedscope.json" -- "$PROGS/phases" </dev/null
assert_eq "exit status ($(cat "$T/cs.err"))" "$CS_STATUS" 0
main_tid=$(sed -n 's/^ready //p' "$T/cs.out")
[ -n "$main_tid" ] || fail "no ready line from phases: $(cat "$T/cs.out")"

st=0
timeout -k 5 90 node "$VIEW" "$T/out.speedscope.json" "$T/view.png" >"$T/view.out" 2>&1 || st=$?
[ "$st" = 2 ] && skip "the viewer could not start: $(tail -1 "$T/view.out")"
[ "$st" = 0 ] || fail "view.js failed ($st): $(tail -3 "$T/view.out")"
! grep '^error' "$T/view.out" || fail "speedscope reported errors"
# a profile per thread and name: phases and late, and where the late
# thread was sampled before phases named it, a third one under its first
# name, "phases" (CI once, under ASAN)
names=$(node -e 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).profiles.forEach((p) => console.log(p.name))' \
	"$T/out.speedscope.json" | sort | tr '\n' ' ')
late_tid=$(echo "$names" | tr ' ' '\n' | sed -n 's/^late-\([0-9]*\)$/\1/p')
[ -n "$late_tid" ] || fail "no profile of the late thread: $names"
nprof=2
case "$names" in
"late-$late_tid phases-$main_tid ") ;;
"late-$late_tid phases-$late_tid phases-$main_tid "|"late-$late_tid phases-$main_tid phases-$late_tid ") nprof=3 ;;
*) fail "thread profiles in the file: $names (main thread $main_tid)" ;;
esac
assert_match "the profile speedscope opened" "$(sed -n 's/^title //p' "$T/view.out")" \
	"^phases-$main_tid \\(1/$nprof\\)$"

# the CPU the file gives FUNCTION in the main thread's profile, in ns
file_cpu() {
	node -e '
		const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
		const p = d.profiles[d.activeProfileIndex];
		const f = d.shared.frames.findIndex((x) => x.name === process.argv[2]);
		let w = 0;
		p.samples.forEach((s, i) => { if (s.includes(f)) w += p.weights[i]; });
		console.log(w);' "$T/out.speedscope.json" "$1"
}
for fn in phase_one phase_two; do
	want=$(file_cpu "$fn")
	shown=$(awk -v f="$fn" '$1 == "row" && $2 == f {print $3}' "$T/view.out")
	[ -n "$shown" ] || fail "speedscope's Sandwich view has no row $fn: $(head -5 "$T/view.out")"
	note "$fn: speedscope shows $shown ns, the file has $want ns"
	had=$(awk -v f="$fn" '$1 == "cpu" && $2 == f { print $3 }' "$T/cs.out")
	[ -n "$had" ] || fail "phases reported no CPU for $fn: $(cat "$T/cs.out")"
	awk -v a="$shown" -v b="$want" -v c="$had" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > c * 0.7 && d <= b * 0.005 + 1e4) }' ||
		fail "$fn: speedscope shows $shown ns of CPU, the file has $want ns (the fixture had $had ns)"
done
exit 0
