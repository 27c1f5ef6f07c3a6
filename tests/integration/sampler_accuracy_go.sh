#!/bin/sh
# sampler_accuracy_go: a Go program (GOMAXPROCS=2) whose goroutines hand
# blocks to each other through channels and hash them with sha256, so the
# runtime parks and wakes its threads all the time (futex, usleep,
# osyield, epollwait). Launched under csampler at 199 Hz: the hashing
# (crypto/sha256) has at least 70% of the samples (or, where perf record
# -p on the same run puts less there, its share less 4 standard errors),
# and the runtime's wait
# and spin functions (as leaf) at most 8% (or where perf record -g -p on
# the same run puts more there, its share and 3 standard errors: its
# samples by their user leaf, as csampler's, so that a sample in futex is
# runtime.futex's; with two busy loops csampler had 9.0% there and failed
# the fixed bound, perf 11.4%; quiet 5.1% for perf's 8.3%). perf record -e cpu-clock on the
# same live run: 77% and 6%; before this was fixed, csampler said 60% and
# 27%. Its locations have file:line and inline frames (Go writes no
# .debug_aranges: the compile units are found by their own ranges), and
# the text report's rows the line each function starts at. The cumulative
# share of main.hashBlock is Go's own profile's.
. "$TESTS_SRCDIR/lib.sh"
need_root

need_go
GO111MODULE=off
export GO111MODULE
build_go gochan

F=$T/go.folded
export GOMAXPROCS=2
# (perf record -p on the same run, once csampler samples the program: the
# reference for where, below)
launch_bg_csampler gochan -v -F 199 -o "$F" -o "$T/go.pb.gz" -o "$T/go.txt" -- "$T/gochan" 4 "$T/own.prof"
perf_ref=
if command -v perf >/dev/null 2>&1; then
	perf record -q -e cpu-clock -F 199 -g -p "$LAUNCHED_PID" -o "$T/go.perf" >/dev/null 2>"$T/perf.err" &
	perf_ref=$!
fi
CS_STATUS=0
wait "$BG_CSAMPLER" || CS_STATUS=$?
assert_eq "exit status" "$CS_STATUS" 0
grep -q '^hashed [1-9]' "$T/cs.out" || fail "gochan did not finish: $(cat "$T/cs.out")"
note "$(grep -E '^csampler: [0-9]+ samples' "$T/cs.err")"
total=$(folded_total "$F")
# the program's whole CPU (its own getrusage at the end: csampler follows
# it from its first instruction) at 199 Hz; the samples are scaled to each
# thread's kernel-counted CPU, and a Go thread can end before the profile
# is built (its CPU then only its samples'): 10% either way
assert_samples "samples of the program" "$total" 199 "$(reported_cpu "$T/cs.out")" 90 110
WAITS_RE='runtime\.(futex|usleep|osyield|epollwait|nanosleep|sched_yield|notesleep|notetsleep|semasleep)'
waits=$(folded_count "$F" ";$WAITS_RE[^;]*\$")
hash=$(folded_count "$F" ';crypto/sha256\.')
note "runtime waits as leaf: $waits of $total; crypto/sha256: $hash"
# perf record -p's samples on the same run (-g: Go keeps frame pointers):
# how many, the part whose user leaf (the first frame outside the kernel:
# a sample in a system call goes to the function that made it, as
# csampler's do) is crypto/sha256's (its chains do not cross Go's
# assembly, so that is its share of the hashing as a leaf, below the
# stacks through it), and the part in the runtime's waits
pn= pleaf= pwait=
if [ -n "$perf_ref" ] && wait "$perf_ref" && [ -s "$T/go.perf" ]; then
	set -- $(perf script -i "$T/go.perf" -F ip,sym,dso 2>/dev/null |
		WAITS_RE=$WAITS_RE awk '
		     BEGIN { wre = ENVIRON["WAITS_RE"] }   # (-v would take its backslashes as escapes)
		     function done() { if (inside) { n++; if (leaf ~ /crypto\/sha256\./) s++; if (leaf ~ wre) w++ }
				       inside = 0; leaf = "" }
		     NF == 0 { done(); next }
		     { inside = 1; if (leaf == "" && $0 !~ /\[kernel\.kallsyms\]|\[unknown\]\)$/) leaf = $0 }
		     END { done(); printf "%d %.1f %.1f\n", n, (n > 0) ? 100 * s / n : 0, (n > 0) ? 100 * w / n : 0 }')
	[ "${1:-0}" -gt 0 ] && pn=$1 pleaf=$2 pwait=$3
fi
# the waits: at most 8%, or where the machine moved them, up to perf's
# share on the same run and 3 standard errors (beside two busy loops: 47
# of 550, 8.5%, where the runtime parks and spins more for the CPUs it
# waits for)
wmax=$(awk -v p="$pwait" -v n="$pn" -v t="$total" "$AWK_ROOT"'BEGIN { hi = 8
	if (p != "" && n > 0) { q = p / 100; e = p + 300 * root(q * (1 - q) * (1 / n + 1 / t)); if (e > hi) hi = e }
	printf "%.1f\n", hi }')
note "runtime waits: $(pct "$waits" "$total")% of csampler's samples; perf record -p's ${pwait:-(not run)}%; at most $wmax% expected"
awk -v w="$waits" -v t="$total" -v m="$wmax" 'BEGIN { exit !(100 * w <= m * t) }' ||
	fail "runtime wait/spin functions have $waits of $total samples (more than $wmax%; perf record -p's ${pwait:-not run}%)"
# the hashing: 70%, or where the machine moved it, down to perf's leaf
# share on the same run less 4 standard errors of the difference (CI's
# sanitizer stage, beside another test, 463 of 860 periods waiting for a
# CPU: 67.9%; quiet runs 72.7-74.8%). Four, not three: perf's window starts
# after csampler's, so the two differ by more than their sampling errors
# (beside two busy loops, csampler less perf over nine runs: -3.7 to +5.9
# points, spread 3.7 where one error is 2.9), and CI's share group once had
# 64.6% of 646 for perf's 72.3% of 589, three errors under
want=$(awk -v p="$pleaf" -v n="$pn" -v t="$total" "$AWK_ROOT"'BEGIN { lo = 70
	if (p != "" && n > 0) { q = p / 100; e = p - 400 * root(q * (1 - q) * (1 / n + 1 / t)); if (e < lo) lo = e }
	printf "%.1f\n", lo }')
note "crypto/sha256: $(pct "$hash" "$total")% of csampler's samples; perf record -p's leaf share ${pleaf:-(not run)}% of ${pn:-0}; at least $want% expected"
awk -v h="$hash" -v t="$total" -v w="$want" 'BEGIN { exit !(100 * h >= w * t) }' ||
	fail "crypto/sha256 has only $hash of $total samples (less than $want%; perf record -p's leaf share ${pleaf:-not run})"

# file:line and inline frames, though Go writes no .debug_aranges (libdw
# 0.188 finds no compile unit without them; before: ":0" everywhere)
"$GO" tool pprof -symbolize=none -raw "$T/go.pb.gz" >"$T/raw" 2>"$T/pprof.err" ||
	fail "go tool pprof -raw: $(cat "$T/pprof.err")"
grep -Eq '^ +[0-9]+: 0x[0-9a-f]+ M=1 main\.[^ ]+ [^ ]*/gochan\.go:[1-9][0-9]* ' "$T/raw" ||
	fail "no main.* location at gochan.go:LINE: $(grep -m3 ' main\.' "$T/raw")"
grep -Eq ' M=1 crypto/sha256\.block [^ ]*/sha256block_amd64\.s:[1-9][0-9]* ' "$T/raw" ||
	fail "no crypto/sha256.block location at its .s file and line: $(grep -m3 'sha256' "$T/raw")"
# the text report's row says where the function starts: Go's DWARF has no
# DW_AT_decl_line, and the row said "(gochan.go, gochan)"; now the line of
# the function's entry, its func line
fl=$(grep -n '^func hashBlock' "$TESTS_SRCDIR/progs/gochan.go" | cut -d: -f1)
grep -Eq "^ +[0-9]+ +[0-9.]+% +[0-9]+ +[0-9.]+%  main\.hashBlock  \(gochan\.go:$fl, gochan\)$" "$T/go.txt" ||
	fail "no text row main.hashBlock (gochan.go:$fl, gochan): $(grep 'main\.hashBlock' "$T/go.txt" | head -3)"
inlined=$(awk '/^Locations/ { on = 1; next } /^Mappings/ { on = 0 } on && NF > 0 && !/^ *[0-9]+: / { n++ } END { print n + 0 }' "$T/raw")
note "inline frames in the pprof locations: $inlined"
[ "$inlined" -gt 0 ] || fail "no location has an inline frame"

# main.hashBlock's cumulative share (every stack through it: whole stacks
# through channels, systemstack and the vDSO) against Go's own CPU profile
# of the same run (runtime/pprof, written by gochan): within 3 points or 3
# standard errors of the two samples (measured: 0.2 to 1.4 points; it was
# 52 points apart when Go's stacks stopped at crypto/sha256.block), or of
# perf record -p's on the same run where Go's own is further off
"$GO" tool pprof -top -cum -nodecount=2000 "$T/own.prof" >"$T/own.top" 2>"$T/pprof.err" ||
	fail "go tool pprof -top on Go's own profile: $(cat "$T/pprof.err")"
own=$(awk '$NF == "main.hashBlock" { sub(/%$/, "", $5); print $5 }' "$T/own.top")
own_n=$("$GO" tool pprof -raw "$T/own.prof" 2>/dev/null |
	awk '/^Samples/ { on = 1; next } /^Locations/ { on = 0 } on && /^ *[0-9]+ / { n += $1 } END { print n + 0 }')
[ -n "$own" ] && [ "$own_n" -gt 0 ] || fail "no main.hashBlock in Go's own profile: $(head -12 "$T/own.top")"
ours=$(folded_count "$F" '(^|;)main\.hashBlock(;|$)')
# perf record -p's share where it can tell (its call chains do not cross
# Go's assembly: the samples whose leaf is crypto/sha256's, plus the part of
# main.hashBlock outside it as csampler has it) widens the range where it
# lies outside Go's own: beside two busy loops Go's own profile put
# main.hashBlock 5-9 points over where perf and csampler agree (Go's 81.7,
# 80.3 and 80.6% where perf's crypto/sha256 leaf share was 75.2 and 74.9%
# and csampler's 75.2 and 74.0%)
pest=
if [ -n "$pleaf" ]; then
	leaf=$(folded_count "$F" ';crypto/sha256\.[^;]*$')
	pest=$(awk -v p="$pleaf" -v c="$ours" -v l="$leaf" -v t="$total" \
		'BEGIN { printf "%.1f\n", p + 100 * (c - l) / t }')
fi
awk -v o="$own" -v on="$own_n" -v c="$ours" -v t="$total" -v pe="$pest" "$AWK_ROOT"'
BEGIN {
	p = 100 * c / t; q = o / 100; lo = o; hi = o
	if (pe != "") { if (pe < lo) lo = pe; if (pe > hi) hi = pe }
	tol = 3 * 100 * root(q * (1 - q) * (1 / on + 1 / t)); if (tol < 3) tol = 3
	printf "# main.hashBlock cumulative: csampler %.1f%% (%d of %d), Go'"'"'s own %.1f%% (%d samples), perf record -p %s; tolerance %.1f\n", p, c, t, o, on, (pe != "" ? pe "%" : "not run"), tol
	exit !(p >= lo - tol && p <= hi + tol) }' || fail "main.hashBlock's cumulative share is neither Go's own nor perf's"

# the summary's truncated count is the stacks the folded output marks
# [truncated] (Go's assembly has no CFI and uses rbp freely: some stop)
said=$(sed -n 's/^csampler: [0-9]* samples, .*, \([0-9]*\) truncated,.*/\1/p' "$T/cs.err")
marked=$(folded_count "$F" '^\[truncated\];')
note "truncated: $said in the summary, $marked marked"
assert_eq "truncated stacks, summary vs folded" "$said" "$marked"
exit 0
