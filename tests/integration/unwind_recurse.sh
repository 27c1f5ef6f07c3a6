#!/bin/sh
# unwind_recurse: a 300-frame recursion (-O2 -fomit-frame-pointer) is unwound
# whole, from bottom_spin through exactly 300 recurse frames to main; with a
# stack window or a depth bound too small for it, every sample is marked
# truncated instead of being cut silently; the default window grows for a
# process whose stacks it cut.
. "$TESTS_SRCDIR/lib.sh"
need_root

# frames_hist FILE: "RECURSE-FRAMES MAIN? LEAF COUNT" per line of a folded file.
frames_hist() {
	awk '{ c = $NF; s = $0; sub(/ [0-9]+$/, "", s); n = split(s, f, ";"); r = 0; m = 0
		for (i = 1; i <= n; i++) { if (f[i] == "recurse") r++; if (f[i] == "main") m = 1 }
		print r, m, f[n], c }' "$1"
}

start_fixture recurse 300 60
run_csampler -F 199 -d 3 -o "$T/whole.folded" -p "$FIXTURE_PID"
assert_eq "exit status" "$CS_STATUS" 0
total=$(folded_total "$T/whole.folded")
[ "$total" -gt 0 ] || fail "no samples"
# (a sample may land in bottom_spin's clock read: the fixture's now, glibc's
# clock_gettime or the vDSO's under it, a whole stack too: 2 of 128 in one
# CI run, 1 of 89 in now in a sanitizer build's)
whole=$(frames_hist "$T/whole.folded" | awk '$1 == 300 && $2 == 1 &&
	($3 == "bottom_spin" || $3 == "now" || $3 ~ /clock_gettime/) { s += $4 } END { print s + 0 }')
note "$whole of $total samples: main, 300 x recurse, bottom_spin (or its clock read)"
awk -v w="$whole" -v t="$total" 'BEGIN { exit !(100 * w >= 99 * t) }' ||
	fail "only $whole of $total samples unwound whole: $(frames_hist "$T/whole.folded" | sort | uniq -c | head -5)"
assert_folded_has "$T/whole.folded" '^_start;([^;]+;)*main;(recurse;){300}bottom_spin [0-9]+$'
grep -q '^\[' "$T/whole.folded" && fail "stacks marked incomplete: $(grep '^\[' "$T/whole.folded" | cut -c1-120 | head -3)"

# 300 frames of about 80 bytes do not fit a 4 KiB window: all truncated
run_csampler -v -F 199 -d 1 --stack-window 4k -o "$T/window.folded" -o "$T/window.pb.gz" \
	-p "$FIXTURE_PID"
assert_eq "exit status (4k window)" "$CS_STATUS" 0
total=$(folded_total "$T/window.folded")
[ "$total" -gt 0 ] || fail "no samples with a 4k window"
marked=$(folded_count "$T/window.folded" '^\[truncated\];')
assert_eq "samples marked truncated with a 4k window" "$marked" "$total"
grep -Eq '(^|;)main(;| )' "$T/window.folded" && fail "a 4k window reached main?"
# (the unwind counters are of the periods taken; the outputs give the
# thread the kernel's account of its CPU, within a period or two of them)
taken=$(sed -nE 's/.*, ([0-9]+) periods taken$/\1/p' "$T/cs.err")
assert_match "end-of-run statistics" "$(cat "$T/cs.err")" "window $taken, $total truncated"
# where they stop and why, without -v
assert_match "where the stacks stop (4k window)" "$(grep 'of stacks stop in' "$T/cs.err")" \
	'^csampler: 100% of stacks stop in recurse \(recurse\): the stack is larger than the 4 KiB copied \(--stack-window\): raise it$'
# in pprof too every truncated stack ends in a [truncated] root frame (a
# label alone left pprof's graphs showing the outermost frame as a root)
if command -v go >/dev/null 2>&1; then
	need_go
	go tool pprof -traces "$T/window.pb.gz" >"$T/traces" 2>"$T/pprof.err" ||
		fail "go tool pprof -traces: $(cat "$T/pprof.err")"
	counts=$(awk '/^-+\+-+$/ { if (in_trace && last != "") { n++; if (last == "[truncated]") r++ }
			in_trace = 1; last = ""; next }
		NF { last = $NF } END { print n + 0, r + 0 }' "$T/traces")
	note "pprof -traces: traces, ending in [truncated]: $counts"
	assert_match "pprof traces ending in [truncated]" "$counts" '^([1-9][0-9]*) \1$'
else
	note "no go: the pprof output's [truncated] frame not checked"
fi

# --max-depth 100: 99 recurse frames under the leaf, marked truncated
run_csampler -v -F 199 -d 1 --max-depth 100 -o "$T/depth.folded" -p "$FIXTURE_PID"
assert_eq "exit status (max-depth 100)" "$CS_STATUS" 0
total=$(folded_total "$T/depth.folded")
[ "$total" -gt 0 ] || fail "no samples with --max-depth 100"
# every sample is cut at 100 frames; nearly all of them in bottom_spin (a
# sample may land in its clock read: glibc's clock_gettime, one frame
# deeper, and the vdso's under it, two: 97 recurse frames; a CI run saw one)
deep=$(frames_hist "$T/depth.folded" | awk '$1 < 97 { s += $4 } END { print s + 0 }')
assert_eq "samples shorter than the cut" "$deep" 0
cut=$(frames_hist "$T/depth.folded" | awk '$1 == 99 && $3 == "bottom_spin" { s += $4 } END { print s + 0 }')
# (2% of them elsewhere, and 2 more: a loaded machine gives few samples,
# and one in the clock read was 1 of 33)
awk -v c="$cut" -v t="$total" 'BEGIN { exit !(t - c <= 0.02 * t + 2) }' ||
	fail "samples cut at 100 frames in bottom_spin: $cut of $total"
assert_eq "samples marked truncated at max-depth" "$(folded_count "$T/depth.folded" '^\[truncated\];')" "$total"
assert_match "where the stacks stop (max-depth 100)" "$(grep 'of stacks stop in' "$T/cs.err")" \
	'^csampler: 100% of stacks stop in recurse \(recurse\): the stack is deeper than --max-depth 100: raise it$'
# whole stacks: no such line
run_csampler -F 199 -d 0.5 -o "$T/w2.folded" -p "$FIXTURE_PID"
grep 'of stacks stop in' "$T/cs.err" && fail "a stop place named for whole stacks"
kill "$FIXTURE_PID"

# 2000 frames (about 125 KB) do not fit the default 64 KiB window: it grows
# for the process once a stack was cut by it, at once to what the stack in
# use takes (128 or 256 KiB: with the environment above main), so only the
# first sample is cut (0-1 of 100-600; every one was before); with
# --stack-window given, the window is that and stays so. The default
# --max-depth (4096) holds them; 1024 did not (every stack cut).
start_fixture recurse 2000 60
run_csampler -v -F 199 -d 3 -o "$T/deep.folded" -p "$FIXTURE_PID"
assert_eq "exit status (2000 frames)" "$CS_STATUS" 0
total=$(folded_total "$T/deep.folded")
whole=$(frames_hist "$T/deep.folded" | awk '$1 == 2000 && $2 == 1 { s += $4 } END { print s + 0 }')
cut=$(folded_count "$T/deep.folded" '^\[truncated\];')
note "2000 frames, default window: $whole of $total whole, $cut cut"
[ "$total" -ge 20 ] || fail "only $total samples of 2000 frames"
# (the counts are each thread's CPU: a sample stands for TOTAL / TAKEN
# periods, about 1, but 3 under valgrind, which misses ticks)
taken=$(sed -n 's/.* \([0-9]*\) periods taken$/\1/p' "$T/cs.err")
[ -n "$taken" ] || fail "no periods taken in -v's line: $(cat "$T/cs.err")"
most=$(awk -v t="$total" -v k="$taken" 'BEGIN { s = (k > 0) ? t / k : 1; if (s < 1) s = 1
	printf "%d\n", 2 * s + 0.5 }')
[ "$cut" -le "$most" ] ||
	fail "$cut of $total stacks of 2000 frames cut (expected at most the first 2 samples: $most periods; $taken taken)"
assert_eq "stacks of 2000 frames whole or cut" "$((whole + cut))" "$total"
assert_match "the window grew" "$(cat "$T/cs.err")" "stack window grown to (128|256) KiB"
run_csampler -F 199 -d 1 --max-depth 4096 --stack-window 64k -o "$T/fixed.folded" -p "$FIXTURE_PID"
assert_eq "exit status (--stack-window 64k)" "$CS_STATUS" 0
assert_eq "--stack-window 64k: stacks of 2000 frames cut" \
	"$(folded_count "$T/fixed.folded" '^\[truncated\];')" "$(folded_total "$T/fixed.folded")"
exit 0
