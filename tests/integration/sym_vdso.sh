#!/bin/sh
# sym_vdso: samples in the vdso are named from the vdso's own symbol table
# (every address a symbol of it covers).
. "$TESTS_SRCDIR/lib.sh"
need_root

start_fixture vdsoloop 30
grep -q '\[vdso\]' "/proc/$FIXTURE_PID/maps" || skip "no vdso in this kernel"
run_csampler -F 199 -d 2 -o "$T/out.folded" -p "$FIXTURE_PID"
assert_eq "exit status" "$CS_STATUS" 0
assert_folded_has "$T/out.folded" ';(__vdso_)?clock_gettime( [0-9]+$|;)'
# (an unnamed frame is one the vdso has no symbol for: see the helper)
bad=$(vdso_named_unnamed "$FIXTURE_PID" "$T/out.folded")
[ -z "$bad" ] || fail "unnamed vdso frames the vdso's symbols cover: $bad"
n=$(folded_count "$T/out.folded" '\[vdso\]\+0x')
[ "$n" = 0 ] || note "$n samples in vdso code no symbol covers: $(grep -o '\[vdso\]+0x[0-9a-f]*' "$T/out.folded" | sort -u | tr '\n' ' ')"
exit 0
