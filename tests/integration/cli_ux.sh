#!/bin/sh
# cli_ux: the mistakes and messages a new user meets first (issue 18).
# - an output that cannot be written fails at once, before sampling, with
#   exit 69 (not after a -d 1h run), and leaves the target untouched;
# - an unknown extension is a usage error naming the known ones; -f svg
#   -o x.svg is accepted and writes SVG;
# - launch mode with -o -: the profile on standard output is only the
#   profile (flamegraph.pl reads it whole); the program's own output goes to
#   standard error;
# - the summary says samples, CPU time, threads and the share of complete
#   stacks, in words that read as a summary; one line per file written says
#   how to view it; a run without -d says "Ctrl-C to stop"; the counters a
#   bug report needs come with -v only; a program reached through shell
#   shims that exec it is one thread.
. "$TESTS_SRCDIR/lib.sh"
need_root

start_fixture hot 60

# 1. unwritable outputs, before sampling
for out in /nonexistent-dir/x.svg /etc/passwd/x.folded; do
	start=$(date +%s)
	run_csampler -p "$FIXTURE_PID" -d 1h -o "$T/fine.folded" -o "$out"
	assert_eq "exit status for -o $out ($(cat "$T/cs.err"))" "$CS_STATUS" 69
	[ $(($(date +%s) - start)) -le 5 ] || fail "-o $out: failed only after sampling"
	assert_match "message for -o $out" "$(cat "$T/cs.err")" "^csampler: cannot create $out: "
	[ -e "$T/fine.folded" ] && fail "-o $out: the other output was written anyway"
	assert_untraced_running "$FIXTURE_PID"
done

# 2. extensions
run_csampler -p "$FIXTURE_PID" -d 1 -o "$T/out.json"
assert_eq "exit status for out.json" "$CS_STATUS" 64
assert_match "message for out.json" "$(head -1 "$T/cs.err")" \
	"unknown output file extension '.json' in '$T/out.json': use one of .*\\.folded.*\\.speedscope\\.json"
[ -e "$T/out.json" ] && fail "out.json was written"
run_csampler -q -p "$FIXTURE_PID" -d 0.5 -f svg -o "$T/x.svg"
assert_eq "exit status for -f svg -o x.svg ($(cat "$T/cs.err"))" "$CS_STATUS" 0
head -c 200 "$T/x.svg" | grep -q '<svg' || fail "-f svg -o x.svg did not write SVG"

# 3. -o - in launch mode: the program's stdout does not mix into the profile
need_cmd perl
FG=$(command -v flamegraph.pl || echo /usr/share/perl5/Devel/NYTProf/flamegraph.pl)
[ -f "$FG" ] || skip "needs flamegraph.pl (Debian libdevel-nytprof-perl)"
"$CSAMPLER" -F 199 -o - -- "$PROGS/burst" sleep 2000 1000 1 1 >"$T/stdout.folded" 2>"$T/stderr.txt" ||
	fail "csampler -o - failed: $(cat "$T/stderr.txt")"
grep -q '^ready ' "$T/stderr.txt" || fail "the program's output is not on standard error"
grep -q '^truth ' "$T/stderr.txt" || fail "the program's last line is not on standard error"
bad=$(grep -cvE '^.+ [0-9]+$' "$T/stdout.folded")
assert_eq "lines on standard output that are not folded stacks" "$bad" 0
grep -q 'ready\|truth' "$T/stdout.folded" && fail "the program's output is in the profile stream"
perl "$FG" "$T/stdout.folded" >"$T/fg.svg" 2>"$T/fg.err" || fail "flamegraph.pl: $(cat "$T/fg.err")"
grep -q 'spin_us' "$T/fg.svg" || fail "the flame graph lacks spin_us"

# 4. the summary
run_csampler -F 199 -d 1 -o "$T/s.folded" -o "$T/s.pb.gz" -p "$FIXTURE_PID"
assert_eq "exit status ($(cat "$T/cs.err"))" "$CS_STATUS" 0
cp "$T/cs.err" "$T/s.err"
err=$(cat "$T/cs.err")
assert_match "start line" "$err" "csampler: sampling process $FIXTURE_PID at 199 Hz for 1 s"
assert_match "summary" "$err" \
	"csampler: [0-9]+ samples \\([0-9.]+ s of CPU\\) from 1 thread in 1\\.[0-9] s at (199 Hz|[0-9]+ Hz of 199 asked); 100% of stacks complete"
assert_match "pprof hint" "$err" "csampler: wrote $T/s.pb.gz \\(pprof, [0-9]+ samples\\); view it: go tool pprof -http=: $T/s.pb.gz"
assert_match "folded hint" "$err" "csampler: wrote $T/s.folded \\(folded stacks, [0-9]+ samples\\); view it: flamegraph.pl"
printf '%s\n' "$err" | grep -q 'ticks missed\|sampled late\|pause p50' &&
	fail "diagnostics without -v: $err"
samples=$(printf '%s\n' "$err" | sed -nE 's/^csampler: ([0-9]+) samples.*/\1/p')
assert_eq "the summary's samples are the profile's" "$samples" "$(folded_total "$T/s.folded")"
run_csampler -v -F 199 -d 0.5 -o "$T/v.folded" -p "$FIXTURE_PID"
grep -qE '^csampler: [0-9]+ samples, [0-9]+ threads seen, [0-9]+ ticks missed' "$T/cs.err" ||
	fail "no diagnostics with -v: $(cat "$T/cs.err")"
# a rate far below the one asked is said: once sampling has started,
# csampler is moved to nice 19 on the one CPU of 8 busy threads (without
# real-time priority) and gets few ticks. The busy threads stop after the
# run, so csampler (slow under a sanitizer) then has the CPU to finish.
need_cmd taskset
need_cmd renice
start_fixture busy 8
for task in /proc/"$FIXTURE_PID"/task/*; do taskset -pc 0 "${task##*/}" >/dev/null; done
${CSAMPLER_WRAPPER:-} "$CSAMPLER" --realtime=0 -F 2000 -d 2 -o "$T/w.folded" -p "$FIXTURE_PID" \
	>"$T/w.out" 2>"$T/w.err" &
starved=$!
for i in $(seq 1 200); do
	grep -q '^csampler: sampling process' "$T/w.err" && break
	sleep 0.05
done
grep -q '^csampler: sampling process' "$T/w.err" || fail "csampler did not start: $(cat "$T/w.err")"
for task in /proc/"$starved"/task/*; do
	taskset -pc 0 "${task##*/}" >/dev/null 2>&1
	renice -n 19 -p "${task##*/}" >/dev/null 2>&1
done
sleep 2.5
kill "$FIXTURE_PID"
st=0
wait "$starved" || st=$?
assert_eq "exit status when starved ($(cat "$T/w.err"))" "$st" 0
grep -qE '^csampler: warning: sampled at [0-9]+ Hz of the 2000 Hz asked' "$T/w.err" ||
	fail "no warning about the rate: $(cat "$T/w.err")"
grep -qE '^csampler: [0-9]+ samples? .* at [0-9]+ Hz of 2000 asked; ' "$T/w.err" ||
	fail "the summary does not say the rate reached: $(cat "$T/w.err")"
# and none at an easy rate
grep -q 'warning: sampled at' "$T/s.err" 2>/dev/null && fail "a rate warning at 199 Hz"
# without -d: Ctrl-C to stop (the program's end stops it here)
run_csampler -o "$T/c.folded" -- "$PROGS/burst" sleep 1000 1000 1 1
assert_match "start line without -d" "$(cat "$T/cs.err")" \
	"csampler: sampling $PROGS/burst \\(pid [0-9]+\\) at 99 Hz until it exits; Ctrl-C to stop"

# a launched program that fails at once (a port in use): a hint about its
# end, not about --idle (it got the --idle hint); a process asleep: --idle
# (a tick may land in its start: then it has a sample, and no hint at all)
run_csampler -o "$T/f.folded" -- sh -c 'echo "port in use" >&2; exit 3'
assert_eq "exit status of a program that failed at once" "$CS_STATUS" 3
grep -q -- '--idle' "$T/cs.err" && fail "a program that failed at once got the --idle hint"
if [ "$(folded_total "$T/f.folded")" = 0 ]; then
	assert_match "its hint" "$(grep 'hint:' "$T/cs.err")" \
		'^csampler: hint: sh exited with status 3 after [0-9]+\.[0-9]{3} s without running on a CPU at a tick \(see its own messages above\)$'
fi
# a program reached through shell shims (each waits a little, so that
# csampler has seen it, then execs the next): one thread, not one per exec
# (it said 3 threads here, and 5 for four shims before)
for backend in ptrace perf; do
	run_csampler --backend=$backend -o "$T/x.folded" -- \
		sh -c "sleep 0.1; exec sh -c 'sleep 0.1; exec sh -c \"exec $PROGS/hot 0.5\"'"
	assert_eq "shims ($backend): status" "$CS_STATUS" 0
	assert_match "shims ($backend): threads" "$(grep -o 'from [0-9]* threads*' "$T/cs.err")" \
		'^from 1 thread$'
done
start_fixture sleepers 2
run_csampler -d 0.5 -o "$T/s.folded" -p "$FIXTURE_PID"
assert_match "hint for a process asleep" "$(grep 'hint:' "$T/cs.err")" '--idle profiles where blocked threads wait'
exit 0
