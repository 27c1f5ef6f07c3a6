#!/bin/sh
# sym_dlopen_reuse: a program that loads libalpha.so, runs it, unloads it,
# then libbravo.so (the same code under other names, at other offsets: a
# function never called, *_padding, first in bravo and last in alpha), in
# turn, each loading at the address the other left. Every address in that
# range was named after the library mapped there at the end: alpha_hot 85%,
# bravo_hot 0% where perf saw 30.5/29.7. Each sample's addresses now carry
# the mapping they were in, and once a process unloaded code its mappings
# are read at each stop, while the thread is stopped (read after it
# resumed, at the unwinding, they named 5% of the samples by the library
# loaded since: *_padding). So the split between the two follows the
# fixture's own account of the CPU it spent in each, within 3 standard
# errors (and 4 points), no sample names a library's function by the
# other's code, and none is named *_padding (also read at each stop for a
# second after a process is first seen or its mappings change: attached,
# 0.1-0.9% were *_padding while csampler read them every 10 ms until it
# first saw a library gone). 20 runs of 20 had none at 999 Hz. Attached
# too (in CI once 0 of 392 samples alpha's: the two libraries' mappings had
# one tag, 63 mappings apart; test_procmaps tests that they no longer can;
# and again, 0 of 405 under ASAN, 2 to 3 runs in 8 with two busy loops:
# the file of a mapping listed while the fixture ran was opened through
# /proc/PID/map_files after it had mapped the other library there, and
# kept; a file whose inode is not the listing's is refused now, 10 of 10;
# and under ASAN beside two busy loops, 4 runs in 12 with 1 to 6 samples
# *_padding: a first read of the mappings that took 290 us of CPU turned
# the reads at each stop off, now judged from 8 reads: 0 in 20).
. "$TESTS_SRCDIR/lib.sh"
need_root

F=$T/out.folded
run_csampler -F 499 -o "$F" -- "$PROGS/swaplibs" 3
assert_eq "exit status" "$CS_STATUS" 0
read -r _ rounds _ same _ alpha _ bravo <<EOT
$(grep '^rounds ' "$T/cs.out")
EOT
[ "$same" = yes ] || skip "the two libraries did not load at one address here ($rounds rounds)"
want=$(awk -v a="$alpha" -v b="$bravo" 'BEGIN { printf "%.1f", 100 * a / (a + b) }')
note "$rounds rounds; the fixture's CPU: alpha $alpha ns, bravo $bravo ns ($want% alpha)"
both=$T/both.folded
grep -E ';(alpha|bravo)_(hot|leaf)( |;)' "$F" >"$both"
total=$(folded_total "$both")
[ "$total" -ge 100 ] || fail "only $total samples in the libraries: $(sort -t' ' -k2 -rn "$F" | head -3)"
se=$(share_se 3 "$want" "$total")
tol=$(awk -v s="$se" 'BEGIN { print (s > 4) ? s : 4 }')
assert_share "$both" ';alpha_hot;alpha_leaf$' "$want" "$tol"
assert_share "$both" ';bravo_hot;bravo_leaf$' "$(awk -v w="$want" 'BEGIN { print 100 - w }')" "$tol"
# never one library's function under the other's, nor a library's code
# named by the other's file
grep -Eq 'alpha_hot;bravo|bravo_hot;alpha' "$F" && fail "mixed stacks: $(grep -E 'alpha_hot;bravo|bravo_hot;alpha' "$F" | head -2)"
assert_eq "samples named *_padding (never called): $(grep _padding "$F" | head -3 | tr '\n' '|')" "$(folded_count "$F" '_padding')" 0

# attached to it while it runs
start_fixture swaplibs 8
sleep 0.5
run_csampler -F 499 -d 2 -o "$T/att.folded" -p "$FIXTURE_PID"
assert_eq "attached: exit status" "$CS_STATUS" 0
grep -E ';(alpha|bravo)_(hot|leaf)( |;)' "$T/att.folded" >"$both"
total=$(folded_total "$both")
# (the fixture spends about as much in each: its own account is printed
# only at its end)
se=$(share_se 3 50 "$total")
tol=$(awk -v s="$se" 'BEGIN { print (s > 6) ? s : 6 }')
assert_share "$both" ';alpha_hot;alpha_leaf$' 50 "$tol"
assert_eq "attached: samples named *_padding" "$(folded_count "$T/att.folded" '_padding')" 0
exit 0
