#!/bin/sh
# perf_backend_kernel: --backend=perf shows each sample's kernel call chain
# above the user frames it belongs to, named from /proc/kallsyms, as perf
# record -g does (tests/progs/kernpath.c: a thread whose CPU is mostly the
# kernel's, half writing and reading a pipe, half reading a directory's
# entries). On the same live run as perf record -e cpu-clock -g -p: the
# five kernel functions perf puts most samples in, each within 3 points
# (and 3 standard errors) of perf's share; the pipe's kernel path under
# pipe_pump's write, the directory's under dir_scan; no kernel frame named
# by address. Every output marks them: _[k] in folded with --annotate, the
# [kernel.kallsyms] mapping in pprof (go tool pprof), [kernel] as the text
# report's module, the SVG's kernel class; -i keeps them. --no-kernel, and
# a csampler the kernel hides its addresses from (no CAP_SYSLOG at
# kernel.perf_event_paranoid 2), give user-only profiles, the second with
# its line. The previous binary has no kernel frame at all.
TEST_TIMEOUT=150
. "$TESTS_SRCDIR/lib.sh"
need_root
need_cmd perf
need_cmd setpriv

start_fixture kernpath 60
perf record -q -e cpu-clock -F 999 -g -p "$FIXTURE_PID" -o "$T/k.perf" -- sleep 6 \
	>/dev/null 2>"$T/perf.err" &
perf_pid=$!
for i in $(seq 1 200); do
	ls -l /proc/"$perf_pid"/fd 2>/dev/null | grep -q 'perf_event' && break
	kill -0 "$perf_pid" 2>/dev/null || skip "perf record cannot run here: $(tail -2 "$T/perf.err")"
	sleep 0.05
done
run_csampler --backend=perf -F 999 -p "$FIXTURE_PID" -d 4 --annotate -o "$T/k.folded" \
	-o "$T/k.pb.gz" -o "$T/k.txt" -o "$T/k.svg"
assert_eq "exit status ($(cat "$T/cs.err"))" "$CS_STATUS" 0
wait "$perf_pid"
perf script -i "$T/k.perf" -F ip,sym,dso >"$T/k.script" 2>/dev/null ||
	harness "perf script: $(head -3 "$T/k.script")"

# each sample's leaf kernel function (the first line of its block), as a
# share of all samples: perf's, then csampler's (the last frame of a line)
awk 'NF == 0 { if (n) total++; n = 0; next }
	{ n++; if (n == 1 && $NF == "([kernel.kallsyms])") self[$2]++ }
	END { if (n) total++; for (f in self) printf "%s %.2f %d\n", f, 100 * self[f] / total, total }' \
	"$T/k.script" | sort -k2 -rn >"$T/perf.self"
awk '{ c = $NF; total += c; sub(/ [0-9]+$/, ""); n = split($0, fr, ";")
	if (fr[n] ~ /_\[k\]$/) { f = fr[n]; sub(/_\[k\]$/, "", f); self[f] += c } }
	END { for (f in self) printf "%s %.2f %d\n", f, 100 * self[f] / total, total }' \
	"$T/k.folded" >"$T/cs.self"
[ "$(wc -l <"$T/perf.self")" -ge 5 ] || harness "perf record has fewer than 5 kernel functions: $(head -3 "$T/k.script")"
head -5 "$T/perf.self" >"$T/top5"
ncs=$(folded_total "$T/k.folded")
[ "$ncs" -gt 0 ] || fail "no samples in $T/k.folded"
while read -r fn ref nperf; do
	got=$(awk -v f="$fn" '$1 == f { print $2 }' "$T/cs.self")
	# 3 standard errors of the difference of two shares (each its own run of samples)
	tol=$(awk -v p="$ref" -v a="$nperf" -v b="$ncs" "$AWK_ROOT"'
		BEGIN { q = p / 100; se = 100 * root(q * (1 - q) * (1 / a + 1 / b)); t = 3 * se
			printf "%.1f\n", (t > 3) ? t : 3 }')
	lo=$(awk -v r="$ref" -v t="$tol" 'BEGIN { printf "%.1f\n", r - t }')
	hi=$(awk -v r="$ref" -v t="$tol" 'BEGIN { printf "%.1f\n", r + t }')
	assert_within "kernel function $fn, % of samples (perf record -g: $ref)" "${got:-0}" "$lo" "$hi"
done <"$T/top5"

# the kernel's paths under the calls that took them, and every frame named
assert_folded_has "$T/k.folded" '(^|;)pipe_pump;[^;]*write;([^;]*_\[k\];)*vfs_write_\[k\]'
assert_folded_has "$T/k.folded" '(^|;)dir_scan;[^;]*syscall;([^;]*_\[k\];)*iterate_dir_\[k\]'
assert_eq "kernel frames named by address: $(grep -Eo '(^|;)0xffff[0-9a-f]*_\[k\]' "$T/k.folded" | head -3)" \
	"$(folded_count "$T/k.folded" '(^|;)(0x)?ffff[0-9a-f]*_\[k\]')" 0
# no user frame above a kernel frame
above=$(awk '{ sub(/ [0-9]+$/, ""); n = split($0, fr, ";"); k = 0
	for (i = 1; i <= n; i++) { if (fr[i] ~ /_\[k\]$/) k = 1; else if (k) { bad++; break } } }
	END { print bad + 0 }' "$T/k.folded")
assert_eq "stacks with a user frame above a kernel frame: $(grep -E '_\[k\];[^;]*[^]];' "$T/k.folded" | head -2)" "$above" 0

# every output marks them
grep -q '(\[kernel\])$' "$T/k.txt" || fail "the text report names no function of [kernel]: $(sed -n 10,14p "$T/k.txt")"
grep -q '>kernel<' "$T/k.svg" || fail "the SVG has no kernel class in its legend"
if command -v go >/dev/null 2>&1; then
	go tool pprof -raw "$T/k.pb.gz" >"$T/k.raw" 2>"$T/pprof.err" || fail "go tool pprof: $(head -3 "$T/pprof.err")"
	grep -Eq '^[0-9]+: 0xffffffff[0-9a-f]+/0xffffffff[0-9a-f]+/0x0 \[kernel\.kallsyms\]' "$T/k.raw" ||
		fail "pprof has no [kernel.kallsyms] mapping: $(grep -A4 '^Mappings' "$T/k.raw")"
	go tool pprof -top "$T/k.pb.gz" 2>/dev/null | grep -q ' iterate_dir$' ||
		fail "go tool pprof -top has no iterate_dir"
else
	note "go not installed: pprof checked by csampler -i only"
fi
run_csampler -i "$T/k.pb.gz" --annotate -o "$T/again.folded"
assert_eq "-i: exit status ($(cat "$T/cs.err"))" "$CS_STATUS" 0
assert_folded_has "$T/again.folded" '(^|;)dir_scan;[^;]*syscall;([^;]*_\[k\];)*iterate_dir_\[k\]'

# --no-kernel: user frames only, no line
run_csampler --backend=perf -F 999 -p "$FIXTURE_PID" -d 1 --no-kernel --annotate -o "$T/nok.folded"
assert_eq "--no-kernel: exit status ($(cat "$T/cs.err"))" "$CS_STATUS" 0
assert_eq "--no-kernel: kernel frames" "$(folded_count "$T/nok.folded" '_\[k\]')" 0
assert_folded_has "$T/nok.folded" '(^|;)dir_scan;[^;]*syscall '
grep -q 'kptr_restrict' "$T/cs.err" && fail "--no-kernel: the kptr_restrict line: $(cat "$T/cs.err")"

# the kernel hides its addresses from a csampler without CAP_SYSLOG (at
# kernel.kptr_restrict 0 only perf_event_paranoid <= 1 shows them to all)
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
restrict=$(cat /proc/sys/kernel/kptr_restrict)
if [ "$(setpriv --bounding-set -syslog head -c 16 /proc/kallsyms)" = 0000000000000000 ]; then
	CSAMPLER_WRAPPER="setpriv --bounding-set -syslog" run_csampler --backend=perf -F 999 \
		-p "$FIXTURE_PID" -d 1 --annotate -o "$T/hidden.folded"
	assert_eq "hidden: exit status ($(cat "$T/cs.err"))" "$CS_STATUS" 0
	grep -q "hides its symbols' addresses (kernel.kptr_restrict)" "$T/cs.err" ||
		fail "hidden addresses: no line says so: $(cat "$T/cs.err")"
	assert_eq "hidden: kernel frames" "$(folded_count "$T/hidden.folded" '_\[k\]')" 0
	assert_folded_has "$T/hidden.folded" '(^|;)dir_scan;[^;]*syscall '
else
	note "kallsyms shows addresses without CAP_SYSLOG here (kptr_restrict $restrict, perf_event_paranoid $paranoid): the hidden case not run"
fi
exit 0
