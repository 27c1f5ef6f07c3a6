#!/bin/sh
# unwind_python_frames: csampler's reader of CPython's frame chains
# (pyframes, which a capture uses: pystack) reads the
# frames of two blocked threads of Debian's python3.11 exactly as the
# interpreter has them: qualified name, file and line of every frame,
# innermost first (the fixture prints its own, from sys._getframe, on the
# line where it blocks). The line comes from the code object's line table
# (pylinetable) and the instruction the frame last ran. A thread id with no
# thread state reads as none. The table's layout is the one the
# interpreter's debug information gives, where its debug file is there.
. "$TESTS_SRCDIR/lib.sh"
need_root
PY=/usr/bin/python3.11
[ -x "$PY" ] || skip "no $PY (Debian bookworm's python3.11): the layout known is 3.11's"
need_cmd nm
need_cmd readelf
runtime_sym=$(nm -D --defined-only "$PY" | awk '$3 == "_PyRuntime" { print $1 }')
[ -n "$runtime_sym" ] || skip "$PY exports no _PyRuntime"

mkfifo "$T/in"
"$PY" "$TESTS_SRCDIR/progs/pystack.py" <"$T/in" >"$T/py.out" 2>"$T/py.err" &
PYPID=$!
FIXTURE_PIDS="$FIXTURE_PIDS $PYPID"
exec 3>"$T/in"
i=0
until [ "$(grep -c '^ready' "$T/py.out" 2>/dev/null)" = 2 ]; do
	i=$((i + 1))
	[ $i -lt 400 ] || harness "pystack never said ready twice: $(cat "$T/py.err")"
	kill -0 "$PYPID" 2>/dev/null || harness "pystack died: $(cat "$T/py.err")"
	sleep 0.05
done
# both threads block on the line they printed from: give them time to get there
wait_state "$PYPID" S
sleep 0.2

# _PyRuntime's address: the symbol's in a fixed-address executable (Debian
# builds python3.11 so); in a position-independent one, plus its load
# address (its mapping at file offset 0)
exe=$(readlink -f "/proc/$PYPID/exe")
case $(readelf -h "$exe" | awk '/Type:/ { print $2 }') in
EXEC) runtime=$runtime_sym ;;
DYN)
	base=$(awk -v f="$exe" '$6 == f && $3 == "00000000" { split($1, a, "-"); print a[1]; exit }' "/proc/$PYPID/maps")
	[ -n "$base" ] || harness "no mapping of $exe at offset 0 in /proc/$PYPID/maps"
	runtime=$(printf '%x' $((0x$base + 0x$runtime_sym))) ;;
*) harness "$exe: not an executable ELF file" ;;
esac
tids=$(sed -n 's/^ready //p' "$T/py.out" | tr '\n' ' ')
"$PROGS/pyframes_read" "$PYPID" "$runtime" $tids 999999999 >"$T/read.out" 2>"$T/read.err" ||
	fail "pyframes_read failed: $(cat "$T/read.err")"
exec 3>&-

grep '^frame' "$T/py.out" >"$T/want"
grep '^frame' "$T/read.out" >"$T/got"
note "$(wc -l <"$T/want") frames in 2 threads; read: $(wc -l <"$T/got")"
diff "$T/want" "$T/got" >"$T/diff" || fail "the frames read differ from the interpreter's: $(cat "$T/diff")"
grep -q '^cut' "$T/read.out" && fail "a chain was cut: $(cat "$T/read.out")"
grep -q '^none 999999999$' "$T/read.out" || fail "a thread id without a thread state read as: $(cat "$T/read.out")"
# the frames the fixture named are there, with their lines
for f in inner middle outer '<module>' Worker.block Thread.run; do
	grep -q "^frame [0-9]* $f|" "$T/got" || fail "no frame of $f read: $(cat "$T/got")"
done

# the table's offsets (measured with gdb) are the ones the interpreter's
# own debug information gives (pydwarf: what a capture uses where the
# debug file is there; Debian's python3.11-dbg installs it)
bid=$(readelf -n "$exe" 2>/dev/null | awk '/Build ID/ { print $3 }')
dbg=/usr/lib/debug/.build-id/$(echo "$bid" | cut -c1-2)/$(echo "$bid" | cut -c3-).debug
if [ -n "$bid" ] && [ -e "$dbg" ]; then
	"$PROGS/pyframes_read" --layout "$dbg" >"$T/layout" 2>&1 || fail "no layout read from $dbg: $(cat "$T/layout")"
	note "layout from $dbg: $(tail -1 "$T/layout")"
	grep -qx same "$T/layout" || fail "the table differs from the debug information's layout: $(cat "$T/layout")"
else
	note "no debug file of $exe (python3.11-dbg): the table was not compared with its DWARF"
fi
# and Debian's debug build of the interpreter (its DWARF in itself)
if [ -x /usr/bin/python3.11d ]; then
	"$PROGS/pyframes_read" --layout /usr/bin/python3.11d >"$T/layout.d" 2>&1 ||
		fail "no layout read from python3.11d: $(cat "$T/layout.d")"
	note "layout from python3.11d: $(tail -1 "$T/layout.d")"
	grep -qx same "$T/layout.d" || fail "the table differs from python3.11d's layout: $(cat "$T/layout.d")"
fi
exit 0
