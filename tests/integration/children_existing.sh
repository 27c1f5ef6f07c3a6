#!/bin/sh
# children_existing: --children with -p follows the children (and their
# children) that exist before csampler attaches, not only later forks. A
# shell waits on two fixtures, one a grandchild through a subshell: the
# profile has both fixtures' hot functions and no thread of the idle shell;
# every process is untraced and running afterwards. Both backends.
. "$TESTS_SRCDIR/lib.sh"
need_root

sh -c "\"$PROGS/busy\" 1 >/dev/null & (\"$PROGS/hot\" >/dev/null & wait) & wait" &
SH=$!
FIXTURE_PIDS="$FIXTURE_PIDS $SH"
# wait until both fixtures run, then note their pids for the cleanup
for i in $(seq 1 100); do
	# (ours: other tests run hot and busy too)
	BUSY=$(for p in $(pgrep -f "^$PROGS/busy 1"); do ours "$p" && echo "$p"; done | head -1)
	HOT=$(for p in $(pgrep -f "^$PROGS/hot\$"); do ours "$p" && echo "$p"; done | head -1)
	[ -n "$BUSY" ] && [ -n "$HOT" ] && break
	sleep 0.05
done
[ -n "$BUSY" ] && [ -n "$HOT" ] || harness "the fixtures did not start under sh"
FIXTURE_PIDS="$FIXTURE_PIDS $BUSY $HOT"

cpu_mark "$BUSY" "$HOT"
run_csampler -v -p "$SH" --children -d 1 -F 199 -o "$T/out.folded"
cpu_window "$BUSY" "$HOT"
assert_eq "exit status ($(cat "$T/cs.err"))" "$CS_STATUS" 0
assert_match "attach line" "$(grep 'attached to process' "$T/cs.err")" \
	"attached to process $SH \\([0-9]+ threads?, [34] child processes\\)"
assert_folded_has "$T/out.folded" ';busy_leaf [0-9]+$'
assert_folded_has "$T/out.folded" ';leaf_[abc] [0-9]+$'
# the two fixtures' CPU from before the attach to after the detach (the
# 1 s window and the attach: at least 60% of it in the window)
assert_window_samples "samples of the two busy processes" "$(folded_total "$T/out.folded")" 199 1 2 60 103
for pid in $SH $BUSY $HOT; do
	assert_untraced_running "$pid"
done

# the same with --backend=perf: the children there at attach are sampled too
# (they were not: 0 samples, and a hint about --idle)
cpu_mark "$BUSY" "$HOT"
run_csampler --backend=perf -p "$SH" --children -d 1 -F 199 -o "$T/perf.folded"
cpu_window "$BUSY" "$HOT"
[ "$CS_STATUS" = 67 ] && skip "perf events not permitted here (the ptrace part passed): $(cat "$T/cs.err")"
{
	assert_eq "perf: exit status ($(cat "$T/cs.err"))" "$CS_STATUS" 0
	assert_folded_has "$T/perf.folded" ';busy_leaf [0-9]+$'
	assert_folded_has "$T/perf.folded" ';leaf_[abc] [0-9]+$'
	# (each process's own samples: not none, as before; as many as the
	# CPU the machine gave them is worth)
	assert_window_samples "perf: samples of the two busy processes" \
		"$(folded_total "$T/perf.folded")" 199 1 2 60 103
	for pid in $SH $BUSY $HOT; do
		assert_untraced_running "$pid"
	done
}

# without --children, the same idle shell: no samples, and a hint
run_csampler -p "$SH" -d 0.5 -o "$T/alone.folded"
assert_eq "exit status without --children" "$CS_STATUS" 0
assert_eq "samples of the idle shell" "$(folded_total "$T/alone.folded")" 0
grep -q -- "--children" "$T/cs.err" || fail "no hint about --children: $(cat "$T/cs.err")"
exit 0
