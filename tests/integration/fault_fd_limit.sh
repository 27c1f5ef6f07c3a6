#!/bin/sh
# fault_fd_limit: csampler keeps a /proc file open per thread (two for one
# that runs). With a soft limit on open files below that (ulimit -Sn 256,
# 600 threads) it raises the soft limit to the hard one and samples the
# busy thread that starts last; with the hard limit that low too, it says
# so in one line naming the limit and the fix, and the descriptors go where
# the CPU is: the busy thread made last is sampled all the same, at the
# rate its CPU is worth (it was not: 0 samples and a hint about --idle). A
# launched program keeps the limit it was given.
. "$TESTS_SRCDIR/lib.sh"
need_root

n=600
start_fixture sleepers "$n"
kill -USR1 "$FIXTURE_PID"       # late-spin, the last thread made, spins from now

# soft limit low, hard limit high: raised, every thread followed
CS_STATUS=0
( ulimit -Sn 256 && exec "$CSAMPLER" -v -F 199 -d 3 -o "$T/soft.folded" -p "$FIXTURE_PID" ) \
	>"$T/cs.out" 2>"$T/cs.err" || CS_STATUS=$?
assert_eq "soft limit: status" "$CS_STATUS" 0
grep -q 'out of file descriptors' "$T/cs.err" && fail "soft limit: not raised: $(cat "$T/cs.err")"
assert_folded_has "$T/soft.folded" ';late_spin;late_leaf [0-9]+$'
seen=$(sed -nE 's/.*, ([0-9]+) threads seen,.*/\1/p' "$T/cs.err")
[ "${seen:-0}" -ge $((n + 2)) ] || fail "soft limit: threads seen '$seen', expected at least $((n + 2))"

# hard limit low too: one line that says why and what to do
CS_STATUS=0
# (the sleepers use no CPU: the process's is late-spin's)
cpu_mark "$FIXTURE_PID"
( ulimit -n 256 && exec "$CSAMPLER" -F 199 -d 1 -o "$T/hard.folded" -p "$FIXTURE_PID" ) \
	>"$T/cs.out" 2>"$T/cs.err" || CS_STATUS=$?
cpu_window "$FIXTURE_PID"
assert_eq "hard limit: status" "$CS_STATUS" 0
assert_eq "hard limit: warnings" "$(grep -c 'more threads than file descriptors' "$T/cs.err")" 1
assert_match "hard limit: message" "$(grep 'more threads than file descriptors' "$T/cs.err")" \
	"^csampler: more threads than file descriptors from thread [0-9]+ on \\(the limit is 256; csampler keeps 1 per thread, 2 for one that runs\\): the threads that run keep theirs, the others' files are opened at each read \\(slower\\); raise the limit with 'ulimit -n'"
[ -f "$T/hard.folded" ] && grep -q "^csampler: wrote $T/hard.folded " "$T/cs.err" ||
	fail "hard limit: no profile written: $(cat "$T/cs.err")"
# the busy thread, made last, past the limit: sampled as its CPU is worth
late=$(folded_count "$T/hard.folded" ';late_spin;late_leaf$')
# (none at all once in CI, at load 11, not reproduced beside eight busy
# loops: what csampler said, and where its samples went)
[ "$late" -gt 0 ] || fail "hard limit: no sample of late-spin: $(cat "$T/cs.err"); $(sort -t' ' -k2 -rn "$T/hard.folded" | head -5)"
assert_window_samples "hard limit: samples of late-spin" "$late" 199 1 1 60 103

# a launched program sees the soft limit it was started with
CS_STATUS=0
( ulimit -Sn 200 && exec "$CSAMPLER" -q -o "$T/l.folded" -- sh -c 'ulimit -Sn > "$1"' sh "$T/limit" ) \
	>"$T/cs.out" 2>"$T/cs.err" || CS_STATUS=$?
assert_eq "launch: status" "$CS_STATUS" 0
assert_eq "launched program's soft limit" "$(cat "$T/limit")" 200
exit 0
