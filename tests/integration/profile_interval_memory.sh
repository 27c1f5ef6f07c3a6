#!/bin/sh
# profile_interval_memory: csampler --interval's memory stays flat over 20
# intervals: each interval's stacks and profile are freed once written, the
# symbols looked up once for the whole run. The peak RSS is read once the
# 6th and the 20th interval's file exist; it may not grow by more than 2 MB.
. "$TESTS_SRCDIR/lib.sh"
need_root
ldd "$CSAMPLER" | grep -q libasan && skip "AddressSanitizer's quarantine keeps freed memory: RSS says nothing here"

start_fixture hot 120
HOT=$FIXTURE_PID
# wait_files N: until N interval files exist (at most 40 s)
wait_files() {
	local i
	for i in $(seq 1 400); do
		[ "$(ls "$T" | grep -c '^mem-.*\.folded$')" -ge "$1" ] && return 0
		kill -0 "$CS" 2>/dev/null || fail "csampler ended before $1 intervals: $(cat "$T/mem.err")"
		sleep 0.1
	done
	fail "no $1 interval files after 40 s"
}
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
wait_files 6
rss6=$(awk '/^VmHWM:/ {print $2}' "/proc/$CS/status")
wait_files 20
rss20=$(awk '/^VmHWM:/ {print $2}' "/proc/$CS/status")
wait "$CS" || fail "csampler --interval for 22 s failed: $(cat "$T/mem.err")"
note "peak RSS after 6 s: $rss6 kB, after 20 s: $rss20 kB"
[ -n "$rss6" ] && [ -n "$rss20" ] || fail "no RSS read"
assert_within "peak RSS growth from 6 s to 20 s, kB" "$((rss20 - rss6))" 0 2048
# (a window closes at the first wake after its end; while the host is
# loaded a wake comes late, an interval's write takes longer, and the
# windows fall behind the clock, one closed a wake: beside two busy loops
# and the quick group, 21 files once; each is still whole, see
# profile_interval)
assert_within "files of the 22 s run" "$(ls "$T"/mem-*.folded | wc -l)" 20 23
assert_untraced_running "$HOT"

