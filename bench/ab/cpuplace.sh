#!/bin/sh
# cpuplace: where csampler runs against where its target runs, and what
# that does to the split (issue 44, row 2: skid into the next call). The
# target is tests/progs/pingpong's epoll mode (a server and a client that
# wake each other ~20 us apart, each phase's CPU counted by its own
# CLOCK_THREAD_CPUTIME_ID); csampler attaches at RATE Hz, and each phase's
# share of the samples is printed beside its share of the fixture's own
# account. Placements (taskset): "local" (csampler and the target on one
# CPU: every interrupt is csampler's tick taking the CPU from the thread
# it samples), "remote" (the target on CPU 1, csampler on CPU 0: every
# interrupt crosses CPUs), "free" (the scheduler's choice, as users run
# it), and "perf" (--backend=perf, free: the kernel samples on the
# thread's own CPU). Each placement REPS times, interleaved; prints the
# largest difference of a phase (points) per run, and each phase as
# samples%/own% and, where perf events are allowed, /tc the phase's share
# of the threads' task-clock (pingpong's second clock: the time from the
# switch in to the switch out, perf's own view, which leaves out the
# scheduler's switch to the thread that its CPU clock counts: beside busy
# loops the epoll client's read was 24.3% of its own clock and 14.2% of
# task-clock).
# usage: bench/ab/cpuplace.sh [CSAMPLER [PROGS]] (as root, 2+ CPUs); REPS
# (3), RATE (999), SECONDS (4), MODE (pingpong's mode: epoll, socket, nap,
# sync, calls, clock), PLACES (the placements run, "local remote free
# perf"), BUSY=1 (two busy loops beside them). Each run's line ends with
# the notes csampler's summary gave: "switch" (the target's threads got a
# CPU so often that the split may be off), "skid" (stops at a call's exit
# beyond the kernel's share), "span" (the switch onto a CPU left spread),
# or "none": the note is right when it is there exactly where the worst
# phase is over 5 points.
set -eu
CS=${1:-build/src/csampler}
PROGS=${2:-$(dirname "$CS")/../tests/progs}
REPS=${REPS:-3}
RATE=${RATE:-999}
SECS=${SECONDS_RUN:-4}
MODE=${MODE:-epoll}
PLACES=${PLACES:-local remote free perf}
T=$(mktemp -d)
BUSY_PIDS=""
trap 'rm -rf "$T"; [ -z "$BUSY_PIDS" ] || kill $BUSY_PIDS 2>/dev/null' EXIT
if [ "${BUSY:-0}" = 1 ]; then
	for i in 1 2; do
		sh -c 'while :; do :; done' &
		BUSY_PIDS="$BUSY_PIDS $!"
	done
fi
one() {
	name=$1 pcpu=$2 ccpu=$3
	shift 3
	taskset -c "$pcpu" "$PROGS/pingpong" "$MODE" "$SECS" wait > "$T/own" 2>&1 &
	pp=$!
	sleep 0.3
	taskset -c "$ccpu" "$CS" "$@" --threads -F "$RATE" -d $((SECS + 1)) -o "$T/out.folded" \
		-p "$pp" 2> "$T/err" &
	cs=$!
	sleep 0.5
	kill -USR2 "$pp"
	wait "$pp" || true
	wait "$cs" || true
	notes=""
	grep -q '^csampler: note: the target.s threads got a CPU' "$T/err" && notes="$notes switch"
	grep -q "^csampler: note: .* stops came at a system call.s exit" "$T/err" && notes="$notes skid"
	grep -q '^csampler: note: .* was the switch onto a CPU' "$T/err" && notes="$notes span"
	awk -v name="$name" -v notes="${notes:- none}" '
	FNR == NR { if ($1 == "phase") { own[$2] = $3; tc[$2] = $4 } if ($1 == "total") { tot = $2; ttc = $3 } next }
	{ n = $NF; $NF = ""; k = split($0, fr, ";"); ph = ""
	  for (i = 1; i <= k; i++) { f = fr[i]; gsub(/ /, "", f); if (f in own) ph = f }
	  if (ph != "") got[ph] += n; all += n }
	END {
		worst = 0; line = ""
		for (p in own) {
			d = (all ? 100 * got[p] / all : 0) - 100 * own[p] / tot
			if (d < 0 ? -d > worst : d > worst) { worst = d < 0 ? -d : d; wp = p }
			line = line sprintf(" %s %.1f/%.1f", p, all ? 100 * got[p] / all : 0,
					    100 * own[p] / tot)
			if (ttc > 0)
				line = line sprintf("/tc%.1f", 100 * tc[p] / ttc)
		}
		printf "%-7s worst %5.1f pts (%s);%s; notes:%s\n", name, worst, wp, line, notes
	}' "$T/own" "$T/out.folded"
}
echo "phase samples%/own%[/tc task-clock%] per run"
for rep in $(seq 1 "$REPS"); do
	for place in $PLACES; do
		case "$place" in
		local) one local 1 1 ;;
		remote) one remote 1 0 ;;
		free) one free 0,1 0,1 ;;
		perf) one perf 0,1 0,1 --backend=perf ;;
		*) echo "cpuplace: unknown placement '$place'" >&2; exit 2 ;;
		esac
	done
done
