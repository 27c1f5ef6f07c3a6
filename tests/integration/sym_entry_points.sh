#!/bin/sh
# sym_entry_points: the start stubs at the ELF entry points are named where
# no symbol names them: ld.so's _start and _dl_start_user (the root of every
# stack of a program being linked: it was 'ld-linux-x86-64.so.2+0x1ab77'),
# and a stripped program's _start (Debian's /bin/true: 'true+0x23f0').
# Recognized by their code (glibc's, the ABI's), never guessed elsewhere.
# (500 processes symbolized: under the sanitizers beside the quick group on
# a slower host, csampler needed more than the 60 s run_csampler allows)
TEST_TIMEOUT=240
. "$TESTS_SRCDIR/lib.sh"
need_root

CS_TIMEOUT=200 run_csampler -F 999 --children -o "$T/t.folded" -- sh -c 'for i in $(seq 500); do /bin/true; done'
assert_eq "status" "$CS_STATUS" 0
roots=$(awk '{ split($1, f, ";"); print f[1] }' "$T/t.folded" | sort | uniq -c | sort -rn)
note "roots: $(echo "$roots" | head -6 | tr '\n' ' ')"
if echo "$roots" | grep -Eq ' (ld-linux[^ ]*|true)\+0x'; then
	fail "an entry stub left unnamed: $(echo "$roots" | grep -E ' (ld-linux[^ ]*|true)\+0x')"
fi
assert_folded_has "$T/t.folded" '^_start;_dl_start(;| )'
exit 0
