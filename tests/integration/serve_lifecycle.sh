#!/bin/sh
# serve_lifecycle: how csampler --serve starts and ends, and what it leaves
# the target. SIGTERM and SIGINT mid-request: the client gets a complete
# 503 (its Content-Length all there), never a truncated 200; csampler exits
# 0; the target runs on untraced and every real-time signal sent to it
# during the request arrived. A client that goes away mid-request ends its
# window: the target is untraced at once, not when the window would have
# ended. A launched program: its exit ends the server with its status, and
# a request open then gets what was sampled until the exit (200). An
# attached process that exits ends the server with 0. An idle target: a
# 200 whose profile has no samples and parses; idle=1 counts its sleeping
# threads. A target that makes threads all the time: each sample under its
# own thread, request after request, and with requests that always overlap
# (one stream) csampler's thread keys stay to a few windows' worth. The usage and setup errors: --serve with -o, -d, --children; a port in use (exit 72, the
# program not launched); a missing token file (72).
. "$TESTS_SRCDIR/lib.sh"
need_root
need_cmd curl
need_go

# SIGTERM and SIGINT mid-request, with real-time signals (they queue: each
# counts) sent to the target while it is traced
for sig in TERM INT; do
	start_fixture sigcount recv
	SIGC=$FIXTURE_PID
	start_server --serve 0 -p "$SIGC"
	http_get "/debug/pprof/profile?seconds=20" "$T/mid.$sig" &
	GET=$!
	sleep 1
	[ "$(tracer_tgid "$SIGC")" = "$SERVER_PID" ] || fail "not traced by csampler during the request"
	"$PROGS/sigcount" send "$SIGC" 200 >/dev/null || harness "sigcount send failed"
	kill -"$sig" "$SERVER_PID"
	wait "$GET"
	w=$(curl -sS -o /dev/null -w '%{http_code}' "$SERVER_URL/" 2>/dev/null) || w=closed
	wait_exit "$SERVER_PID" 15 "csampler --serve after SIG$sig" "$SIGC"
	assert_eq "exit status after SIG$sig ($(tail -2 "$T/srv.err"))" "$WAIT_STATUS" 0
	assert_eq "body of the request open at SIG$sig" "$(cat "$T/mid.$sig")" "csampler is shutting down"
	len=$(sed -n 's/^Content-Length: \([0-9]*\).*/\1/Ip' "$T/headers" | tr -d '\r')
	assert_eq "its Content-Length" "$len" "$(wc -c <"$T/mid.$sig" | tr -d ' ')"
	assert_match "the server after SIG$sig" "$w" '^(closed|000)$'
	assert_untraced_running "$SIGC"
	kill -TERM "$SIGC"
	wait_exit "$SIGC" 10 "sigcount after SIGTERM"
	assert_match "signals the target got (SIG$sig to csampler)" "$(cat "$T/sigcount.out")" 'received 200 0'
done

# a client that goes away ends its window
start_fixture hot 300
HOT=$FIXTURE_PID
start_server --serve 0 -p "$HOT"
curl -s -o /dev/null --max-time 2 "$SERVER_URL/debug/pprof/profile?seconds=60"
for i in $(seq 1 60); do [ "$(tracer_pid "$HOT")" = 0 ] && break; sleep 0.1; done
assert_eq "tracer 4 s after the client went away (of a 60 s window)" "$(tracer_pid "$HOT")" 0
assert_match "log line of the abandoned request" "$(grep 'seconds=60' "$T/srv.err")" \
	'^csampler: 127\.0\.0\.1:[0-9]+ GET /debug/pprof/profile\?seconds=60 0 0 bytes [0-9.]+s \(client went away: not answered\)$'

# the attached process exits: the server ends, 0
kill -KILL "$HOT"
wait_exit "$SERVER_PID" 10 "csampler --serve after its process exited"
assert_eq "exit status when the attached process exited" "$WAIT_STATUS" 0
grep -q "^csampler: process $HOT exited: the server stops" "$T/srv.err" || fail "$(cat "$T/srv.err")"

# a launched program (started once: a request attaches to it): a request
# open when it exits gets what was sampled; the server ends with the
# program's status
# (the program sleeps until the request's attach traces it, and says its
# CPU then: the window's CPU is what it used after that line. Read by the
# test when the attach showed, a starved test read it late, after some of
# the window's CPU: 27 samples for 20 worth in CI; read from the server's
# start, 55-84% of it. Up to 115%: a starved program's few samples, 36 for
# 33 beside the CI, as a plain launch's 12-13 for 11.3)
start_server --serve 0 -- env HOT_WAIT_TRACED=1 "$PROGS/hot" 3
http_get "/debug/pprof/profile?seconds=30&format=folded" "$T/end.folded"
assert_eq "request open when the program exited" "$HTTP_STATUS" 200
assert_folded_has "$T/end.folded" 'leaf_a'
wait_exit "$SERVER_PID" 10 "csampler --serve after its program exited"
attached=$(awk '$1 == "traced" { print $2 }' "$T/srv.out")
[ -n "$attached" ] || fail "the request never attached to the launched program: $(cat "$T/srv.out")"
window_cpu=$(awk -v all="$(reported_cpu "$T/srv.out")" -v b="$attached" 'BEGIN { printf "%.3f\n", all - b / 1e9 }')
assert_samples "samples until the exit (99 Hz, about 3 s)" "$(folded_total "$T/end.folded")" 99 \
	"$window_cpu" 80 115
assert_eq "exit status: the program's (0)" "$WAIT_STATUS" 0
# started once: the request samples it, not a second copy (it did)
assert_eq "copies of the launched program that ran" "$(grep -c '^ready' "$T/srv.out")" 1
start_server --serve 0 -- sh -c 'sleep 1; exit 5'
wait_exit "$SERVER_PID" 10 "csampler --serve after its program exited"
assert_eq "exit status: the program's (5)" "$WAIT_STATUS" 5
# the same with a request open when it exits: the status seen by the stream
# (the shell waits until the request's attach traces it: started at once,
# its second of work had ended before a starved test's request came, and
# the server with it: curl's status 000)
start_server --serve 0 -- sh -c "echo ran >>'$T/ran'
	until grep -q '^TracerPid:[[:space:]]*[1-9]' /proc/\$\$/status; do sleep 0.01; done
	\"$PROGS/hot\" 1 >/dev/null; exit 6"
http_get "/debug/pprof/profile?seconds=30&format=folded" "$T/six.folded"
assert_eq "request open when the program (status 6) exited ($(cat "$T/curl.err"))" "$HTTP_STATUS" 200
wait_exit "$SERVER_PID" 10 "csampler --serve after its program exited"
assert_eq "exit status with a request open: the program's (6)" "$WAIT_STATUS" 6
assert_eq "times the program ran" "$(cat "$T/ran")" ran

# an idle target: a CPU profile without samples that still parses (Parca
# wants a non-empty pprof body), and idle=1 sees the sleeping threads
start_fixture sleepers 4
SLEEP=$FIXTURE_PID
start_server --serve 0 -p "$SLEEP"
http_get "/debug/pprof/profile?seconds=1" "$T/idle.pb.gz"
assert_eq "profile of an idle target" "$HTTP_STATUS" 200
[ -s "$T/idle.pb.gz" ] || fail "empty body for an idle target"
assert_eq "samples of an idle target" "$(pprof_raw_total "$T/idle.pb.gz")" 0
http_get "/debug/pprof/profile?seconds=1&idle=1" "$T/wall.pb.gz"
assert_eq "idle=1 status" "$HTTP_STATUS" 200
# 6 threads (main, 4 sleepers, late-spin) for a second at 99 Hz
assert_within "samples of idle=1" "$(pprof_raw_total "$T/wall.pb.gz")" 540 620
kill -TERM "$SERVER_PID"
wait_exit "$SERVER_PID" 10 "csampler --serve"

# a target that makes threads all the time: the thread keys, forgotten
# between requests, still name each sample's own thread
start_fixture churn 100000000 8
CHURN=$FIXTURE_PID
start_server --serve 0 -p "$CHURN"
# (a short thread is sampled in most 1 s requests; on a loaded host the
# fixture (nice 5) waits for a CPU: CI's mawk run at load 346 had one hold
# the main thread alone, and a --busy run's request had 5, 0 and 0 samples
# in 3 tries, as many as churn's own CPU was worth (beside six busy loops
# here: 15-28 samples for 19-30 ticks of its CPU), and CI's first stage
# once had a request of 8 samples, all the main thread's, while churn
# used 30 ticks (its /proc/PID/stat, ended threads included; quiet here
# 94-117 of 110-135 samples are short threads', 14-37 of 21-42 beside
# four busy loops). So a request is tried up to 6 times for a short
# thread, each try noted; every request's stacks are checked.)
for i in 1 2 3 4; do
	for try in 1 2 3 4 5 6; do
		t0=$(awk '{ print $14 + $15 }' "/proc/$CHURN/stat")
		http_get "/debug/pprof/profile?seconds=1&format=folded&threads=1" "$T/churn.folded"
		t1=$(awk '{ print $14 + $15 }' "/proc/$CHURN/stat")
		assert_eq "churn request $i" "$HTTP_STATUS" 200
		bad=$(grep -cv '^churn-[0-9][0-9]*;' "$T/churn.folded")
		assert_eq "stacks of request $i not under a churn thread" "$bad" 0
		grep -Eq '^churn-[0-9]+;.*short_thread_work' "$T/churn.folded" && break
		note "churn request $i, try $try: no short thread sampled ($(folded_total "$T/churn.folded") samples; churn used $((t1 - t0)) ticks of CPU): $(head -3 "$T/churn.folded" | tr '\n' ' ')"
	done
	assert_folded_has "$T/churn.folded" '^churn-[0-9]+;.*short_thread_work'
done
kill -TERM "$SERVER_PID"
wait_exit "$SERVER_PID" 10 "csampler --serve"

# requests that always overlap keep one stream running: the thread keys of
# threads gone go with the windows that held them (not one per thread the
# service ever made), and each sample stays under its own thread
# (windows of 3 s a second apart: of 2 s, CI's busybox stage once had two
# streams, a request come after the one before had ended)
start_server -v --serve 0 -p "$CHURN"
for i in 1 2 3 4 5 6; do
	curl -sS --max-time 60 -o "$T/over-$i.folded" -w '%{http_code}\n' \
		"$SERVER_URL/debug/pprof/profile?seconds=3&format=folded&threads=1" >"$T/over-$i.status" 2>&1 &
	sleep 1
done
wait_curls=0
while [ "$(cat "$T"/over-*.status 2>/dev/null | grep -c .)" -lt 6 ] && [ $wait_curls -lt 150 ]; do
	sleep 0.1
	wait_curls=$((wait_curls + 1))
done
# (a window can come out empty, or with no worker in it, where csampler
# got little CPU for it: of 2 s, CI's mawk run at load 71 had an empty one,
# its busybox run one of 4 samples, all of the main thread, and a quick
# group at -j6 two of 13 samples each, all of the main thread in clone3.
# A window of fewer than 30 samples (a sixth of a busy second's 198) is
# starved and only said; of the rest at most one may lack a worker, and at
# least three windows must have one)
empty=0 with_worker=0
for i in 1 2 3 4 5 6; do
	assert_eq "overlapping request $i" "$(cat "$T/over-$i.status")" 200
	n=$(folded_total "$T/over-$i.folded" 2>/dev/null)
	if ! grep -Eq "^churn-[0-9]+;.*thread_main" "$T/over-$i.folded" 2>/dev/null; then
		if [ "${n:-0}" -lt 30 ]; then
			note "overlapping request $i: a starved window, no worker sampled (${n:-0} samples)"
		elif [ $empty = 0 ]; then
			empty=1
			note "overlapping request $i: no worker sampled in its window ($n samples)"
		else
			assert_folded_has "$T/over-$i.folded" "^churn-[0-9]+;.*thread_main"
		fi
	else
		with_worker=$((with_worker + 1))
	fi
	grep "^churn-$CHURN;" "$T/over-$i.folded" | grep -q thread_main &&
		fail "request $i: the main thread's stacks hold a worker's"
	grep -v "^churn-$CHURN;" "$T/over-$i.folded" | grep -q ';main;' &&
		fail "request $i: a worker's stacks hold the main thread's"
done
assert_within "overlapping windows with a worker sampled" "$with_worker" 3 6
kill -TERM "$SERVER_PID"
wait_exit "$SERVER_PID" 10 "csampler --serve"
keys=$(sed -n 's/.*stream at [0-9]* Hz ended: thread keys \([0-9]*\) held of \([0-9]*\) made$/\1 \2/p' "$T/srv.err")
assert_eq "streams for 6 overlapping requests ($(grep -E 'GET /debug/pprof/profile|stream at' "$T/srv.err" | tr '\n' '|'))" \
	"$(printf '%s\n' "$keys" | grep -c .)" 1
held=${keys% *} made=${keys#* }
note "overlapping requests on churn: thread keys $held held of $made made"
assert_within "thread keys made in 8 s" "$made" 300 1000000
# the last window's and the live threads' only: about 3/8, at most 2/3
assert_within "thread keys held at the stream's end (of $made made)" "$((held * 3))" 1 "$((made * 2))"
kill -KILL "$CHURN"

# a refused attach (another tracer holds the process: a second csampler)
# answers 503 and leaves the server whole: once the other tracer is gone
# the next request is sampled (the failed attach freed the server's own
# recorder: a use-after-free, SIGSEGV, in the next one)
start_fixture hot 300
HOT=$FIXTURE_PID
start_server --serve 0 -p "$HOT"
"$CSAMPLER" -q -p "$HOT" -d 30 -o "$T/other.folded" 2>"$T/other.err" &
OTHER=$!
for i in $(seq 1 100); do [ "$(tracer_pid "$HOT")" != 0 ] && break; sleep 0.05; done
[ "$(tracer_pid "$HOT")" != 0 ] || harness "the other csampler did not attach: $(cat "$T/other.err")"
for i in 1 2; do
	http_get "/debug/pprof/profile?seconds=1&format=folded" "$T/refused.folded"
	assert_eq "request $i while another tracer holds the process" "$HTTP_STATUS" 503
done
assert_match "its body" "$(cat "$T/refused.folded")" 'traced by another program'
kill -INT "$OTHER"
wait_exit "$OTHER" 10 "the other csampler"
# (a second of a niced target under a loaded machine: a few samples, any
# of its three leaves; where that second had none, as a starved window
# can, the request is tried again, up to 3 times, each try noted)
for try in 1 2 3; do
	http_get "/debug/pprof/profile?seconds=1&format=folded" "$T/after.folded"
	assert_eq "request $try after the other tracer left" "$HTTP_STATUS" 200
	grep -Eq 'leaf_[abc] [0-9]+$' "$T/after.folded" && break
	note "request $try after the other tracer left: no leaf sampled ($(folded_total "$T/after.folded" 2>/dev/null) samples)"
done
assert_folded_has "$T/after.folded" 'leaf_[abc] [0-9]+$'
kill -TERM "$SERVER_PID"
wait_exit "$SERVER_PID" 10 "csampler --serve after a refused attach"
assert_eq "exit status after a refused attach" "$WAIT_STATUS" 0
kill -KILL "$HOT"

# setup errors
start_fixture hot 300
HOT=$FIXTURE_PID
for bad in "-o x.pb" "-d 5" "--children" "--interval 1 -o x-%s.pb"; do
	run_csampler --serve 0 $bad -p "$HOT"
	assert_eq "exit status of --serve $bad" "$CS_STATUS" 64
	grep -q "^csampler: --serve cannot be combined with" "$T/cs.err" || fail "--serve $bad: $(cat "$T/cs.err")"
done
run_csampler --serve-max-seconds 10 -p "$HOT"
assert_eq "--serve-max-seconds without --serve" "$CS_STATUS" 64
run_csampler --serve 70000 -p "$HOT"
assert_eq "port 70000" "$CS_STATUS" 64
start_server --serve 0 -p "$HOT"
port=${SERVER_URL##*:}
run_csampler --serve "$port" -- sh -c "touch $T/launched"
assert_eq "exit status for a port in use" "$CS_STATUS" 72
grep -q "^csampler: cannot serve on $port: Address already in use (another program listens there" "$T/cs.err" ||
	fail "port in use: $(cat "$T/cs.err")"
[ -e "$T/launched" ] && fail "the program was launched though the port was in use"
run_csampler --serve 0 --serve-token-file "$T/none" -p "$HOT"
assert_eq "exit status for a missing token file" "$CS_STATUS" 72
grep -q "^csampler: cannot read the token file '$T/none': No such file or directory" "$T/cs.err" ||
	fail "token file: $(cat "$T/cs.err")"
kill -TERM "$SERVER_PID"
wait_exit "$SERVER_PID" 10 "csampler --serve"
assert_untraced_running "$HOT"
