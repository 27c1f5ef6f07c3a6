#!/bin/sh
# serve_scrape: what a fleet engine does to csampler --serve: 20 scrapes
# asking for seconds=1, back to back (Parca's and Alloy's shape, without
# their pause between scrapes, which only waits). Every response is a 200
# whose gzipped pprof body go tool pprof parses, holding the second's worth
# of the busy thread's CPU (99 Hz; the kernel's count), answered within
# seconds + 3 (Parca drops a scrape later than that); the target is untraced between
# scrapes; csampler's memory is flat (each window's stacks, profile and
# response freed; the symbols cached once); the requests are logged one
# line each.
TEST_TIMEOUT=120
. "$TESTS_SRCDIR/lib.sh"
need_root
need_cmd curl
need_go

start_fixture hot 300
HOT=$FIXTURE_PID
start_server --serve 0 -p "$HOT"
rss() { awk '/^VmRSS:/ {print $2}' "/proc/$SERVER_PID/status"; }
asan=false
ldd "$CSAMPLER" 2>/dev/null | grep -q libasan && asan=true

for i in $(seq 1 20); do
	cpu_mark "$HOT"
	w=$(curl -sS --max-time 10 -o "$T/s$i.pb.gz" -w '%{http_code} %{time_total}' \
		"$SERVER_URL/debug/pprof/profile?seconds=1" 2>"$T/curl.err") ||
		fail "scrape $i: $(cat "$T/curl.err")"
	cpu_window "$HOT"
	assert_eq "scrape $i status" "${w% *}" 200
	awk -v t="${w#* }" 'BEGIN { exit !(t >= 0.95 && t <= 4) }' ||
		fail "scrape $i answered in ${w#* } s, not within 1 + 3 s"
	assert_window_samples "scrape $i: samples" "$(pprof_raw_total "$T/s$i.pb.gz")" 99 1 1 85 104
	[ "$(tracer_pid "$HOT")" = 0 ] || fail "target traced between scrapes (after scrape $i)"
	[ "$i" = 5 ] && rss5=$(rss)
done
rss20=$(rss)
note "RSS after scrape 5: $rss5 kB, after scrape 20: $rss20 kB"
if ! $asan; then
	# (less is no leak: the kernel may reclaim clean pages meanwhile)
	assert_within "RSS growth from scrape 5 to 20 (kB)" $((rss20 - rss5)) -1000000 1024
fi
assert_eq "log lines" "$(grep -c '^csampler: 127\.0\.0\.1:[0-9]* GET /debug/pprof/profile?seconds=1 200 [0-9]* bytes' "$T/srv.err")" 20
assert_untraced_running "$HOT"
kill -TERM "$SERVER_PID"
wait_exit "$SERVER_PID" 15 "csampler --serve after SIGTERM" "$HOT"
assert_eq "exit status" "$WAIT_STATUS" 0
