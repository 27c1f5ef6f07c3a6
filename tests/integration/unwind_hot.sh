#!/bin/sh
# unwind_hot: attached to the hot fixture (-O2 -fomit-frame-pointer, so only
# DWARF CFI unwinds it) at 499 Hz for 8 s, the three chains split 50/30/20
# within 3 points, each stack is the whole chain, and at least 99% of the
# samples reach main. (At 199 Hz, 1592 samples, 3 points was 2.6 standard
# errors of the 30% share, and a CI run failed at 26.8%; six reruns gave
# 28.4-31.4. At 499 Hz it is 4.1.)
. "$TESTS_SRCDIR/lib.sh"
need_root

# share_of FILE ERE: percentage of samples whose stack (count removed) matches.
share_of() {
	AWK_RE=$2 awk '{ c = $NF; s = $0; sub(/ [0-9]+$/, "", s); t += c; if (s ~ ENVIRON["AWK_RE"]) m += c }
		END { if (t == 0) print "0"; else printf "%.2f\n", 100 * m / t }' "$1"
}
# assert_at_least WHAT PCT MIN
assert_at_least() {
	awk -v p="$2" -v m="$3" 'BEGIN { exit !(p >= m) }' || fail "$1: $2% < $3%"
	note "$1: $2% (>= $3%)"
}
# assert_near WHAT PCT WANT TOL
assert_near() {
	awk -v p="$2" -v w="$3" -v t="$4" 'BEGIN { d = p - w; if (d < 0) d = -d; exit !(d <= t) }' ||
		fail "$1: $2%, expected $3 +- $4"
	note "$1: $2% (expected $3 +- $4)"
}

start_fixture hot 60
# Shares need the fixture to get its CPU: make check runs tests in parallel,
# some with busy threads. Raise the fixture's priority (root; nice only).
renice -n -10 -p "$FIXTURE_PID" >/dev/null || harness "renice failed"
CSAMPLER_WRAPPER="${CSAMPLER_WRAPPER:-nice -n -10}"
run_csampler -F 499 -d 8 -o "$T/out.folded" -p "$FIXTURE_PID"
assert_eq "exit status" "$CS_STATUS" 0
F=$T/out.folded
note "$(grep -E 'samples' "$T/cs.err" | head -1)"
assert_folded_has "$F" '(^|;)main;worker;work_round;a1;a2;a3;a4;a5;a6;a7;a8;a9;a10;leaf_a [0-9]+$'
assert_folded_has "$F" '(^|;)main;worker;work_round;b1;b2;b3;b4;b5;b6;b7;b8;b9;b10;leaf_b [0-9]+$'
assert_folded_has "$F" '(^|;)main;worker;work_round;c1;c2;c3;c4;c5;c6;c7;c8;c9;c10;leaf_c [0-9]+$'
total=$(folded_total "$F")
# 3992 ticks; a busy shared machine may delay some (ticks missed), but far
# fewer than half.
[ "$total" -ge 2000 ] || fail "only $total samples in 8 s at 499 Hz"

assert_near "leaf_a share" "$(share_of "$F" ';a10;leaf_a$')" 50 3
assert_near "leaf_b share" "$(share_of "$F" ';b10;leaf_b$')" 30 3
assert_near "leaf_c share" "$(share_of "$F" ';c10;leaf_c$')" 20 3
assert_at_least "samples reaching main" "$(share_of "$F" '(^|;)main(;|$)')" 99
# every stack through a chain is the whole chain, root to leaf
assert_at_least "whole chains" \
	"$(share_of "$F" '^_start;[^;]+;[^;]+;main;worker;work_round;(a1;a2;a3;a4;a5;a6;a7;a8;a9;a10;leaf_a|b1;b2;b3;b4;b5;b6;b7;b8;b9;b10;leaf_b|c1;c2;c3;c4;c5;c6;c7;c8;c9;c10;leaf_c)$')" 99
exit 0
