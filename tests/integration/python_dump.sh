#!/bin/sh
# python_dump: --dump prints each thread's Python stack as the interpreter
# does (issues 33, 46), on every CPython present (python_each).
# tests/progs/pysplit.py, told "dump", blocks its three threads at known
# places, each printing on the line where it blocks the stack
# traceback.format_stack gives there. csampler --dump of the process
# lists, for every thread, the same frames: file, line and function (the
# interpreter's traceback names a function by its code's co_name;
# csampler by its qualified name, whose last part is that name), outermost
# first. On Debian's python3.11 also: the native frames (a read) among
# them, and threads that run Python (pysplit.py working): each is stopped,
# and its Python stack shows the function it runs under run().
# (its fixtures at the quick group's nice, as start_fixture's: busy ones
# take the CPU the other tests leave)
. "$TESTS_SRCDIR/lib.sh"
need_root
python_each >"$T/pythons"
[ -s "$T/pythons" ] || skip "no CPython (Debian's python3.11, pyenv's, or scripts/sid-root's)"

# dump_check LABEL ROOT PATH: the blocked threads' stacks on one interpreter
dump_check() {
	label=$1 root=$2 py=$3
	python_file "$root" "$TESTS_SRCDIR/progs/pysplit.py"
	rm -f "$T/in"
	mkfifo "$T/in"
	# (chroot execs the interpreter, / the system's: $! is it)
	${CSAMPLER_FIXTURE_NICE:+nice -n "$CSAMPLER_FIXTURE_NICE"} chroot "$root" "$py" "$PY_FILE" dump <"$T/in" >"$T/py.out" 2>"$T/py.err" &
	PYPID=$!
	FIXTURE_PIDS="$FIXTURE_PIDS $PYPID"
	exec 3>"$T/in"
	i=0
	until [ "$(grep -c '^ready' "$T/py.out" 2>/dev/null)" = 3 ]; do
		i=$((i + 1))
		[ $i -lt 400 ] || harness "$label: pysplit never said ready 3 times: $(cat "$T/py.err")"
		kill -0 "$PYPID" 2>/dev/null || harness "$label: pysplit died: $(cat "$T/py.err")"
		sleep 0.05
	done
	wait_state "$PYPID" S
	sleep 0.2
	run_csampler --dump -p "$PYPID"
	assert_eq "$label: exit status" "$CS_STATUS" 0
	exec 3>&-

	# each thread's stack, as the fixture printed it and as csampler did:
	# "TID|FILE|LINE|NAME" lines, outermost first
	awk '/^stack / { tid = $2; next } /^  File "/ {
			match($0, /"[^"]*"/); file = substr($0, RSTART + 1, RLENGTH - 2)
			rest = substr($0, RSTART + RLENGTH); split(rest, a, /, /)
			sub(/^line /, "", a[2]); sub(/^in /, "", a[3])
			print tid "|" file "|" a[2] "|" a[3] }' "$T/py.out" | sort >"$T/want"
	awk '/^Thread / { tid = $0; sub(/.*\(tid /, "", tid); sub(/[,)].*/, "", tid); next }
		/^  File "/ {
			match($0, /"[^"]*"/); file = substr($0, RSTART + 1, RLENGTH - 2)
			rest = substr($0, RSTART + RLENGTH); split(rest, a, /, /)
			sub(/^line /, "", a[2]); sub(/^in /, "", a[3]); n = split(a[3], q, "."); name = q[n]
			print tid "|" file "|" a[2] "|" name }' "$T/cs.out" | sort >"$T/got"
	note "$label: $(wc -l <"$T/want") frames in 3 threads from the interpreter; $(wc -l <"$T/got") from csampler"
	[ -s "$T/want" ] || harness "the fixture printed no stack: $(cat "$T/py.out")"
	diff "$T/want" "$T/got" >"$T/diff" ||
		fail "$label: csampler's Python stacks differ from traceback.format_stack's: $(cat "$T/diff")"
	# in the interpreter's order (outermost first), under one heading a thread
	grep -c '^Python stack (most recent call last):$' "$T/cs.out" | grep -qx 3 ||
		fail "$label: not one Python stack per thread: $(cat "$T/cs.out")"
	# (the main thread's, wherever the dump lists it: under load its stop can
	# come in a later round)
	awk -v main="$PYPID" '/^Thread / { tid = $0; sub(/.*\(tid /, "", tid); sub(/[,)].*/, "", tid); next }
		/^Python stack/ { on = (tid == main); next }
		on && /^  File/ { print; exit }' "$T/cs.out" | grep -q 'in <module>$' ||
		fail "$label: the main thread's stack does not start at <module>: $(cat "$T/cs.out")"
	if [ "$label" = debian-3.11 ]; then
		# the native frames are there too, the Python ones among them
		grep -Eq '^#[0-9]+ +\(python\) in blocked_here \(.*pysplit\.py:[0-9]+\)$' "$T/cs.out" ||
			fail "no Python frame among the native ones: $(grep -m5 '^#' "$T/cs.out")"
		grep -q ' in _Py_read \| in __GI___libc_read\| in read ' "$T/cs.out" || fail "no native read frame: $(grep -m5 '^#' "$T/cs.out")"
	fi
	wait "$PYPID" 2>/dev/null || true
}

while read -r label root py; do
	dump_check "$label" "$root" "$py"
done <"$T/pythons"
grep -q '^debian-3.11 ' "$T/pythons" || { note "no Debian python3.11: running threads not dumped"; exit 0; }
PY=/usr/bin/python3.11

# threads running Python: stopped, their Python stacks read at the stop
${CSAMPLER_FIXTURE_NICE:+nice -n "$CSAMPLER_FIXTURE_NICE"} "$PY" "$TESTS_SRCDIR/progs/pysplit.py" 20 >/dev/null 2>"$T/py2.err" &
PYPID=$!
FIXTURE_PIDS="$FIXTURE_PIDS $PYPID"
# (its three threads, however long the interpreter's start takes: beside
# two busy loops and the quick group, 1 s once held the main thread only)
for i in $(seq 1 200); do
	[ "$(ls "/proc/$PYPID/task" 2>/dev/null | wc -l)" -ge 3 ] && break
	sleep 0.05
done
sleep 0.3
# (a thread may be between calls, in run() itself: a few dumps, until one
# finds a thread inside one of the fixture's functions)
for attempt in 1 2 3 4 5; do
	run_csampler --dump -p "$PYPID"
	assert_eq "exit status (running)" "$CS_STATUS" 0
	stacks=$(grep -c '^Python stack' "$T/cs.out")
	assert_eq "Python stacks of the running threads" "$stacks" 3
	[ "$(grep -Ec 'File ".*pysplit\.py", line [0-9]+, in run$' "$T/cs.out")" = 3 ] ||
		fail "not every thread is in run(): $(grep -A8 '^Python stack' "$T/cs.out")"
	inside=$(grep -Ec 'File ".*pysplit\.py", line [0-9]+, in (py_arith|py_text|c_json|c_hash)$' "$T/cs.out")
	[ "$inside" -ge 1 ] && break
done
kill "$PYPID" 2>/dev/null
note "running: 3 Python stacks, $inside of them inside one of the fixture's functions (dump $attempt)"
[ "$inside" -ge 1 ] ||
	fail "no running thread in one of the fixture's functions: $(grep -A8 '^Python stack' "$T/cs.out")"
exit 0
