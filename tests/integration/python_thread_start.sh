#!/bin/sh
# python_thread_start: every CPython thread gets its Python frames, however
# early it is first stopped. tests/progs/pythreads.py starts 8 threads at
# once (each spins 150 ms of its own CPU in spin), 5 runs at 999 Hz under
# Debian's python3.11. A thread's state is made by the thread that starts
# it and names its thread only once the new one runs: a thread stopped in
# between has none yet. csampler looked again only when the interpreter
# made another thread state, so a thread first seen there, after the last
# state was made, showed the evaluation loop and no Python frame for the
# rest of the run (the previous binary: a whole thread, 299 of its 300
# samples, in 1 run of 8, and 5 to 7 samples of a thread in 2 more; 300
# ms threads then, 150 now, as the early stop is what it is about). Now
# it is looked for again after 1, 2, 4 ... of its stops: in each run every
# thread has at most 3 samples through the evaluation loop without its
# Python frames.
. "$TESTS_SRCDIR/lib.sh"
need_root
PY=/usr/bin/python3.11
[ -x "$PY" ] || skip "no $PY (Debian bookworm's python3.11): the layout known is 3.11's"

for run in 1 2 3 4 5; do
	F=$T/run$run.folded
	run_csampler -F 999 --threads -o "$F" -- "$PY" "$TESTS_SRCDIR/progs/pythreads.py" 8 150
	assert_eq "run $run: exit status ($(cat "$T/cs.err"))" "$CS_STATUS" 0
	grep -q '^done 8' "$T/cs.out" || fail "run $run: pythreads did not finish: $(cat "$T/cs.out" "$T/cs.err")"
	# the workers: the threads with samples in spin
	workers=$(awk '/(^|;)spin(;| )/ { split($1, a, ";"); print a[1] }' "$F" | sort -u | wc -l)
	[ "$workers" -ge 8 ] || fail "run $run: $workers threads have samples in spin, expected 8: $(cut -c1-200 "$F" | head -5)"
	# per thread: its samples with the evaluation loop's own frame left
	worst=$(awk '{ split($1, a, ";"); if ($0 ~ /(^|;)_PyEval_EvalFrameDefault(;| )/) left[a[1]] += $NF }
		END { m = 0; for (t in left) if (left[t] > m) m = left[t]; print m }' "$F")
	assert_within "run $run: the most samples of one thread through the evaluation loop without Python frames ($(grep '_PyEval_EvalFrameDefault' "$F" | cut -c1-160 | head -2))" \
		"$worst" 0 3
done
exit 0
