#!/bin/sh
# pyversions: csampler's cost per sample reading Python frames (the
# default) against not reading them (--no-python), on every CPython this
# machine has (issue 46's target: within 10%), interleaved per interpreter
# in one run. For each (Debian's python3.11, pyenv's 2.7 and 3.6 to 3.13,
# Debian sid's 3.13 to 3.15 in scripts/sid-root's root through chroot), the
# target is tests/progs/pysplit.py (three threads of Python and C
# extension work); each run attaches for DURATION seconds at RATE Hz, and
# csampler's CPU (every thread's, schedstat) is read just before the end,
# so symbolizing and writing are not in it. Prints per interpreter the
# median CPU per sample of each mode (microseconds), the ratio, and the
# share of samples whose stacks still hold the evaluation loop with
# Python frames read (0 where the splice works).
# usage: bench/ab/pyversions.sh [CSAMPLER] (as root); REPS (5), RATE
# (499), DURATION (4), ONLY (a label's pattern, e.g. 'sid-*').
set -eu
CS=${1:-build/src/csampler}
REPS=${REPS:-5}
RATE=${RATE:-499}
DURATION=${DURATION:-4}
ONLY=${ONLY:-*}
here=$(cd "$(dirname "$0")" && pwd)
fixture=$here/../../tests/progs/pysplit.py
T=$(mktemp -d)
PYPID=
sid=${CSAMPLER_SID_ROOT:-/var/cache/csampler/sid}
trap '[ -n "$PYPID" ] && kill $PYPID 2>/dev/null; rm -rf "$T" "$sid/tmp/pyversions.$$"' EXIT
pythons() {
	[ -x /usr/bin/python3.11 ] && echo "debian-3.11 / /usr/bin/python3.11"
	for v in 2.7 3.6 3.7 3.8 3.9 3.10 3.11 3.12 3.13; do
		p=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$v".*/bin/python"$v" 2>/dev/null | tail -n 1)
		[ -n "$p" ] && echo "pyenv-$v / $p"
	done
	for v in 3.13 3.14 3.15; do
		[ -x "$sid/usr/bin/python$v" ] && echo "sid-$v $sid /usr/bin/python$v"
	done
	return 0
}
cpu_ns() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'
}
# one MODE: a run; appends "MODE US_PER_SAMPLE LOOP_SHARE" to $T/runs
one() {
	flag=
	[ "$1" = off ] && flag=--no-python
	"$CS" -p "$PYPID" -d "$DURATION" -F "$RATE" -v $flag -o "$T/out.folded" 2>"$T/err" &
	cs=$!
	sleep "$(echo "$DURATION - 0.3" | bc)"
	ns=$(cpu_ns $cs)
	wait $cs
	samples=$(sed -n 's/^csampler: \([0-9]*\) samples, .*/\1/p' "$T/err" | head -1)
	loop=$(awk '{ n = $NF; t += n; if ($0 ~ /(^|;)(_PyEval_EvalFrameDefault|PyEval_EvalFrameEx)(;| )/) l += n }
		END { printf "%.1f", t ? 100 * l / t : 0 }' "$T/out.folded")
	echo "$1 $(echo "scale=1; $ns / 1000 / ${samples:-1}" | bc) $loop" >>"$T/runs"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf '%-12s %10s %10s %7s %s\n' interpreter "on us/smp" "off us/smp" ratio "loop left (on)"
pythons | while read -r label root py; do
	# shellcheck disable=SC2254
	case $label in $ONLY) ;; *) continue ;; esac
	file=$fixture
	if [ "$root" != / ]; then
		mkdir -p "$root/tmp/pyversions.$$" && cp "$fixture" "$root/tmp/pyversions.$$/"
		file=/tmp/pyversions.$$/pysplit.py
	fi
	chroot "$root" "$py" "$file" 100000 >/dev/null &
	PYPID=$!
	sleep 1
	: >"$T/runs"
	for r in $(seq "$REPS"); do
		if [ $((r % 2)) = 1 ]; then one on; one off; else one off; one on; fi
	done
	kill "$PYPID" 2>/dev/null
	wait "$PYPID" 2>/dev/null || true
	PYPID=
	on=$(awk '$1 == "on" { print $2 }' "$T/runs" | median)
	off=$(awk '$1 == "off" { print $2 }' "$T/runs" | median)
	left=$(awk '$1 == "on" { print $3 }' "$T/runs" | median)
	printf '%-12s %10s %10s %7s %s%%\n' "$label" "$on" "$off" "$(echo "scale=3; $on / $off" | bc)" "$left"
done
