#!/bin/sh
# profile_interval: --interval writes one complete profile per interval,
# each file named by its interval's start (strftime fields), atomic, the
# last one holding what remains: with -d 4.5 and --interval 1, five folded
# and five pprof files; together they count exactly the samples the summary
# reports, each full interval holds about a second of the busy thread's CPU
# (99 Hz; the kernel's count of it), each pprof file parses with go tool
# pprof and holds what its folded twin holds; no temporary file is left; the
# target ends untraced and running. Then the usage errors: a name without a
# time field, standard output, a fractional interval, --top.
# (profile_interval_memory: memory over 20 intervals; profile_interval_churn:
# thread keys of a target that makes threads all the time.)
. "$TESTS_SRCDIR/lib.sh"
need_root
need_go

start_fixture hot 120
HOT=$FIXTURE_PID
mkdir "$T/out"
cpu_mark "$HOT"
# (the busy thread's CPU every 0.1 s while it is sampled: the least it had
# in any second of the run, below)
cpu_trace_start "/proc/$HOT/schedstat" "$T/cpu.trace"
run_csampler -v -F 99 -d 4.5 --interval 1 -o "$T/out/w-%s.folded" -o "$T/out/w-%s.pb.gz" -p "$HOT"
cpu_trace_stop
cpu_window "$HOT"
assert_eq "exit status ($(cat "$T/cs.err"))" "$CS_STATUS" 0
assert_untraced_running "$HOT"
assert_match "attach line" "$(grep 'attached to process' "$T/cs.err")" \
	"^csampler: attached to process $HOT \\(1 thread\\) in [0-9.]+ ms\$"

ls "$T/out" >"$T/names"
assert_eq "folded files ($(tr '\n' ' ' <"$T/names"))" "$(grep -c '^w-[0-9]*\.folded$' "$T/names")" 5
assert_eq "pprof files" "$(grep -c '^w-[0-9]*\.pb\.gz$' "$T/names")" 5
assert_eq "files in all (no temporary file left)" "$(wc -l <"$T/names" | tr -d ' ')" 10
# (an interval the target hardly ran in says "1 sample")
assert_eq "'wrote' lines for the folded files" \
	"$(grep -Ec '^csampler: wrote .*/w-[0-9]*\.folded \(folded stacks, [0-9]* samples?' "$T/cs.err")" 5
assert_eq "how to view them, said once" "$(grep -c 'view it: flamegraph.pl' "$T/cs.err")" 1

samples=$(sed -n 's/^csampler: \([0-9]*\) samples, .* threads seen.*/\1/p' "$T/cs.err")
[ -n "$samples" ] || fail "no counters line in: $(cat "$T/cs.err")"
sum=0
n=0
for f in $(ls "$T/out"/w-*.folded | sort); do
	n=$((n + 1))
	total=$(folded_total "$f")
	sum=$((sum + total))
	eval "count_$n=$total"
	# (leaf_a holds 57% of hot's time: in 20 samples it is there but for
	# one chance in 10^7; a loaded machine can leave an interval fewer)
	[ "$total" -lt 20 ] || assert_folded_has "$f" 'leaf_a'
done
# together, the 4.5 s of the busy thread's CPU at 99 Hz (the kernel's count)
assert_window_samples "samples of the 4.5 s" "$sum" 99 4.5 1 85 110 5
# each full interval holds its own second, not nothing (the run so far in
# each would fail the sum above): at least a quarter of their mean and at
# most twice it, or 3 standard errors of a count that size (3 x sqrt(mean))
# beyond. The target's CPU is not the same in every second on a loaded
# machine (the quick group's: 0.10 CPUs on average gave one interval 19
# samples where the mean was 9), so the band is no tighter; the last,
# half of the mean within a third of it or 3 standard errors
mean=$(( (count_1 + count_2 + count_3 + count_4) / 4 ))
se=$(awk -v m="$mean" "$AWK_ROOT"' BEGIN { printf "%.0f\n", 3 * root(m) }')
# not nothing, where the busy thread ran in every second: the samples the
# least CPU it had in any second of the run stands for (its schedstat every
# 0.1 s) at least 10, so a count of 0 is one chance in 20,000; CI's
# sanitizer stage gave it 5 samples' worth a second on average, and one
# interval had 0
# (the least and the most CPU the busy thread had in any second of the run,
# in samples' worth: its schedstat every 0.1 s)
cpu_second() {
	awk -v most="$1" 'NF == 2 { n++; t[n] = $1; c[n] = $2 }
		END { m = -1
			for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
				if (t[j] - t[i] >= 1e9) {
					d = c[j] - c[i]
					if (m < 0 || (most ? (d > m) : (d < m))) m = d
					break
				}
			printf "%.1f\n", (m < 0) ? 0 : 99 * m / 1e9 }' "$T/cpu.trace"
}
least=$(cpu_second 0)
most=$(cpu_second 1)
low=$((mean / 4 - se)); [ "$low" -ge 1 ] || low=1
awk -v l="$least" 'BEGIN { exit !(l < 10) }' && low=0
# at most twice their mean, or where the host starved the thread unevenly
# (CI's busybox stage, at load 334: an interval of 24 samples for a mean
# of 7, the least second 0 samples' worth), the most it had in a second of
# the run and 3 standard errors of that
high=$(awk -v m="$mean" -v se="$se" -v x="$most" "$AWK_ROOT"' BEGIN {
	h = 2 * m + se; y = x + 3 * root(x) + 1; printf "%.0f\n", (y > h) ? y : h }')
note "the busy thread's CPU in a second of the run: $least samples' worth at least, $most at most"
for i in 1 2 3 4; do
	eval "c=\$count_$i"
	assert_within "samples of interval $i (the full ones' mean: $mean)" "$c" "$low" "$high"
done
half=$((mean / 2))
# (3 standard errors of a full interval's count, as theirs: where the
# machine leaves the target a few samples a second its CPU is not the
# same from second to second; CI, mean 7: the last half had 10. At most
# what a full interval may hold: CI's sanitizer stage, mean 6, had 12 in
# the last half second, the target given more CPU there than before; a
# last file that held the run so far, 4.5 means, still fails)
slack=$(awk -v m="$mean" "$AWK_ROOT"' BEGIN { s = 3 * root(m); printf "%.0f\n", (s > m / 3) ? s : m / 3 }')
assert_within "samples of the last half interval (the full ones' mean: $mean)" "$count_5" \
	$((half - slack)) "$high"
assert_eq "samples of the intervals together" "$sum" "$samples"
note "$samples samples in 5 files"

# each pprof file as go tool pprof reads it: the same samples as its twin
for f in "$T/out"/w-*.pb.gz; do
	assert_eq "samples of $f" "$(pprof_raw_total "$f")" "$(folded_total "${f%.pb.gz}.folded")"
done

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
