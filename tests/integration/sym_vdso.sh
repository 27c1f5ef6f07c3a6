#!/bin/sh
# sym_vdso: samples in the vdso are named from the vdso's own symbol table.
. "$TESTS_SRCDIR/lib.sh"
need_root

start_fixture vdsoloop 30
grep -q '\[vdso\]' "/proc/$FIXTURE_PID/maps" || skip "no vdso in this kernel"
run_csampler -F 199 -d 2 -o "$T/out.folded" -p "$FIXTURE_PID"
assert_eq "exit status" "$CS_STATUS" 0
assert_folded_has "$T/out.folded" ';(__vdso_)?clock_gettime( [0-9]+$|;)'
grep -q '\[vdso\]+0x' "$T/out.folded" && fail "unnamed vdso frames: $(grep '\[vdso\]' "$T/out.folded" | head -3)"
exit 0
