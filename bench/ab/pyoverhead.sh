#!/bin/sh
# pyoverhead: csampler's cost per sample on a CPython 3.11 target, reading
# its Python frames (the default) against not reading them (--no-python),
# interleaved in one run. The target is tests/progs/pysplit.py (three
# threads of Python and C extension work). Each run attaches for DURATION
# seconds at RATE Hz; csampler's CPU (every thread's, schedstat) is read
# just before the end, so symbolizing and writing are not in it; the
# samples and the pause come from its -v line.
# usage: bench/ab/pyoverhead.sh [CSAMPLER [OLD_CSAMPLER]] (as root); REPS,
# RATE, DURATION. With OLD_CSAMPLER (a build from before Python frames),
# a third configuration, "old", runs it as it is.
set -eu
CS=${1:-build/src/csampler}
OLD=${2:-}
REPS=${REPS:-5}
RATE=${RATE:-499}
DURATION=${DURATION:-6}
PY=/usr/bin/python3.11
here=$(dirname "$0")
T=$(mktemp -d)
trap 'kill $PYPID 2>/dev/null; rm -rf "$T"' EXIT
"$PY" "$here/../../tests/progs/pysplit.py" 100000 >/dev/null &
PYPID=$!
sleep 1
cpu_ns() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'
}
one() {
	mode=$1
	flag=
	cs_bin=$CS
	[ "$mode" = off ] && flag=--no-python
	[ "$mode" = old ] && cs_bin=$OLD
	"$cs_bin" -p "$PYPID" -d "$DURATION" -F "$RATE" -v $flag -o "$T/out.folded" 2>"$T/err" &
	cs=$!
	sleep "$(echo "$DURATION - 0.3" | bc)"
	ns=$(cpu_ns $cs)
	wait $cs
	line=$(grep ' samples, ' "$T/err" | head -1)
	samples=$(echo "$line" | sed 's/^csampler: \([0-9]*\) samples.*/\1/')
	p50=$(echo "$line" | sed -n 's/.*pause p50 \([0-9.]*\) us p99 \([0-9.]*\) us.*/\1/p')
	p99=$(echo "$line" | sed -n 's/.*pause p50 \([0-9.]*\) us p99 \([0-9.]*\) us.*/\2/p')
	evals=$(grep -c '_PyEval_EvalFrameDefault' "$T/out.folded" || true)
	echo "$mode samples $samples cpu_us_per_sample $(echo "scale=1; $ns / 1000 / $samples" | bc) pause_p50 $p50 pause_p99 $p99 stacks_with_eval_loop $evals"
}
for r in $(seq "$REPS"); do
	if [ $((r % 2)) = 1 ]; then one on; one off; else one off; one on; fi
	[ -n "$OLD" ] && one old
done
