#!/bin/sh
# serve_slow_clients: --serve stays answerable while clients hold
# connections without ever sending a whole request. 32 connections from
# four other loopback addresses (8 each, the most one client may hold),
# each sending one header byte every 2 s (or bytes that never make a
# request line): a ninth from one of them is refused, and logged; a real
# request from 127.0.0.1 while the server is full is refused, and logged;
# within the header deadline (10 s) every dripping connection is closed,
# each logged, and the real request is answered.
. "$TESTS_SRCDIR/lib.sh"
need_root
need_cmd curl
need_cmd python3

start_fixture hot 300
HOT=$FIXTURE_PID
start_server --serve 0 -p "$HOT"
port=${SERVER_URL##*:}

# drip: 8 connections from 127.0.0.2, then a ninth, then 8 from each of
# 127.0.0.3-5, each sending a byte every 2 s; prints "ninth closed" if the server closed it at
# once, and at the end "closed N" with how many of the 32 the server closed
cat >"$T/drip.py" <<'PY'
import socket, sys, time
port = int(sys.argv[1])
conns = []
def open_from(host):
    for i in range(8):
        s = socket.socket()
        s.bind((host, 0))
        s.connect(("127.0.0.1", port))
        s.setblocking(False)
        s.send(b"G" if host != "127.0.0.5" else b"\x01\x02")
        conns.append(s)
open_from("127.0.0.2")
time.sleep(0.2)
ninth = socket.create_connection(("127.0.0.1", port), source_address=("127.0.0.2", 0))
ninth.settimeout(3)
try:
    print("ninth closed" if ninth.recv(1) == b"" else "ninth answered", flush=True)
except ConnectionResetError:
    print("ninth closed", flush=True)
except socket.timeout:
    print("ninth held", flush=True)
for host in ("127.0.0.3", "127.0.0.4", "127.0.0.5"):
    open_from(host)
time.sleep(0.2)
print("full", flush=True)
closed = set()
# (the monotonic clock: a step of the wall clock once ended this loop
# early; the loop ends once all are closed, near 11 s, so its bound only
# says how long a loaded host may take)
start = time.monotonic()
while time.monotonic() - start < 24 and len(closed) < len(conns):
    for n, s in enumerate(conns):
        if n in closed:
            continue
        try:
            s.send(b"E" if n < 24 else b"\x03")
            if s.recv(1) == b"":
                closed.add(n)
        except BlockingIOError:
            pass
        except OSError:
            closed.add(n)
    time.sleep(2)
print("closed %d" % len(closed), flush=True)
PY
python3 "$T/drip.py" "$port" >"$T/drip.out" 2>"$T/drip.err" &
DRIP=$!
for i in $(seq 1 200); do grep -q '^full' "$T/drip.out" && break; sleep 0.05; done
grep -q '^full' "$T/drip.out" || harness "the dripping clients did not connect: $(cat "$T/drip.err")"
assert_eq "a ninth connection from one client" "$(head -1 "$T/drip.out")" "ninth closed"
assert_match "its log line" "$(grep 'refused' "$T/srv.err" | head -1)" \
	'^csampler: 127\.0\.0\.2:[0-9]+ refused: 8 connections from 127\.0\.0\.2 already \(at most 8 per client\)$'
# the server is full: a real request is refused (and said, once a second
# at most), until the dripping connections meet their deadline
sleep 1.1
w=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 5 "$SERVER_URL/" 2>/dev/null) || true
assert_eq "a request while 32 connections drip" "${w:-000}" 000
assert_match "its log line" "$(grep 'refused' "$T/srv.err" | tail -1)" \
	'^csampler: 127\.0\.0\.1:[0-9]+ refused: the server holds its 32 connections'
wait "$DRIP"
case $(tail -1 "$T/drip.out") in
"closed 32") ;;
*) echo "# the server's log:"; sed 's/^/# /' "$T/srv.err" ;;
esac
assert_eq "dripping connections the server closed" "$(tail -1 "$T/drip.out")" "closed 32"
assert_eq "connections closed for their deadline (logged)" \
	"$(grep -c '^csampler: 127\.0\.0\.[2-5]:[0-9]* closed: no complete request within 10 s$' "$T/srv.err")" 32
http_get "/debug/pprof/profile?seconds=1&format=folded" "$T/after.folded"
assert_eq "a request after the deadline" "$HTTP_STATUS" 200
# (a profile of hot: any of its three leaves; one second of a niced hot on
# a busy host held 6 samples, none in leaf_a)
assert_folded_has "$T/after.folded" 'work_round;[abc]1;.*leaf_[abc]'
kill -TERM "$SERVER_PID"
wait_exit "$SERVER_PID" 10 "csampler --serve"
assert_eq "exit status" "$WAIT_STATUS" 0
exit 0
