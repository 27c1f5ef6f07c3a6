#!/bin/sh
# target_main_exited: a process whose main thread called pthread_exit keeps a
# zombie main thread in /proc/PID/task that cannot be traced. The attach
# passes over it (it used to count it as a new thread on every pass and give
# up with "creates threads faster than csampler can attach"), samples the
# live worker for the whole run with its symbols (the process's maps read
# empty then: they are read through the worker), and leaves it running and
# untraced.
. "$TESTS_SRCDIR/lib.sh"
need_root

start_fixture mainexit
pid=$FIXTURE_PID
wait_state "$pid" Z
cpu_mark "$pid"
run_csampler -v -F 99 -d 1 -o "$T/out.folded" -p "$pid"
cpu_window "$pid"
assert_eq "exit status ($(cat "$T/cs.err"))" "$CS_STATUS" 0
samples=$(sed -nE 's/^csampler: ([0-9]+) samples,.*/\1/p' "$T/cs.err")
[ -n "$samples" ] || fail "no samples line: $(cat "$T/cs.err")"
# the worker's CPU through the whole run (the attach and the detach in
# the bracket too: at least 80% of it)
assert_window_samples "samples of the worker" "$samples" 99 1 1 80 103
assert_eq "folded total" "$(folded_total "$T/out.folded")" "$samples"
# symbolized, though /proc/PID/maps is empty once the main thread has exited
# (the maps are read through the live worker)
assert_folded_has "$T/out.folded" '(^|;)start_thread;worker [0-9]+$'
assert_untraced_running "$pid"
worker=$(ls "/proc/$pid/task" | grep -vx "$pid" | head -1)
[ "$(proc_state "$pid/task/$worker")" = R ] || fail "the worker is not running: $(proc_state "$pid/task/$worker")"
