#!/bin/sh
# tickshadow: what csampler's own tick timer does to the CPU a thread's
# short sleeps cost (issue 44, the nap row). tests/progs/pingpong's nap
# thread sleeps 100 us and computes 100 us in turn; each clock_nanosleep
# arms a timer, and where that timer is the CPU's earliest the kernel
# programs the CPU's clock event device (on a virtual machine, a write
# the hypervisor traps). At each tick a csampler thread on every CPU waits
# on a timer for the tick's instant; within the nap's length (100 us and
# its 50 us of timer slack) before that instant csampler's timer is the
# earlier one, nothing is programmed, and the entry is cheap: exactly where
# a tick can look, the cost is not there.
# The fixture runs pinned to one CPU under `perf record` of the scheduler's
# switches and clock_nanosleep's entries, once alone and once sampled by
# csampler at RATE Hz. Each entry's cost is the time from the call to the
# switch out; it is grouped by how long after it csampler next took that
# CPU (its thread's switch in there, 15-30 us after the instant; on this
# VM perf missed CPU 1's switches out of idle, so the grouping there is
# not whole: CPU 0 is the default). Prints, per
# group, the entries and their mean cost, then the nap's share of the
# thread's CPU by its own clock and by csampler's samples.
# usage: bench/ab/tickshadow.sh [CSAMPLER [PROGS]] (root, perf, 2+ CPUs);
# RATE (999), SECONDS (4), CPU (0: the CPU the fixture is pinned to)
set -eu
CS=${1:-build/src/csampler}
PROGS=${2:-$(dirname "$CS")/../tests/progs}
RATE=${RATE:-999}
SECS=${SECONDS_RUN:-4}
CPU=${CPU:-0}
command -v perf >/dev/null || { echo "tickshadow: perf not found" >&2; exit 2; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# entries TRACE NAPPER: "gap-group count mean-us" per group of entries
entries() {
	awk -v tid="$2" -v cpu="$(printf "[%03d]" "$CPU")" '
	function stamp(s) { sub(/:$/, "", s); return s * 1e6 }   # us
	{
		t = stamp($3)
		if ($4 == "raw_syscalls:sys_enter:" && $1 == tid) { enter = t; next }
		if ($4 != "sched:sched_switch:") next
		if (index($0, "prev_pid=" tid " ") && index($0, "prev_state=S") && enter > 0) {
			pending[++np] = enter; cost[np] = t - enter; enter = 0
		}
		if (index($0, "next_comm=csampler ") && $2 == cpu) {
			for (i = 1; i <= np; i++) {
				g = t - pending[i]
				grp = g < 150 ? "taken <150us after" : g < 300 ? "taken 150-300us after" : "taken 300us+ after"
				n[grp]++; sum[grp] += cost[i]
			}
			np = 0
		}
	}
	END {
		for (i = 1; i <= np; i++) { n["not taken after"]++; sum["not taken after"] += cost[i] }
		for (g in n) printf "  %-24s %6d entries, %5.1f us each\n", g, n[g], sum[g] / n[g]
	}' "$1"
}

# one WITH: the fixture under the trace, sampled by csampler when WITH=yes
one() {
	taskset -c "$CPU" "$PROGS/pingpong" nap "$SECS" wait > "$T/own" 2>&1 &
	pp=$!
	sleep 0.3
	napper=$(for task in /proc/"$pp"/task/*; do
		[ "$(cat "$task/comm")" = napper ] && basename "$task"; done)
	perf record -q -k mono -C "$CPU" -e sched:sched_switch \
		-e raw_syscalls:sys_enter --filter 'id == 230' \
		-o "$T/trace.data" -- sleep $((SECS + 1)) 2> "$T/perf.err" &
	pf=$!
	sleep 0.3
	cs=
	if [ "$1" = yes ]; then
		"$CS" -q -F "$RATE" -d $((SECS + 1)) -o "$T/out.folded" -p "$pp" 2> "$T/cs.err" &
		cs=$!
		sleep 0.5
	fi
	kill -USR2 "$pp"
	wait "$pp" || true
	[ -z "$cs" ] || wait "$cs" || true
	wait "$pf" || true
	perf script -i "$T/trace.data" --ns -F tid,cpu,time,event,trace > "$T/trace.txt" 2> /dev/null
	entries "$T/trace.txt" "$napper"
	awk '$1 == "phase" && $2 == "napper_sleep" { s = $3 } $1 == "thread" { t = $3 }
	     END { printf "  nap: %.1f%% of the thread CPU by its own clock", 100 * s / t }' "$T/own"
	if [ -n "$cs" ]; then
		awk '{ n += $NF } /napper_sleep/ { s += $NF }
		     END { printf ", %.1f%% of the %d samples csampler took", n ? 100 * s / n : 0, n }' "$T/out.folded"
	fi
	echo
}
echo "alone (no sampler; the groups are empty: nothing of csampler runs):"
one no
echo "csampler at $RATE Hz:"
one yes
