#!/bin/sh
# cli_progress: on a terminal csampler shows one self-updating status line
# (elapsed / duration, samples, threads, rate) and a final summary; with -q,
# or when stderr is not a terminal, no status line is drawn.
. "$TESTS_SRCDIR/lib.sh"
need_root
need_cmd tmux

start_fixture hot 60
sock="$T/tmux.sock"
tmux -S "$sock" new-session -d -x 120 -y 10 \
	"'$CSAMPLER' -d 3 -o '$T/p.folded' -p $FIXTURE_PID; echo EXIT=\$?; sleep 30" ||
	harness "cannot start tmux"
# the status line, once drawn (it updates while sampling)
i=0
until mid=$(tmux -S "$sock" capture-pane -p) && printf '%s\n' "$mid" | grep -q 'samples/s'; do
	i=$((i + 1))
	[ $i -lt 200 ] || fail "no status line in 10 s: $mid"
	sleep 0.05
done
i=0
until tmux -S "$sock" capture-pane -p | grep -q '^EXIT='; do
	i=$((i + 1))
	[ $i -lt 200 ] || fail "csampler did not finish in tmux"
	sleep 0.05
done
end=$(tmux -S "$sock" capture-pane -pJ)
tmux -S "$sock" kill-server 2>/dev/null
assert_match "status line while sampling" "$mid" '\[[0-9]+\.[0-9]s / 3s\] [0-9]+ samples, 1 thread, [0-9.]+ samples/s'
assert_match "start line" "$end" "csampler: sampling process $FIXTURE_PID at 99 Hz for 3 s"
assert_match "final summary" "$end" "csampler: [0-9]+ samples \([0-9.]+ s of CPU\) from 1 thread in 3\.0 s at (99 Hz|[0-9]+ Hz of 99 asked); 100% of stacks complete"
assert_match "written" "$end" "csampler: wrote $T/p.folded \(folded stacks, [0-9]+ samples\); view it: flamegraph.pl"
assert_match "exit status" "$end" 'EXIT=0'
printf '%s\n' "$end" | grep -q 'samples/s' && fail "the status line was not cleared at the end"

# not a terminal: no status line, still the summary; -q: nothing at all
run_csampler -d 1.2 -o "$T/q.folded" -p "$FIXTURE_PID"
grep -q 'samples/s' "$T/cs.err" && fail "status line drawn although stderr is not a terminal"
grep -q "wrote $T/q.folded" "$T/cs.err" || fail "no final summary: $(cat "$T/cs.err")"
run_csampler -q -d 1.2 -o "$T/q.folded" -p "$FIXTURE_PID"
[ -s "$T/cs.err" ] && fail "-q printed: $(cat "$T/cs.err")"
exit 0
