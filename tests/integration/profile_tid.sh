#!/bin/sh
# profile_tid: -t TID samples only that thread (repeatable), with both
# backends: every stack of a 4-thread busy fixture is the chosen thread's
# (--threads roots), and the start line names it. -p given a thread that is
# not its process's main one says so and what to use, and samples the
# whole process. A thread of another process, or none, is refused with the
# exit status of a bad target or a missing process. Without -d, the run
# ends when the chosen threads have all exited, the process running on.
# --serve's tid= parameter does the same for one request, and a tid that
# is not a thread of the process is a 400.
. "$TESTS_SRCDIR/lib.sh"
need_root
need_cmd python3
need_cmd curl

start_fixture stopme 4 busy
P=$FIXTURE_PID
set -- $(ls /proc/"$P"/task | sort -n)
[ $# -ge 4 ] || harness "stopme 4 busy has $# threads"
T2=$2 T3=$3

# roots THREADS: the distinct root frames of $T/t.folded, sorted, one line
roots() { awk '{ split($1, f, ";"); print f[1] }' "$T/t.folded" | sort -u | tr '\n' ' '; }

for backend in ptrace perf; do
	run_csampler --backend="$backend" -t "$T2" --threads -F 499 -d 1 -o "$T/t.folded"
	assert_eq "$backend -t $T2: status" "$CS_STATUS" 0
	grep -q "sampling thread $T2 of process $P at" "$T/cs.err" ||
		fail "$backend -t: start line: $(head -2 "$T/cs.err")"
	assert_eq "$backend -t $T2: the threads sampled" "$(roots)" "stopme-$T2 "
	[ "$(folded_total "$T/t.folded")" -gt 0 ] || fail "$backend -t $T2: no samples"

	run_csampler --backend="$backend" -p "$P" -t "$T2" --tid="$T3" --threads -F 499 -d 1 -o "$T/t.folded"
	assert_eq "$backend -t $T2 -t $T3: status" "$CS_STATUS" 0
	assert_eq "$backend -t $T2 -t $T3: the threads sampled" "$(roots)" \
		"$(printf 'stopme-%s\nstopme-%s\n' "$T2" "$T3" | sort | tr '\n' ' ')"
done

# --serve: tid= for one request; others get every thread
start_server --serve 0 -F 199 -p "$P"
http_get "/debug/pprof/profile?seconds=1&format=folded&threads=1&tid=$T3" "$T/t.folded"
assert_eq "served tid=$T3: status" "$HTTP_STATUS" 200
assert_eq "served tid=$T3: the threads" "$(roots)" "stopme-$T3 "
http_get "/debug/pprof/profile?seconds=1&format=folded&threads=1" "$T/t.folded"
[ "$(roots | wc -w)" -eq 4 ] || fail "served without tid=: not every thread: $(roots)"
http_get "/debug/pprof/profile?seconds=1&tid=1" "$T/bad.txt"
assert_eq "served tid=1: status" "$HTTP_STATUS" 400
grep -q "tid 1 is not a thread of process $P" "$T/bad.txt" || fail "tid=1: $(cat "$T/bad.txt")"
kill -TERM "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null

# -p TID: said, and the whole process sampled
run_csampler -p "$T2" --threads -F 499 -d 1 -o "$T/t.folded"
assert_eq "-p $T2: status" "$CS_STATUS" 0
grep -q "^csampler: $T2 is a thread of process $P: sampling every thread of the process (-t $T2 samples that thread alone)" "$T/cs.err" ||
	fail "-p TID: not said: $(head -2 "$T/cs.err")"
[ "$(roots | wc -w)" -eq 4 ] || fail "-p $T2: not every thread sampled: $(roots)"

# refused: a thread of another process, no such thread
start_fixture stopme 2 sleep
run_csampler -p "$P" -t "$FIXTURE_PID" -d 1 -o "$T/t.folded"
assert_eq "-t of another process: status" "$CS_STATUS" 66
grep -q "thread $FIXTURE_PID is in process $FIXTURE_PID, not $P: -t takes threads of one process" "$T/cs.err" ||
	fail "-t of another process: $(cat "$T/cs.err")"
kill_ours TERM "$FIXTURE_PID"
wait "$FIXTURE_PID" 2>/dev/null
run_csampler -t "$FIXTURE_PID" -d 1 -o "$T/t.folded"
assert_eq "-t of no thread: status" "$CS_STATUS" 65
grep -q "no such thread: $FIXTURE_PID" "$T/cs.err" || fail "-t of no thread: $(cat "$T/cs.err")"

# the run ends with its thread: a thread that waits to be traced (a starved
# csampler may take seconds to attach), sleeps 0.5 s more, then exits
python3 -c '
import threading, time
def traced(tid):
    with open("/proc/self/task/%d/status" % tid) as f:
        return any(l.startswith("TracerPid:") and l.split()[1] != "0" for l in f)
def body():
    tid = threading.get_native_id()
    deadline = time.monotonic() + 60
    while not traced(tid) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
t = threading.Thread(target=body)
t.start()
print("ready", t.native_id, flush=True)
t.join()
time.sleep(120)' >"$T/py.out" &
py=$!
FIXTURE_PIDS="$FIXTURE_PIDS $py"
for i in $(seq 1 100); do grep -q '^ready' "$T/py.out" && break; sleep 0.05; done
tid=$(awk '/^ready/ { print $2 }' "$T/py.out")
[ -n "$tid" ] || harness "python3 printed no thread id"
CS_TIMEOUT=30 run_csampler --idle -t "$tid" -o "$T/t.folded"
assert_eq "-t of a thread that exits: status" "$CS_STATUS" 0
kill -0 "$py" || fail "the process ended with its thread"
exit 0
