#!/bin/sh
# profile_interval: --interval writes one complete profile per interval,
# each file named by its interval's start (strftime fields), atomic, the
# last one holding what remains: with -d 4.5 and --interval 1, five folded
# and five pprof files; together they count exactly the samples the summary
# reports, each full interval holds about a second of the busy thread's CPU
# (99 Hz), each pprof file parses with go tool pprof and holds what its
# folded twin holds; no temporary file is left; the target ends untraced and
# running. Then csampler's memory stays flat over 20 intervals (each
# interval's stacks and profile freed), a target that makes threads all
# the time holds csampler's thread keys to a window's worth, and the
# usage errors: a name without a time field, standard output, a fractional
# interval, --top.
. "$TESTS_SRCDIR/lib.sh"
need_root

start_fixture hot 120
HOT=$FIXTURE_PID
mkdir "$T/out"
run_csampler -v -F 99 -d 4.5 --interval 1 -o "$T/out/w-%s.folded" -o "$T/out/w-%s.pb.gz" -p "$HOT"
assert_eq "exit status ($(cat "$T/cs.err"))" "$CS_STATUS" 0
assert_untraced_running "$HOT"
assert_match "attach line" "$(grep 'attached to process' "$T/cs.err")" \
	"^csampler: attached to process $HOT \\(1 thread\\) in [0-9.]+ ms\$"

ls "$T/out" >"$T/names"
assert_eq "folded files ($(tr '\n' ' ' <"$T/names"))" "$(grep -c '^w-[0-9]*\.folded$' "$T/names")" 5
assert_eq "pprof files" "$(grep -c '^w-[0-9]*\.pb\.gz$' "$T/names")" 5
assert_eq "files in all (no temporary file left)" "$(wc -l <"$T/names" | tr -d ' ')" 10
assert_eq "'wrote' lines for the folded files" \
	"$(grep -c '^csampler: wrote .*/w-[0-9]*\.folded (folded stacks, [0-9]* samples' "$T/cs.err")" 5
assert_eq "how to view them, said once" "$(grep -c 'view it: flamegraph.pl' "$T/cs.err")" 1

samples=$(sed -n 's/^csampler: \([0-9]*\) samples, .* threads seen.*/\1/p' "$T/cs.err")
[ -n "$samples" ] || fail "no counters line in: $(cat "$T/cs.err")"
sum=0
n=0
for f in $(ls "$T/out"/w-*.folded | sort); do
	n=$((n + 1))
	total=$(folded_total "$f")
	sum=$((sum + total))
	assert_folded_has "$f" 'leaf_a'
	if [ "$n" -lt 5 ]; then
		# a full interval: a second of one busy thread at 99 Hz
		assert_within "samples of interval $n ($f)" "$total" 75 115
	else
		assert_within "samples of the last half interval ($f)" "$total" 30 70
	fi
done
assert_eq "samples of the intervals together" "$sum" "$samples"
note "$samples samples in 5 files"

# each pprof file as go tool pprof reads it: the same samples as its twin
if [ -n "${GO:-}" ] || command -v go >/dev/null 2>&1; then
	need_go
	for f in "$T/out"/w-*.pb.gz; do
		"$GO" tool pprof -raw "$f" >"$T/raw" 2>"$T/pprof.err" ||
			fail "go tool pprof -raw $f: $(cat "$T/pprof.err")"
		got=$(awk '/^Samples:/ {s = 1; next} /^Locations/ {s = 0} s && /^ *[0-9]+ +[0-9]+:/ {n += $1} END {print n + 0}' "$T/raw")
		assert_eq "samples of $f" "$got" "$(folded_total "${f%.pb.gz}.folded")"
	done
else
	note "go not found: pprof files not read back"
fi

# memory: flat over 20 intervals (each interval's stacks are freed once
# written; symbols are looked up once for the whole run)
"$CSAMPLER" -q -F 499 -d 22 --interval 1 --max-stacks 1024 --addresses -o "$T/mem-%s.folded" \
	-p "$HOT" 2>"$T/mem.err" &
CS=$!
# (the peak RSS: the current one depends on whether an interval is being
# written at the moment it is read; a small --max-stacks keeps the two maps
# alive while one is written small next to what could grow; --addresses,
# as the debug information of a library is loaded when its first sample
# comes, which may be at any interval: a one-time cost, not a growth)
sleep 6
rss6=$(awk '/^VmHWM:/ {print $2}' "/proc/$CS/status")
sleep 14
rss20=$(awk '/^VmHWM:/ {print $2}' "/proc/$CS/status")
wait "$CS" || fail "csampler --interval for 22 s failed: $(cat "$T/mem.err")"
note "peak RSS after 6 s: $rss6 kB, after 20 s: $rss20 kB"
[ -n "$rss6" ] && [ -n "$rss20" ] || fail "no RSS read"
if ldd "$CSAMPLER" | grep -q libasan; then
	note "AddressSanitizer's quarantine keeps freed memory: RSS not compared"
else
	assert_within "peak RSS growth from 6 s to 20 s, kB" "$((rss20 - rss6))" 0 2048
fi
assert_within "files of the 22 s run" "$(ls "$T"/mem-*.folded | wc -l)" 22 23
assert_untraced_running "$HOT"

# thread keys: a target that makes threads all the time (churn) does not
# grow csampler by a key per thread over the intervals; each window's keys
# go once it is written, and every stack stays under its own thread (the
# main thread's never run thread_main, the workers' never main). With both
# backends: --backend=perf makes a thread's key at its first sample, which
# may be read after the thread's exit was reported (before, such keys were
# never freed: 1760 held of 1884 made).
start_fixture churn 100000000 8
CHURN=$FIXTURE_PID
for be in ptrace perf; do
	mkdir "$T/churn-$be"
	run_csampler --backend=$be -v --threads -F 499 -d 6 --interval 1 -o "$T/churn-$be/w-%s.folded" -p "$CHURN"
	assert_eq "$be: exit status of --interval on churn ($(cat "$T/cs.err"))" "$CS_STATUS" 0
	keys=$(sed -n 's/.*thread keys \([0-9]*\) held of \([0-9]*\) made, [0-9]* periods taken$/\1 \2/p' "$T/cs.err")
	held=${keys% *} made=${keys#* }
	note "$be: churn: thread keys $held held of $made made, $(grep -o '[0-9]* threads seen' "$T/cs.err")"
	[ -n "$keys" ] || fail "$be: no thread keys in -v's line: $(cat "$T/cs.err")"
	assert_within "$be: thread keys made over 6 intervals" "$made" 600 1000000
	# the last window's and the live threads' only: about a sixth
	assert_within "$be: thread keys held at the end (of $made made)" "$((held * 3))" 1 "$made"
	cat "$T"/churn-$be/w-*.folded >"$T/churn.all"
	assert_folded_has "$T/churn.all" "^churn-$CHURN;.*;main;"
	assert_folded_has "$T/churn.all" "^churn-[0-9]+;.*thread_main"
	grep "^churn-$CHURN;" "$T/churn.all" | grep -q thread_main &&
		fail "$be: the main thread's stacks hold a worker's: $(grep "^churn-$CHURN;" "$T/churn.all" | grep thread_main | head -3)"
	grep -v "^churn-$CHURN;" "$T/churn.all" | grep -q ';main;' &&
		fail "$be: a worker's stacks hold the main thread's: $(grep -v "^churn-$CHURN;" "$T/churn.all" | grep ';main;' | head -3)"
done
kill "$CHURN"

# usage errors, before anything is attached
for args in "-o $T/fixed.folded" "-o -" "--interval 1.5 -o $T/x-%s.folded" "--top"; do
	# shellcheck disable=SC2086
	run_csampler --interval 1 $args -p "$HOT"
	assert_eq "exit status of --interval 1 $args" "$CS_STATUS" 64
done
run_csampler --interval 1 -o "$T/fixed.folded" -p "$HOT"
grep -q "put strftime fields in '$T/fixed.folded'" "$T/cs.err" ||
	fail "no strftime hint: $(cat "$T/cs.err")"
[ -e "$T/fixed.folded" ] && fail "a refused run wrote a file"
assert_untraced_running "$HOT"
exit 0
