#!/bin/sh
# write_svg_view: csampler's flame graph SVG opened in headless Chromium,
# as a user opens it: no script error; a frame's mouse-over says its name,
# its samples and share, where its function is (file:line in module), and its width is that share of the graph; a
# click zooms it to the full width and hides a sibling. A --diff graph
# (two test profiles whose shares are known) colors the frame that shrank
# blue and the one that grew red, their mouse-over gives the base's share
# and the change, and zooms as well. Skips, saying why, without Chromium
# or playwright-core (scripts/install-deps installs both).
. "$TESTS_SRCDIR/lib.sh"
need_cmd node
need_cmd python3
VIEW="$TESTS_SRCDIR/speedscope/svgview.js"
[ -d "$TESTS_SRCDIR/speedscope/node_modules/playwright-core" ] ||
	skip "playwright-core is not installed (cd tests/speedscope && npm ci)"
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || skip "needs Chromium (Debian chromium)"

# view FILE NAME...: what Chromium shows, in $T/view.out
view() {
	st=0
	timeout -k 5 90 node "$VIEW" "$@" >"$T/view.out" 2>&1 || st=$?
	[ "$st" = 2 ] && skip "the viewer could not start: $(tail -1 "$T/view.out")"
	[ "$st" = 0 ] || fail "svgview.js failed ($st): $(tail -3 "$T/view.out")"
	! grep '^error' "$T/view.out" || fail "the SVG's script reported errors"
}
# field KIND NAME N: field N of the view's line KIND NAME
field() { awk -v k="$1" -v n="$2" -v i="$3" '$1 == k && $2 == n { print $i; exit }' "$T/view.out"; }
FULL=1180.0   # the graph's width: 1200 pixels less the two side pads

run_csampler -q -F 499 -o "$T/hot.svg" -o "$T/hot.folded" -- "$PROGS/hot" 1
assert_eq "recording: status" "$CS_STATUS" 0
total=$(folded_total "$T/hot.folded")
view "$T/hot.svg" a1 leaf_a leaf_b
n=$(folded_count "$T/hot.folded" ';leaf_a$')
pct=$(awk -v n="$n" -v t="$total" 'BEGIN { printf "%.2f", 100 * n / t }')
# (name, samples, share, then where: its source file and first line, its
# module; the line as the fixture's source has it)
line=$(grep -n 'leaf_a(unsigned long long x)' "$TESTS_SRCDIR/progs/hot.c" | cut -d: -f1)
[ -n "$line" ] || harness "no leaf_a in $TESTS_SRCDIR/progs/hot.c"
assert_match "leaf_a's mouse-over" "$(field frame leaf_a 5)" \
	"^leaf_a_\\(${n}_samples,_${pct}%\\)_—_(.*/)?hot\\.c:${line}_in_hot\$"
width=$(awk -v n="$n" -v t="$total" -v f="$FULL" 'BEGIN { printf "%.1f", f * n / t }')
assert_within "leaf_a's width, pixels" "$(field frame leaf_a 4)" \
	"$(awk -v w="$width" 'BEGIN { print w - 0.2 }')" "$(awk -v w="$width" 'BEGIN { print w + 0.2 }')"
assert_eq "a1 zoomed: its width" "$(field zoom a1 3)" "$FULL"
# leaf_a is most of a1's samples (some stop in a link of the chain)
na1=$(folded_count "$T/hot.folded" ';a1(;|$)')
width=$(awk -v n="$n" -v t="$na1" -v f="$FULL" 'BEGIN { printf "%.1f", f * n / t }')
assert_within "a1 zoomed: leaf_a's width (its share of a1)" "$(field zoomed leaf_a 3)" \
	"$(awk -v w="$width" 'BEGIN { print w - 0.2 }')" "$(awk -v w="$width" 'BEGIN { print w + 0.2 }')"
assert_eq "a1 zoomed: leaf_b's width (another chain)" "$(field zoomed leaf_b 3)" "0.0"

# --diff: alpha 60% -> 30% (shrank), beta 40% -> 70% (grew)
python3 "$TESTS_SRCDIR/mkpprof.py" cpu "$T/base.pb.gz" 'main;work;alpha=60' 'main;work;beta=40' &&
	python3 "$TESTS_SRCDIR/mkpprof.py" cpu "$T/new.pb.gz" 'main;work;alpha=30' 'main;work;beta=70' ||
	harness "mkpprof.py failed"
run_csampler -q -i "$T/base.pb.gz" -i "$T/new.pb.gz" --diff -o "$T/diff.svg"
assert_eq "diff: status" "$CS_STATUS" 0
view "$T/diff.svg" alpha beta work
assert_eq "alpha's mouse-over" "$(field frame alpha 5)" "alpha_(30_samples,_30.00%;_base_60.00%,_-30.00)"
assert_eq "beta's mouse-over" "$(field frame beta 5)" "beta_(70_samples,_70.00%;_base_40.00%,_+30.00)"
assert_eq "work's mouse-over" "$(field frame work 5)" "work_(100_samples,_100.00%;_base_100.00%,_+0.00)"
# blue where it shrank, red where it grew, grey where it did not change
echo "$(field frame alpha 3)" | awk -F'[(),]' '{ exit !($4 > $2 + 100) }' ||
	fail "alpha (shrank) is not blue: $(field frame alpha 3)"
echo "$(field frame beta 3)" | awk -F'[(),]' '{ exit !($2 > $4 + 100) }' ||
	fail "beta (grew) is not red: $(field frame beta 3)"
echo "$(field frame work 3)" | awk -F'[(),]' '{ exit !($2 == $3 && $3 == $4) }' ||
	fail "work (the same) is not grey: $(field frame work 3)"
assert_eq "alpha's width (30% of the new)" "$(field frame alpha 4)" "354.0"
assert_eq "alpha zoomed: its width" "$(field zoom alpha 3)" "$FULL"
assert_eq "alpha zoomed: beta's width" "$(field zoomed beta 3)" "0.0"
exit 0
