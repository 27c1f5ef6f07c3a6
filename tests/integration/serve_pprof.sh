#!/bin/sh
# serve_pprof: csampler --serve answers go tool pprof and curl as Go's
# net/http/pprof would, for a process not made for it. Against the hot
# fixture (leaf_a/b/c 50/30/20): `go tool pprof -top URL` shows the split
# within tolerance and `-raw URL` holds a window's samples (seconds x rate
# for one busy thread); every path answers its status and content type (the
# index 200 HTML; profile 200 gzipped pprof with Content-Disposition; svg,
# folded, text and speedscope as asked, the SVG well-formed and the folded
# stacks drawn by flamegraph.pl; dump 200 with the thread's frames; Go's
# other profiles and unknown paths 404 saying why; bad parameters 400 with
# the reason; POST 405); two overlapping requests are each answered with
# their own window from one sampling stream (one attach for both); a
# request at another rate while one runs gets 409, and a dump 409; the
# target is untraced before, between and after requests.
. "$TESTS_SRCDIR/lib.sh"
need_root
need_cmd curl
need_cmd xmllint
need_flamegraph
need_go

start_fixture hot 300
HOT=$FIXTURE_PID
start_server --serve 0 -v -F 199 -p "$HOT"
assert_eq "tracer of the target before any request" "$(tracer_pid "$HOT")" 0

# go tool pprof, straight from the URL
"$GO" tool pprof -top "$SERVER_URL/debug/pprof/profile?seconds=3" >"$T/top" 2>"$T/top.err" ||
	fail "go tool pprof -top URL: $(cat "$T/top.err")"
# (4.3 standard errors of each share over the samples the window had: the
# total's seconds at 199 Hz; about 600 on a quiet machine, 8 points)
n=$(sed -nE 's/.* of ([0-9.]+)(m?s) total.*/\1 \2/p' "$T/top" |
	awk '{ printf "%.0f\n", ($2 == "ms" ? $1 / 1000 : $1) * 199 }')
[ "${n:-0}" -gt 0 ] || fail "no total in -top URL: $(head -8 "$T/top")"
for leaf in leaf_a:50 leaf_b:30 leaf_c:20; do
	share=$(awk -v f="${leaf%:*}" '$NF == f {sub(/%/, "", $2); print $2}' "$T/top")
	tol=$(share_se 4.3 "${leaf#*:}" "$n")
	assert_within "flat share of ${leaf%:*} in -top URL ($n samples: +- $tol)" "${share:-none}" \
		"$(awk -v w="${leaf#*:}" -v t="$tol" 'BEGIN { print w - t }')" "$(awk -v w="${leaf#*:}" -v t="$tol" 'BEGIN { print w + t }')"
done
assert_match "-top header" "$(cat "$T/top")" "Duration: 3(\\.[0-9]+)?s, Total samples"
assert_untraced_running "$HOT"

cpu_mark "$HOT"
"$GO" tool pprof -raw "$SERVER_URL/debug/pprof/profile?seconds=2" >"$T/raw" 2>"$T/raw.err" ||
	fail "go tool pprof -raw URL: $(cat "$T/raw.err")"
cpu_window "$HOT"
total=$(awk '/^Samples:/ {s = 1; next} /^Locations/ {s = 0} s && /^ *[0-9]+ +[0-9]+:/ {n += $1} END {print n + 0}' "$T/raw")
assert_window_samples "samples of a 2 s window at 199 Hz (-raw URL)" "$total" 199 2 1 85 103
assert_match "-raw period" "$(grep '^Period:' "$T/raw")" "^Period: 5025125$"

# each path, its status and type
http_get /debug/pprof/ "$T/index"
assert_eq "index status" "$HTTP_STATUS" 200
assert_eq "index type" "$HTTP_TYPE" "text/html; charset=utf-8"
grep -q 'href="/debug/pprof/profile?seconds=30"' "$T/index" || fail "index lacks the profile link"
grep -q "process $HOT (<code>hot</code>)" "$T/index" || fail "index does not name the process"

cpu_mark "$HOT"
http_get "/debug/pprof/profile?seconds=1" "$T/p.pb.gz"
cpu_window "$HOT"
assert_eq "profile status" "$HTTP_STATUS" 200
assert_eq "profile type" "$HTTP_TYPE" application/octet-stream
grep -qi '^Content-Disposition: attachment; filename="profile"' "$HTTP_HEADERS" ||
	fail "no Content-Disposition: $(cat "$HTTP_HEADERS")"
assert_eq "profile is gzip" "$(head -c 2 "$T/p.pb.gz" | od -An -tx1 | tr -d ' ')" 1f8b
assert_window_samples "samples of a 1 s pprof window" "$(pprof_raw_total "$T/p.pb.gz")" 199 1 1 85 103

# window_has FORMAT FILE REGEX: a 1 s window in FORMAT into FILE, asked
# again while no line matches REGEX, 5 windows at most (a target starved
# beside the sanitizer stage, 0.023 CPUs, had 3 samples in a second:
# leaf_a, half of them, can miss one); 0 once a window matched
window_has() {
	local try
	for try in 1 2 3 4 5; do
		http_get "/debug/pprof/profile?seconds=1&format=$1" "$2"
		[ "$HTTP_STATUS" = 200 ] || return 1
		grep -Eq "$3" "$2" && return 0
		note "$1 window $try: no line matches /$3/ in $(wc -l <"$2") lines"
	done
	return 1
}
window_has folded "$T/p.folded" 'main;.*a10;leaf_a [0-9]+$'
assert_eq "folded status" "$HTTP_STATUS" 200
assert_eq "folded type" "$HTTP_TYPE" "text/plain; charset=utf-8"
assert_folded_has "$T/p.folded" 'main;.*a10;leaf_a [0-9]+$'
perl "$FLAMEGRAPH_PL" "$T/p.folded" >"$T/fg.svg" 2>"$T/fg.err" || fail "flamegraph.pl: $(cat "$T/fg.err")"
grep -q 'leaf_a' "$T/fg.svg" || fail "flamegraph.pl drew no leaf_a"
http_get "/debug/pprof/profile?seconds=1&format=svg&threads=1" "$T/p.svg"
assert_eq "svg status" "$HTTP_STATUS" 200
assert_eq "svg type" "$HTTP_TYPE" image/svg+xml
xmllint --noout "$T/p.svg" 2>"$T/xml.err" || fail "SVG not well-formed: $(head -3 "$T/xml.err")"
grep -q "hot-$HOT" "$T/p.svg" || fail "threads=1 drew no thread frame hot-$HOT"
window_has text "$T/p.txt" '^ +[0-9]+ +[0-9.]+% .*leaf_a'
assert_eq "text status" "$HTTP_STATUS" 200
grep -Eq '^ +[0-9]+ +[0-9.]+% .*leaf_a' "$T/p.txt" || fail "text report lacks leaf_a: $(head -20 "$T/p.txt")"
http_get "/debug/pprof/profile?seconds=1&format=speedscope" "$T/p.json"
assert_eq "speedscope status" "$HTTP_STATUS" 200
assert_eq "speedscope type" "$HTTP_TYPE" application/json
python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); assert d["profiles"], "no profiles"' \
	"$T/p.json" 2>"$T/json.err" || fail "speedscope JSON: $(cat "$T/json.err")"

# (a runnable thread given no CPU in the dump's 0.4 s, at load 20 in CI's
# busybox run, has no stack, and says so: asked again, up to 3 times)
for try in 1 2 3; do
	http_get /debug/pprof/dump "$T/dump"
	grep -q 'did not stop within' "$T/dump" || break
	note "dump $try: the thread got no CPU in time: $(grep -A1 '^Thread' "$T/dump" | tail -1)"
done
assert_eq "dump status" "$HTTP_STATUS" 200
grep -q "^Process $HOT: 1 thread" "$T/dump" || fail "dump: $(head -3 "$T/dump")"
# (where it is: mostly a leaf; starved at load 5, once in worker's now())
grep -Eq ' in (leaf_[abc]|work_round|worker) ' "$T/dump" || fail "dump shows no frame of hot's: $(cat "$T/dump")"
assert_untraced_running "$HOT"

for p in heap allocs block mutex goroutine threadcreate trace cmdline symbol; do
	http_get "/debug/pprof/$p?debug=1" "$T/go"
	assert_eq "/debug/pprof/$p status" "$HTTP_STATUS" 404
	grep -q '^csampler serves CPU profiles only' "$T/go" || fail "/debug/pprof/$p: $(cat "$T/go")"
done
http_get /metrics "$T/none"
assert_eq "/metrics status" "$HTTP_STATUS" 404
for q in "seconds=0:seconds" "seconds=301:seconds" "seconds=2.5:seconds" "hz=0:hz" \
	 "frequency=20000:frequency" "idle=2:idle" "format=png:format"; do
	http_get "/debug/pprof/profile?${q%:*}" "$T/bad"
	assert_eq "status of ?${q%:*}" "$HTTP_STATUS" 400
	grep -q "^bad request: ${q#*:} must be" "$T/bad" || fail "?${q%:*}: $(cat "$T/bad")"
done
http_get /debug/pprof/profile "$T/post" -X POST
assert_eq "POST status" "$HTTP_STATUS" 405

# two overlapping requests, one stream; a third at another rate, and a dump
attaches=$(grep -c '^csampler: attached to process' "$T/srv.err")
cpu_mark "$HOT"
long0=$CPU_MARK_CPU wall0=$CPU_MARK_WALL
http_get "/debug/pprof/profile?seconds=4&format=folded" "$T/long.folded" &
LONG=$!
# a dump while it is open (asked as soon as its attach shows: later, a
# slow host's requests took the window's 4 s, and the dump was answered)
wait_traced "$HOT" "the long window's attach"
http_get /debug/pprof/dump "$T/busy"
assert_eq "dump while a window is open" "$HTTP_STATUS" 409
# (another rate, asked then too: under ASAN, asked after the short window,
# the long one had ended)
http_get "/debug/pprof/profile?seconds=1&hz=999" "$T/conflict"
assert_eq "another rate while a window is open" "$HTTP_STATUS" 409
grep -q '^a profile at 199 Hz is being taken' "$T/conflict" || fail "409 body: $(cat "$T/conflict")"
retry=$(sed -n 's/^Retry-After: \([0-9]*\).*/\1/Ip' "$HTTP_HEADERS" | tr -d '\r')
[ -n "$retry" ] || fail "409 without Retry-After: $(cat "$HTTP_HEADERS")"
left=$(awk -v w0="$wall0" -v now="$(date +%s%N)" 'BEGIN { printf "%d", 4 - (now - w0) / 1e9 + 0.999 }')
assert_within "409's Retry-After (the long window's time left: $left s)" "$retry" "$left" "$((left + 1))"
sleep 1
cpu_mark "$HOT"
short_sent=$(date +%s%N)
http_get "/debug/pprof/profile?seconds=1&format=folded" "$T/short.folded"
cpu_window "$HOT"
assert_eq "short request during the long one" "$HTTP_STATUS" 200
assert_window_samples "samples of the short window" "$(folded_total "$T/short.folded")" 199 1 1 85 103
wait "$LONG"
CPU_MARK_CPU=$long0 CPU_MARK_WALL=$wall0
cpu_window "$HOT"
assert_window_samples "samples of the long window" "$(folded_total "$T/long.folded")" 199 4 1 90 102
# one attach for both, where the short window was asked within the long
# one's 4 s (it opens at its attach, after wall0); asked later, on a host
# that delayed the steps between, the long one may have ended before, and
# the short one attaches anew (CI: 11 attaches where 10 were expected)
n=$(grep -c '^csampler: attached to process' "$T/srv.err")
late=$(( (short_sent - wall0) / 1000000 ))
if [ "$late" -lt 4000 ]; then
	assert_eq "attaches for the two overlapping windows" "$n" $((attaches + 1))
else
	note "the short window was asked $late ms after the long one: they may not overlap"
	assert_within "attaches for the two windows" "$n" $((attaches + 1)) $((attaches + 2))
fi
assert_untraced_running "$HOT"

# 8 profiles at once, the most: a ninth (from another address: 8
# connections is one client's most) is answered 503 (or, where the server
# read it before one of the 8, that one is) with Retry-After the
# time until the first of them ends, when a place frees (it was the
# last's: 8 s where 2 were left). The ninth is sent once the server has
# the 8 connections (at load 12 the curls took more than the second
# once waited): the shortest window, 5 s, opened since the curls began.
port=$(printf '%04X' "${SERVER_URL##*:}")
served() { awk -v p=":$port" 'substr($2, length($2) - 4) == p && $4 == "01" { n++ } END { print n + 0 }' /proc/net/tcp; }
began=$(date +%s%N)
curls=""
for s8 in 5 6 7 8 9 10 11 12; do
	curl -sS --max-time 40 -o /dev/null -D "$T/h8.$s8" -w '%{http_code}\n' \
		"$SERVER_URL/debug/pprof/profile?seconds=$s8" >"$T/code8.$s8" 2>/dev/null &
	curls="$curls $!"
done
for try in $(seq 1 80); do
	[ "$(served)" -ge 8 ] && break
	sleep 0.05
done
[ "$(served)" -ge 8 ] || fail "the server has $(served) of the 8 connections after 4 s"
sleep 0.3   # (each request read and its window opened)
w=$(curl -sS --interface 127.0.0.2 -D "$T/h9" -o "$T/b9" -w '%{http_code}' \
	"$SERVER_URL/debug/pprof/profile?seconds=1" 2>"$T/curl9.err") || w="000 $(cat "$T/curl9.err")"
case "$w" in
503)	retry=$(sed -n 's/^Retry-After: \([0-9]*\).*/\1/Ip' "$T/h9" | tr -d '\r')
	least=$(awk -v b="$began" -v now="$(date +%s%N)" 'BEGIN { l = int(5 - (now - b) / 1e9); print l < 1 ? 1 : l }')
	assert_within "its Retry-After (the shortest window, 5 s, opened since the curls began)" "${retry:-0}" "$least" 5
	grep -q "retry in $retry seconds" "$T/b9" || fail "503 body: $(cat "$T/b9")"
	wait $curls
	assert_eq "the 8 at once: answered 200 ($(cat "$T"/code8.* | tr "\n" " "))" "$(cat "$T"/code8.* | grep -c '^200$')" 8 ;;
200)	# (one of the 8 had its connection but was not read yet when the
	# ninth came, 0.3 s later: CI's sanitizer build once; then that one is
	# the ninth, and is refused)
	wait $curls
	late=$(grep -l '^503$' "$T"/code8.* | head -n 1)
	assert_eq "9 at once, the ninth served: the others' answers ($(cat "$T"/code8.* | tr "\n" " "))" \
		"$(cat "$T"/code8.* | grep -c '^503$')" 1
	note "a request of the 8 was read after the ninth, and refused: ${late##*.} s"
	retry=$(sed -n 's/^Retry-After: \([0-9]*\).*/\1/Ip' "$T/h8.${late##*.}" | tr -d '\r')
	assert_within "its Retry-After (a window of at most 12 s open)" "${retry:-0}" 1 12 ;;
*)	fail "a ninth profile at once: $w, 503 expected (or 200 with one of the 8 refused)" ;;
esac

kill -TERM "$SERVER_PID"
wait_exit "$SERVER_PID" 15 "csampler --serve after SIGTERM" "$HOT"
assert_eq "exit status after SIGTERM ($(tail -3 "$T/srv.err"))" "$WAIT_STATUS" 0
assert_untraced_running "$HOT"
assert_match "request log line" "$(grep 'GET /debug/pprof/profile?seconds=1&format=folded' "$T/srv.err")" \
	'^csampler: 127\.0\.0\.1:[0-9]+ GET /debug/pprof/profile\?seconds=1&format=folded 200 [0-9]+ bytes [0-9.]+s$'
kill -0 "$HOT" || fail "the target died"
