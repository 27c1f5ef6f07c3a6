#!/bin/sh
# profile_weights: one weight for one sample in every output. Three threads
# with different duty cycles (the burst fixture, epoll mode) profiled at 499
# Hz into folded (--threads), pprof and text: per thread, the folded count
# equals pprof's samples value and pprof's cpu value is that count times the
# period (read by the real go tool pprof -raw); the text report's total is
# the folded total. A --idle profile is typed wall/nanoseconds, not cpu.
. "$TESTS_SRCDIR/lib.sh"
need_root

need_go

# raw_per_thread PPROF: "tid samples nanoseconds" per tid label, from -raw
raw_per_thread() {
	"$GO" tool pprof -symbolize=none -raw "$1" 2>"$T/pprof.err" >"$T/raw" ||
		fail "go tool pprof -raw: $(cat "$T/pprof.err")"
	awk '/^Samples:/ {s = 1; next} /^Locations/ {s = 0}
		s && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+:$/ {c = $1; n = $2 + 0; next}
		s && match($0, /tid:\[[0-9]+\]/) {
			tid = substr($0, RSTART + 5, RLENGTH - 6); sc[tid] += c; sn[tid] += n }
		END { for (t in sc) print t, sc[t], sn[t] }' "$T/raw" | sort -n
}

start_fixture burst epoll 300 3000 3 30
run_csampler -F 499 -d 3 --threads -o "$T/w.folded" -o "$T/w.pb.gz" -o "$T/w.txt" -p "$FIXTURE_PID"
assert_eq "exit status" "$CS_STATUS" 0
period=$((1000000000 / 499))
total=$(folded_total "$T/w.folded")
[ "$total" -gt 50 ] || fail "only $total samples"
# folded per tid: the root frame is NAME-TID
awk '{c = $NF; split($1, f, ";"); n = split(f[1], p, "-"); s[p[n]] += c}
	END { for (t in s) print t, s[t] }' "$T/w.folded" | sort -n >"$T/folded.tids"
raw_per_thread "$T/w.pb.gz" >"$T/pprof.tids"
[ "$(wc -l <"$T/folded.tids")" -ge 3 ] || fail "fewer than 3 threads sampled: $(cat "$T/folded.tids")"
awk -v p="$period" '{ print $1, $2, $2 * p }' "$T/folded.tids" >"$T/want.tids"
cmp -s "$T/want.tids" "$T/pprof.tids" ||
	fail "per thread (tid samples ns): folded says $(tr '\n' '|' <"$T/want.tids"), pprof says $(tr '\n' '|' <"$T/pprof.tids")"
note "per thread (tid samples ns): $(tr '\n' '|' <"$T/pprof.tids")"
grep -q "^samples/count cpu/nanoseconds$" "$T/raw" || fail "on-CPU profile not typed cpu: $(grep -m1 '/count' "$T/raw")"
grep -Eq " $total samples \([0-9.]+ s of CPU\) in [0-9]+ stacks" "$T/w.txt" || fail "text report total is not $total: $(grep 'stacks$' "$T/w.txt")"

run_csampler --idle -F 99 -d 1 -o "$T/i.pb.gz" -p "$FIXTURE_PID"
assert_eq "exit status (--idle)" "$CS_STATUS" 0
"$GO" tool pprof -symbolize=none -raw "$T/i.pb.gz" >"$T/iraw" 2>"$T/pprof.err" ||
	fail "go tool pprof -raw: $(cat "$T/pprof.err")"
grep -q '^PeriodType: wall nanoseconds$' "$T/iraw" || fail "--idle period type: $(grep PeriodType "$T/iraw")"
grep -q '^samples/count wall/nanoseconds$' "$T/iraw" || fail "--idle sample types: $(grep -m1 '/count' "$T/iraw")"
assert_untraced_running "$FIXTURE_PID"

# A wall-clock profile shows where threads wait: a thread that computes
# 0.5 ms and sleeps 4.5 ms (clock_nanosleep: csampler may interrupt it
# there) has about 90% of its samples in the sleep.
start_fixture burst sleep 500 4500 1 30
run_csampler --idle -F 199 -d 2 -o "$T/s.folded" -p "$FIXTURE_PID"
assert_eq "exit status (--idle, sleeping thread)" "$CS_STATUS" 0
worker=$(folded_count "$T/s.folded" ';worker;')
[ "$worker" -gt 200 ] || fail "--idle: the worker has $worker samples in 2 s at 199 Hz"
assert_within "--idle: % of the worker's samples in its sleep" \
	"$(pct "$(folded_count "$T/s.folded" ';worker;block_once;')" "$worker")" 75 100
exit 0
