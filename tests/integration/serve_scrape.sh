#!/bin/sh
# serve_scrape: what a fleet engine does to csampler --serve: a scrape every
# 3 s asking for seconds=2 (Parca's and Alloy's shape), for a minute. Every
# response is a 200 whose gzipped pprof body go tool pprof parses, holding
# about two seconds of the busy thread (99 Hz), answered within seconds + 3
# (Parca drops a scrape later than that); the target is untraced between
# scrapes; csampler's memory is flat (each window's stacks, profile and
# response freed; the symbols cached once); the requests are logged one
# line each.
TEST_TIMEOUT=150
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
	started=$(date +%s%N)
	w=$(curl -sS --max-time 10 -o "$T/s$i.pb.gz" -w '%{http_code} %{time_total}' \
		"$SERVER_URL/debug/pprof/profile?seconds=2" 2>"$T/curl.err") ||
		fail "scrape $i: $(cat "$T/curl.err")"
	assert_eq "scrape $i status" "${w% *}" 200
	awk -v t="${w#* }" 'BEGIN { exit !(t >= 1.9 && t <= 5) }' ||
		fail "scrape $i answered in ${w#* } s, not within 2 + 3 s"
	n=$(pprof_raw_total "$T/s$i.pb.gz")
	awk -v n="$n" 'BEGIN { exit !(n >= 170 && n <= 205) }' || fail "scrape $i: $n samples, expected 170 to 205"
	[ "$(tracer_pid "$HOT")" = 0 ] || fail "target traced between scrapes (after scrape $i)"
	[ "$i" = 5 ] && rss5=$(rss)
	# the next scrape 3 s after this one started
	left=$(( 3000 - ($(date +%s%N) - started) / 1000000 ))
	[ "$left" -gt 0 ] && sleep "$(awk -v ms="$left" 'BEGIN {printf "%.3f", ms / 1000}')"
done
rss20=$(rss)
note "RSS after scrape 5: $rss5 kB, after scrape 20: $rss20 kB"
if ! $asan; then
	# (less is no leak: the kernel may reclaim clean pages meanwhile)
	assert_within "RSS growth from scrape 5 to 20 (kB)" $((rss20 - rss5)) -1000000 1024
fi
assert_eq "log lines" "$(grep -c '^csampler: 127\.0\.0\.1:[0-9]* GET /debug/pprof/profile?seconds=2 200 [0-9]* bytes' "$T/srv.err")" 20
assert_untraced_running "$HOT"
kill -TERM "$SERVER_PID"
wait_exit "$SERVER_PID" 15 "csampler --serve after SIGTERM" "$HOT"
assert_eq "exit status" "$WAIT_STATUS" 0
