#!/bin/sh
# write_pprof: the pprof writer's output of mkprofile's known profile, read by
# the real `go tool pprof`: exact totals in samples and CPU nanoseconds (the
# count times the period: the same weight as the folded output), inline
# frames and file:line, mappings with build-ids, thread/pid/tid labels
# (-tagfocus), the command line as comment, period and times. See
# tests/progs/mkprofile.c for the profile.
. "$TESTS_SRCDIR/lib.sh"

need_go

"$PROGS/mkprofile" "$T/p.pb.gz" "$T/p.pprof" || fail "mkprofile failed"
# gzipped always, whatever the extension, and deterministic
[ "$(od -An -tx1 -N2 "$T/p.pprof" | tr -d ' ')" = 1f8b ] || fail "p.pprof is not gzip"
gzip -t "$T/p.pb.gz" || fail "p.pb.gz is not valid gzip"
cmp -s "$T/p.pb.gz" "$T/p.pprof" || fail "two writes of one profile differ"

pprof() { "$GO" tool pprof -symbolize=none "$@" "$T/p.pb.gz" 2>"$T/pprof.err" ||
	fail "go tool pprof $*: $(cat "$T/pprof.err")"; }

# -top: exact totals, flat counts, inline marks
pprof -sample_index=samples -top >"$T/top"
grep -q '^Showing nodes accounting for 125, 100% of 125 total$' "$T/top" ||
	fail "-top total: $(grep Showing "$T/top")"
grep -Eq '^ +55 +44\.00% .* add_one \(inline\)$' "$T/top" || fail "-top: add_one (inline) 55 missing"
grep -Eq '^ +30 +24\.00% .* ns::Matrix<double>::multiply\(ns::Matrix<double> const&\)$' "$T/top" ||
	fail "-top: C++ name missing"
grep -Eq '^ +0 .* +70 +56\.00%  worker_main$' "$T/top" || fail "-top: worker_main cum 70 missing"
grep -q '^\./app --mode="fast" <in>&out$' "$T/top" || fail "-top: comment (command line) missing"
grep -q '^Build ID: abcdef0123456789abcdef0123456789abcdef01$' "$T/top" || fail "-top: build id"

# -raw: every sample with both values, the labels, locations with their
# inline lines innermost first and file:line, mappings with their flags
pprof -raw >"$T/raw"
sums=$(awk '/^Samples:/ {s = 1; next} /^Locations/ {s = 0}
	s && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+:$/ {c += $1; n += $2} END {print c, n}' "$T/raw")
assert_eq "samples and cpu ns in -raw" "$sums" "125 1262626250"
grep -q '^PeriodType: cpu nanoseconds$' "$T/raw" || fail "-raw: period type"
grep -q '^Period: 10101010$' "$T/raw" || fail "-raw: period"
grep -q '^Duration: 1.5s$' "$T/raw" || fail "-raw: duration"
grep -q '^Time: 2023-11-14 22:13:20.123456789 +0000 UTC$' "$T/raw" || fail "-raw: time"
grep -q '^samples/count cpu/nanoseconds$' "$T/raw" || fail "-raw: sample types"
grep -A2 -E '^ +1: 0x401100 M=1 add_one app\.c:12 s=10$' "$T/raw" | tr -s ' ' >"$T/inline"
assert_eq "inline lines of 0x401100" "$(sed 1d "$T/inline" | tr '\n' '|')" \
	" square app.c:22 s=20| compute app.c:41 s=38|"
grep -Eq ' 0x7f1000002345 M=2 ns::Matrix<double>::multiply\(ns::Matrix<double> const&\) matrix\.cc:104 s=100\(_ZN2ns6MatrixIdE8multiplyERKS1_\)$' "$T/raw" ||
	fail "-raw: C++ location with system name"
grep -q '^1: 0x400000/0x402000/0x0 /usr/bin/app abcdef0123456789abcdef0123456789abcdef01 \[FN\]\[FL\]\[LN\]\[IN\]$' "$T/raw" ||
	fail "-raw: mapping 1"
grep -q '^2: 0x7f1000000000/0x7f1000010000/0x1000 /usr/lib/libmatrix.so  \[FN\]\[FL\]\[LN\]$' "$T/raw" ||
	fail "-raw: mapping 2"
grep -q '^3: 0x7f0000000000/0x7f0000200000/0x0 /usr/lib/x86_64-linux-gnu/libc.so.6 0123abcd \[FN\]$' "$T/raw" ||
	fail "-raw: mapping 3"
grep -q 'thread:\[worker-1\]' "$T/raw" || fail "-raw: thread label"
grep -q 'pid:\[4242\] tid:\[4243\]' "$T/raw" || fail "-raw: pid/tid labels"
grep -q 'thread:\[pool\] truncated:\[true\]' "$T/raw" || fail "-raw: truncated label"

# -traces: the inline chain, leaf first, under its thread's labels
pprof -sample_index=samples -traces >"$T/traces"
awk '/^-+\+/ {b = ""; next} {b = b $0 "|"} /main$/ && b ~ /thread:  app\|/ {print b}' "$T/traces" |
	tr -s ' ' >"$T/trace"
assert_eq "trace of app" "$(cat "$T/trace")" \
	" thread: app| pid: 4242| tid: 4242| 50 add_one (inline)| square (inline)| compute| run_workers| main|"

# -tagfocus: one thread, a regex over threads, a grouped thread, the hostile name
for f in 'worker-1=30, 24.00%' 'worker-.*=50, 40.00%' 'pool=5, 4.00%' 'a;b=20, 16.00%'; do
	pprof -sample_index=samples -tagfocus "thread=${f%%=*}" -top >"$T/focus"
	grep -q "^Showing nodes accounting for ${f#*=} of 125 total$" "$T/focus" ||
		fail "-tagfocus thread=${f%%=*}: $(grep Showing "$T/focus")"
done
# one weight for one sample: the time is count x period in every view
pprof -sample_index=cpu -tagfocus thread=worker-1 -top >"$T/focus"
grep -q '^Showing nodes accounting for 303.03ms, 24.00% of 1262.63ms total$' "$T/focus" ||
	fail "cpu of worker-1: $(grep Showing "$T/focus")"
exit 0
