#!/bin/sh
# unwind_lld: a PIE linked by lld, whose executable PT_LOAD starts at a file
# offset that is not page aligned (so its mapping offset != p_offset), is
# unwound whole: main;lld_outer;lld_middle;lld_inner;lld_leaf.
. "$TESTS_SRCDIR/lib.sh"
need_root
need_cmd readelf

# The fixture must really exercise the case: linked by lld, text at an
# unaligned offset.
readelf -p .comment "$PROGS/lldhot" 2>/dev/null | grep -q 'Linker: .*LLD' ||
	harness "lldhot was not linked by lld: $(readelf -p .comment "$PROGS/lldhot" 2>&1 | tr '\n' ' ')"
text_off=$(readelf -lW "$PROGS/lldhot" | awk '$1 == "LOAD" && $0 ~ / R E / { print $2; exit }')
[ -n "$text_off" ] || harness "no executable PT_LOAD in lldhot"
[ $((text_off % 4096)) -ne 0 ] || harness "lldhot text PT_LOAD offset $text_off is page aligned"
readelf -hW "$PROGS/lldhot" | grep -q 'DYN (' || harness "lldhot is not a PIE"
note "lldhot: text PT_LOAD at file offset $text_off"

start_fixture lldhot 60
run_csampler -F 199 -d 3 -o "$T/out.folded" -p "$FIXTURE_PID"
assert_eq "exit status" "$CS_STATUS" 0
total=$(folded_total "$T/out.folded")
[ "$total" -gt 0 ] || fail "no samples"
# whole: from _start through main, wherever the sample landed (a tick can
# find the thread in lld_inner itself, or in main's clock read: CI saw 2
# of 138 there, whole, and counted them as not)
assert_folded_has "$T/out.folded" '^_start;([^;]+;)*main;lld_outer;lld_middle;lld_inner;lld_leaf [0-9]+$'
whole=$(awk '{ c = $NF; s = $0; sub(/ [0-9]+$/, "", s)
	if (s ~ /^_start;([^;]+;)*main(;|$)/) w += c }
	END { print w + 0 }' "$T/out.folded")
note "$whole of $total samples: _start...main..."
awk -v w="$whole" -v t="$total" 'BEGIN { exit !(100 * w >= 99 * t) }' ||
	fail "only $whole of $total samples unwound whole: $(sort -t' ' -k2 -rn "$T/out.folded" | head -3)"
exit 0
