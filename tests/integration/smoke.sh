#!/bin/sh
# smoke: csampler launches the hot fixture and the folded output shows its
# three chains reaching main, in roughly the known 50/30/20 split.
. "$TESTS_SRCDIR/lib.sh"
need_root

run_csampler -F 999 -o "$T/out.folded" -- "$PROGS/hot" 3
assert_eq "exit status" "$CS_STATUS" 0
assert_folded_has "$T/out.folded" '^_start;.*main;.*work_round;a1;a2;a3;a4;a5;a6;a7;a8;a9;a10;leaf_a [0-9]+$'
assert_folded_has "$T/out.folded" 'work_round;b1;b2;b3;b4;b5;b6;b7;b8;b9;b10;leaf_b [0-9]+$'
assert_folded_has "$T/out.folded" 'work_round;c1;c2;c3;c4;c5;c6;c7;c8;c9;c10;leaf_c [0-9]+$'
# (5 standard errors: 5 points at the 3000 samples of a quiet machine; a
# busy one gives fewer, the test keeps its confidence)
assert_share "$T/out.folded" 'leaf_a$' 50 5se
assert_share "$T/out.folded" 'leaf_b$' 30 5se
assert_share "$T/out.folded" 'leaf_c$' 20 5se
exit 0
