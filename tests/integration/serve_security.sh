#!/bin/sh
# serve_security: who may ask csampler --serve for a profile, and what a
# request can make it do. With --serve-token-file every path answers 401
# (with WWW-Authenticate: Bearer) unless the request carries
# "Authorization: Bearer TOKEN", and 200 with it; a token file that is a
# FIFO or /dev/zero is refused at once
# (it blocked the open, or read without end); a token file others can
# read is warned about. unix:PATH makes a socket of mode 0600 that curl
# reaches, replaces a stale one, refuses a file that is not a socket (exit
# 72), and is removed at exit. A non-loopback address without a token is
# warned about. Hostile input: the process name in the index is escaped
# HTML, the request line in the log escaped for the terminal, an oversized
# request refused without harm to the server.
. "$TESTS_SRCDIR/lib.sh"
need_root
need_cmd curl

start_fixture hot 300
HOT=$FIXTURE_PID

# a bearer token
printf 's3cret-token\n' >"$T/token"
chmod 644 "$T/token"
start_server --serve 0 --serve-token-file "$T/token" -p "$HOT"
grep -q "^csampler: the token file '$T/token' can be read by others (mode 644): chmod 600 it" "$T/srv.err" ||
	fail "no warning about the token file's mode: $(cat "$T/srv.err")"
for path in / /debug/pprof/ "/debug/pprof/profile?seconds=1" /debug/pprof/dump /debug/pprof/heap; do
	http_get "$path" "$T/body"
	assert_eq "$path without a token" "$HTTP_STATUS" 401
	grep -qi '^WWW-Authenticate: Bearer realm="csampler"' "$HTTP_HEADERS" ||
		fail "401 without WWW-Authenticate: $(cat "$HTTP_HEADERS")"
	http_get "$path" "$T/body" -H "Authorization: Bearer s3cret-toke"
	assert_eq "$path with a wrong token" "$HTTP_STATUS" 401
done
http_get "/debug/pprof/profile?seconds=1&format=folded" "$T/ok.folded" -H "Authorization: Bearer s3cret-token"
assert_eq "profile with the token" "$HTTP_STATUS" 200
assert_folded_has "$T/ok.folded" 'work_round;[abc]1;.*leaf_[abc]'   # (hot's; 1 s: any leaf)
http_get /debug/pprof/heap "$T/body" -H "Authorization: Bearer s3cret-token"
assert_eq "a Go-only path with the token" "$HTTP_STATUS" 404
assert_eq "the target untraced" "$(tracer_pid "$HOT")" 0
kill -TERM "$SERVER_PID"
wait_exit "$SERVER_PID" 10 "csampler --serve"

# a token file that is a FIFO (its open would wait for a writer) or a
# device (/dev/zero: its read would never end): refused at once
mkfifo "$T/fifo"
for f in "$T/fifo" /dev/zero; do
	CS_TIMEOUT=10 run_csampler --serve 0 --serve-token-file "$f" -p "$HOT"
	assert_eq "token file $f: exit status" "$CS_STATUS" 72
	grep -q "^csampler: the token file '$f' is not a regular file" "$T/cs.err" || fail "$(cat "$T/cs.err")"
done

# a Unix socket
SOCK=$T/cs.sock
printf 'not a socket' >"$SOCK"
run_csampler --serve "unix:$SOCK" -p "$HOT"
assert_eq "exit status for a path that is a file" "$CS_STATUS" 72
grep -q "^csampler: cannot serve on unix:$SOCK: the file exists and is not a socket" "$T/cs.err" ||
	fail "$(cat "$T/cs.err")"
rm -f "$SOCK"
python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$SOCK"
start_server --serve "unix:$SOCK" -p "$HOT"
assert_eq "socket mode (a stale socket replaced)" "$(stat -c '%a %F' "$SOCK")" "600 socket"
cpu_mark "$HOT"
w=$(curl -sS --unix-socket "$SOCK" -o "$T/u.folded" -w '%{http_code}' \
	"http://localhost/debug/pprof/profile?seconds=1&format=folded")
cpu_window "$HOT"
assert_eq "profile over the Unix socket" "$w" 200
assert_window_samples "samples over the Unix socket" "$(folded_total "$T/u.folded")" 99 1 1 85 106
grep -q '^csampler: unix GET /debug/pprof/profile?seconds=1&format=folded 200 ' "$T/srv.err" ||
	fail "log line: $(cat "$T/srv.err")"
kill -TERM "$SERVER_PID"
wait_exit "$SERVER_PID" 10 "csampler --serve"
assert_eq "exit status" "$WAIT_STATUS" 0
[ -e "$SOCK" ] && fail "the socket is left after exit"

# any address: said
start_server --serve 0.0.0.0:0 -p "$HOT"
grep -q "^csampler: serving on 0.0.0.0 to anyone who can reach it: it can read the stacks of process $HOT; give --serve-token-file" "$T/srv.err" ||
	fail "no warning for 0.0.0.0: $(cat "$T/srv.err")"
kill -TERM "$SERVER_PID"
wait_exit "$SERVER_PID" 10 "csampler --serve"

# hostile input: a process named with markup, a request line with escapes,
# an oversized request
ln -s "$PROGS/hot" "$T/<i>&x"
start_server --serve 0 -- "$T/<i>&x" 300
http_get /debug/pprof/ "$T/index"
assert_eq "index status" "$HTTP_STATUS" 200
grep -q '<code>&lt;i&gt;&amp;x</code>' "$T/index" || fail "process name not escaped: $(grep code "$T/index" | head -2)"
grep -q '<i>&x' "$T/index" && fail "raw markup from the process name in the index"
port=${SERVER_URL##*:}
bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"; printf "GET /debug/pprof/\033[31mRED\007 HTTP/1.0\r\n\r\n" >&3; cat <&3 >/dev/null' \
	raw "$port" || fail "raw request failed"
grep -q "$(printf '\033')" "$T/srv.err" && fail "an escape sequence reached the log: $(cat -v "$T/srv.err")"
grep -Fq 'GET /debug/pprof/\x1b[31mRED\x07 404 ' "$T/srv.err" || fail "log line: $(cat -v "$T/srv.err")"
big=$(head -c 100000 /dev/zero | tr '\0' a)
w=$(curl -sS -o /dev/null -w '%{http_code}' -H "X-Big: $big" "$SERVER_URL/debug/pprof/" 2>/dev/null) || w=closed
case "$w" in 413|414|431|closed|000) ;; *) fail "a 100 kB header answered $w" ;; esac
# (the line is written as the connection closes: wait for it, 5 s at most)
for i in $(seq 1 50); do
	grep -q '^csampler: 127\.0\.0\.1:[0-9]* /debug/pprof/ refused: malformed or oversized request' \
		"$T/srv.err" && break
	sleep 0.1
done
grep -q '^csampler: 127\.0\.0\.1:[0-9]* /debug/pprof/ refused: malformed or oversized request' "$T/srv.err" ||
	fail "no log line for the oversized request: $(cat -v "$T/srv.err")"
http_get /debug/pprof/ "$T/index2"
assert_eq "the server after the oversized request" "$HTTP_STATUS" 200
kill -TERM "$SERVER_PID"
wait_exit "$SERVER_PID" 10 "csampler --serve"
assert_eq "exit status" "$WAIT_STATUS" 0
assert_untraced_running "$SERVED_PID"
kill -0 "$SERVED_PID" || fail "the launched program did not outlive the server stopped by SIGTERM"
