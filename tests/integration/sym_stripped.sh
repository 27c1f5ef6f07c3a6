#!/bin/sh
# sym_stripped: a stripped program without a debug file is named by
# address (hot+0x...), as before, but now with one line saying why and how
# to get its symbols (its -dbgsym/-dbg package, the build-id debug file,
# DEBUGINFOD_URLS), once however many of its addresses were sampled; the
# same program unstripped, and the libraries with symbols, get no such
# line.
. "$TESTS_SRCDIR/lib.sh"
need_root
need_cmd strip

cp "$PROGS/hot" "$T/hot-stripped" && strip "$T/hot-stripped" || harness "cannot strip a copy of hot"
id=$(readelf -n "$T/hot-stripped" 2>/dev/null | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
run_csampler -F 199 -o "$T/s.folded" -- "$T/hot-stripped" 0.5
assert_eq "exit status" "$CS_STATUS" 0
assert_folded_has "$T/s.folded" ';hot-stripped\+0x[0-9a-f]+ [0-9]+$'
assert_eq "lines about missing symbols" "$(grep -c '^csampler: no symbols in' "$T/cs.err")" 1
want="^csampler: no symbols in $T/hot-stripped \\(stripped, and no debug file found\\): its samples are named by address; install its debug symbols \\(its package's -dbgsym or -dbg"
[ -n "$id" ] && want="$want, the debug file /usr/lib/debug/\\.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-)\\.debug"
assert_match "its message" "$(grep '^csampler: no symbols in' "$T/cs.err")" "$want\\), or set DEBUGINFOD_URLS\$"
run_csampler -F 199 -o "$T/u.folded" -- "$PROGS/hot" 0.5
assert_eq "exit status (unstripped)" "$CS_STATUS" 0
grep '^csampler: no symbols in' "$T/cs.err" && fail "a line about symbols for a program that has them"
exit 0
