#!/bin/sh
# target_suspend: Ctrl-Z (SIGTSTP) to csampler lets the target go before
# csampler stops: while csampler is stopped the target is untraced, no
# thread of it is held in a ptrace stop, and signals reach it (each of 100
# SIGUSR1 is acknowledged: a thread held at its signal would never answer).
# Continued (SIGCONT, fg), csampler attaches again and samples on; -d
# counts sampling time, not the time stopped; exit 0, the target untraced
# and every signal counted. A launched program stopped with it (the
# terminal's Ctrl-Z reaches the whole job) stops and continues with it,
# and its exit status is csampler's.
. "$TESTS_SRCDIR/lib.sh"
need_root

start_fixture sigcount recv 2
SIGC=$FIXTURE_PID
"$CSAMPLER" -F 999 -d 2 -o "$T/out.folded" -p "$SIGC" >"$T/cs.out" 2>"$T/cs.err" &
CS=$!
FIXTURE_PIDS="$FIXTURE_PIDS $CS"
i=0
while [ "$(tracer_tgid "$SIGC")" != "$CS" ]; do
	i=$((i + 1)); [ $i -lt 400 ] || fail "csampler never attached: $(cat "$T/cs.err")"; sleep 0.05
done
sleep 0.5
kill -TSTP "$CS"
wait_state "$CS" T 10 || fail "csampler did not stop on SIGTSTP: $(cat "$T/cs.err")"
assert_eq "tracer while csampler is stopped" "$(tracer_pid "$SIGC")" 0
held=0
for i in $(seq 1 20); do
	cat /proc/"$SIGC"/task/*/stat 2>/dev/null | awk '$3 == "t" || $3 == "T" {found = 1} END {exit !found}' &&
		held=$((held + 1))
	sleep 0.05
done
assert_eq "looks at the target that found a thread stopped (csampler stopped)" "$held" 0
sent=$(timeout 20 "$PROGS/sigcount" sendusr1 "$SIGC" 100 2>&1)
assert_eq "SIGUSR1 acknowledged while csampler is stopped" "$sent" "sent 100"
kill -CONT "$CS"
i=0
while [ "$(tracer_tgid "$SIGC")" != "$CS" ]; do
	i=$((i + 1)); [ $i -lt 400 ] || fail "csampler did not attach again: $(cat "$T/cs.err")"; sleep 0.05
done
wait_exit "$CS" 20 "csampler after SIGCONT" "$SIGC"
assert_eq "exit status after a suspension" "$WAIT_STATUS" 0
grep -q "^csampler: stopped: process $SIGC was let go; sampling resumes when csampler is continued (fg)$" \
	"$T/cs.err" || fail "no line for the stop: $(cat "$T/cs.err")"
grep -q "^csampler: continued: sampling process $SIGC again$" "$T/cs.err" ||
	fail "no line for the continue: $(cat "$T/cs.err")"
# (a loaded machine's summary says "at N Hz of 999 asked")
secs=$(sed -n 's/.* in \([0-9.]*\) s at [0-9]* Hz.*/\1/p' "$T/cs.err")
assert_match "the run's time (-d 2, stopped for more than 1 s)" "$secs" '^(1\.9|2\.0|2\.1)'
assert_folded_has "$T/out.folded" 'spin_work'
assert_untraced_running "$SIGC"
kill -TERM "$SIGC"
wait_exit "$SIGC" 10 "sigcount after SIGTERM"
assert_eq "signals the target got" "$(cat "$T/sigcount.out" | tail -1)" "received 0 100"

# a launched program in csampler's job: the job stopped and continued
# together (as a shell's Ctrl-Z and fg do: signals to the process group;
# the program runs 4 s, room for a loaded host before the Ctrl-Z)
# (its own process group made by perl: "set -m" needs a terminal in dash,
# and without one the job shared the test's group; dash's kill takes no "--")
perl -e 'setpgrp(0, 0); exec @ARGV or die "exec: $!"' "$CSAMPLER" -q -F 499 -o "$T/job.folded" -- sh -c "\"$PROGS/hot\" 4 >/dev/null; exit 7" \
	>"$T/job.out" 2>"$T/job.err" &
JOB=$!
FIXTURE_PIDS="$FIXTURE_PIDS $JOB"
i=0
until [ -n "$(pgrep -P "$JOB")" ] && [ "$(tracer_tgid "$(pgrep -P "$JOB")")" = "$JOB" ]; do
	i=$((i + 1)); [ $i -lt 400 ] || fail "csampler never launched: $(cat "$T/job.err")"; sleep 0.05
done
PROG=$(pgrep -P "$JOB")
sleep 0.3
kill -TSTP "-$JOB"
wait_state "$JOB" T 10 || fail "csampler did not stop with its job: $(cat "$T/job.err")"
wait_state "$PROG" T 10 || fail "the program did not stop with its job"
assert_eq "tracer of the stopped program" "$(tracer_pid "$PROG")" 0
kill -CONT "-$JOB"
wait_exit "$JOB" 20 "csampler with its program continued" "$PROG"
assert_eq "exit status: the program's, across a suspension" "$WAIT_STATUS" 7
exit 0
