#!/bin/sh
# unwind_redzone: a frame whose caller's rbp lies in the red zone under sp
# (the redzone fixture's rz_leaf; in compiled code, every epilogue's ret,
# after pop %rbp: a Java compiler thread's stacks ended "complete" two
# frames deep, 1 run in 6) is unwound from the stack as it was at the stop.
# The default backend copies the red zone with the window: every rz_leaf
# sample reaches main (read from the live thread, which had run on and
# written there, 110 of 479 were cut). The perf backend's copy (the
# kernel's) starts at sp: an rz_leaf sample is whole or marked
# [truncated], never taken through what the thread wrote after it.
. "$TESTS_SRCDIR/lib.sh"
need_root

# (the fixture on one CPU, csampler on another: the thread runs on while
# its copy is unwound, as on a busy host; sharing csampler's CPU it waits,
# and even a live read finds the red zone as it was)
start_fixture redzone 2000
pinned=""
if command -v taskset >/dev/null 2>&1 && [ "$(nproc)" -ge 2 ] &&
	taskset -pc 0 "$FIXTURE_PID" >/dev/null && taskset -pc 1 $$ >/dev/null; then
	pinned=" (pinned apart)"
fi
WHOLE='(^|;)main;rz_loop;rz_leaf [0-9]+$'

# count_leaf FOLDED: "leaf whole truncated" sample counts of rz_leaf
count_leaf() {
	awk -v whole="$WHOLE" '
		{ c = $NF; s = $0; sub(/ [0-9]+$/, "", s) }
		s ~ /(^|;)rz_leaf$/ { leaf += c; if ($0 ~ whole) w += c; else if (s ~ /^\[truncated\];/) t += c }
		END { print leaf + 0, w + 0, t + 0 }' "$1"
}

run_csampler -F 999 -d 2 -o "$T/out.folded" -p "$FIXTURE_PID"
assert_eq "exit status ($(cat "$T/cs.err"))" "$CS_STATUS" 0
set -- $(count_leaf "$T/out.folded")
note "ptrace$pinned: $1 samples in rz_leaf, $2 whole, $3 truncated"
[ "$1" -ge 20 ] || fail "only $1 samples in rz_leaf: $(sort -t' ' -k2 -rn "$T/out.folded" | head -3)"
assert_eq "rz_leaf samples whole to main (of $1)" "$2" "$1"
assert_untraced_running "$FIXTURE_PID"

if [ -r /proc/sys/kernel/perf_event_paranoid ]; then
	run_csampler --backend=perf -F 999 -d 2 -o "$T/perf.folded" -p "$FIXTURE_PID"
	assert_eq "perf backend exit status ($(cat "$T/cs.err"))" "$CS_STATUS" 0
	set -- $(count_leaf "$T/perf.folded")
	note "perf: $1 samples in rz_leaf, $2 whole, $3 marked [truncated]"
	[ "$1" -ge 20 ] || fail "perf: only $1 samples in rz_leaf"
	assert_eq "perf: rz_leaf samples whole or marked [truncated] (of $1)" "$(($2 + $3))" "$1"
fi
assert_untraced_running "$FIXTURE_PID"
