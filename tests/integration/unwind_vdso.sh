#!/bin/sh
# unwind_vdso: samples in the vdso (a clock_gettime loop) unwind out of the
# vdso, with the CFI read from the vdso image, through libc's clock_gettime
# into main.
. "$TESTS_SRCDIR/lib.sh"
need_root

start_fixture vdsoloop 60
grep -q '\[vdso\]' "/proc/$FIXTURE_PID/maps" || skip "no vdso in this kernel"
run_csampler -F 199 -d 3 -o "$T/out.folded" -p "$FIXTURE_PID"
assert_eq "exit status" "$CS_STATUS" 0
F=$T/out.folded
# libc's clock_gettime calls the vdso's (__vdso_clock_gettime or its alias)
via='(^|;)main;[^;]*clock_gettime[^;]*;(__vdso_)?clock_gettime$'
counts=$(awk -v re="$via" '{ c = $NF; s = $0; sub(/ [0-9]+$/, "", s); t += c
	if (s ~ re) v += c; if (s ~ /(^|;)main(;|$)/) m += c }
	END { print t + 0, v + 0, m + 0 }' "$F")
set -- $counts
note "$1 samples: $2 in the vdso unwound to main, $3 reach main"
[ "$1" -gt 0 ] || fail "no samples"
awk -v t="$1" -v v="$2" 'BEGIN { exit !(2 * v >= t) }' ||
	fail "fewer than half the samples unwound out of the vdso: $(sort -t' ' -k2 -rn "$F" | head -3)"
awk -v t="$1" -v m="$3" 'BEGIN { exit !(100 * m >= 99 * t) }' ||
	fail "only $3 of $1 samples reach main: $(grep -v ';main;' "$F" | head -3)"
exit 0
