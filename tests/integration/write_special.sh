#!/bin/sh
# write_special: an output path naming a device or a FIFO is written into,
# not replaced: the atomic temp-file-and-rename is only for regular files.
# (A private null device stands in for /dev/null, so a regression cannot
# break the machine's own.)
. "$TESTS_SRCDIR/lib.sh"
need_root

mknod "$T/null.folded" c 1 3 || skip "cannot make a device node here"
run_csampler -q -F 199 -o "$T/null.folded" -- "$PROGS/hot" 0.5
assert_eq "exit status (device)" "$CS_STATUS" 0
[ -c "$T/null.folded" ] || fail "the device node was replaced by a regular file"
ls "$T" | grep -q 'null.folded\.' && fail "a temporary file was left next to the device"

mkfifo "$T/pipe.folded"
cat "$T/pipe.folded" >"$T/from-pipe" &
reader=$!
run_csampler -q -F 199 -o "$T/pipe.folded" -- "$PROGS/hot" 1.5
wait "$reader"
assert_eq "exit status (FIFO)" "$CS_STATUS" 0
[ -p "$T/pipe.folded" ] || fail "the FIFO was replaced by a regular file"
assert_folded_has "$T/from-pipe" 'leaf_a [0-9]+$'
exit 0
