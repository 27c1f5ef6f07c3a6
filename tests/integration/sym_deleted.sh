#!/bin/sh
# sym_deleted: a binary deleted while it runs still symbolizes (procmaps keeps
# it open through /proc/PID/map_files).
. "$TESTS_SRCDIR/lib.sh"
need_root

cp "$PROGS/hot" "$T/hot-deleted" || harness "copy"
"$T/hot-deleted" 30 >"$T/hot.out" 2>&1 &
FIXTURE_PID=$!
FIXTURE_PIDS="$FIXTURE_PIDS $FIXTURE_PID"
for i in $(seq 1 100); do grep -q '^ready' "$T/hot.out" && break; sleep 0.05; done
grep -q '^ready' "$T/hot.out" || harness "fixture never said ready"
rm -f "$T/hot-deleted"
grep -q 'hot-deleted (deleted)' "/proc/$FIXTURE_PID/maps" || harness "binary not shown as deleted"

run_csampler -F 199 -d 2 -o "$T/out.folded" -p "$FIXTURE_PID"
assert_eq "exit status" "$CS_STATUS" 0
assert_folded_has "$T/out.folded" ';main;.*work_round;a1;a2;a3;a4;a5;a6;a7;a8;a9;a10;leaf_a [0-9]+$'
grep -q 'hot-deleted+0x' "$T/out.folded" && fail "unsymbolized frames in the deleted binary"
exit 0
