#!/bin/sh
# python_embedded: a program that embeds a CPython older than 3.11
# statically (libpythonX.Y.a linked in, its symbols exported for extension
# modules, its file named for itself, not for Python) has no Py_Version and
# no version in its name: csampler reads the version from the text
# Py_GetVersion made in the program's .bss once the interpreter started
# ("3.8.18 (default, ..."), and its Python frames are read. For each of
# pyenv's 3.6, 3.8 and 3.10 that has its static library (a SKIP where none
# does): the program (tests/progs/pyembed.c, built here with that
# version's headers) runs a Python function that computes; attached for a
# second, at least 80% of its stacks hold that function's Python frame,
# and the -v notice says its frames are read, of that version. The binary
# before this read says "runs a CPython older than 3.11 from a file whose
# name does not say its version" (and for 3.6, whose list of interpreters
# is a local symbol, nothing) and shows no Python frame.
TEST_TIMEOUT=120
. "$TESTS_SRCDIR/lib.sh"
need_root
need_cmd gcc

pyroot=${PYENV_ROOT:-$HOME/.pyenv}
cat > "$T/spin.py" <<'PY'
import time
def spin_embedded():
    t = time.time()
    while time.time() - t < 20:
        pass
spin_embedded()
PY
tested=0
for v in 3.6 3.8 3.10; do
	home=$(ls -d "$pyroot"/versions/"$v".* 2>/dev/null | tail -n 1)
	lib=$(ls "$home"/lib/python"$v"/config-"$v"*/libpython"$v"*.a 2>/dev/null | head -n 1)
	inc=$(ls -d "$home"/include/python"$v"* 2>/dev/null | head -n 1)
	if [ -z "$lib" ] || [ -z "$inc" ]; then
		note "$v: no pyenv build with a static library"
		continue
	fi
	app="$T/embedapp${v#3.}"
	gcc -O2 -o "$app" "$TESTS_SRCDIR/progs/pyembed.c" -I"$inc" "$lib" -lpthread -ldl -lutil -lm \
		-Xlinker -export-dynamic 2>"$T/gcc.err" || harness "$v: cannot build the embedding program: $(cat "$T/gcc.err")"
	PYTHONHOME=$home "$app" "$T/spin.py" >"$T/app.out" 2>&1 &
	app_pid=$!
	FIXTURE_PIDS="$FIXTURE_PIDS $app_pid"
	# once the interpreter has started (0.2 s of CPU: it then computes)
	for i in $(seq 1 100); do
		[ "$(sed 's/.*) //' /proc/"$app_pid"/stat 2>/dev/null | awk '{print $12 + $13}')" -gt 20 ] 2>/dev/null && break
		sleep 0.05
	done
	run_csampler -v -d 1 -o "$T/emb$v.folded" -p "$app_pid"
	kill "$app_pid" 2>/dev/null
	wait "$app_pid" 2>/dev/null
	assert_eq "$v: exit status" "$CS_STATUS" 0
	grep -q "runs a CPython older than 3.11" "$T/cs.err" &&
		fail "$v: its version was not read: $(cat "$T/cs.err")"
	grep -q "runs CPython $v: its Python frames are read" "$T/cs.err" ||
		fail "$v: no -v notice that its frames are read: $(cat "$T/cs.err")"
	assert_folded_has "$T/emb$v.folded" ';spin_embedded( |;)'
	total=$(folded_total "$T/emb$v.folded")
	in=$(folded_count "$T/emb$v.folded" ';spin_embedded(;|$)')
	note "$v: $in of $total samples in spin_embedded"
	[ "$in" -ge $((total * 8 / 10)) ] || fail "$v: $in of $total samples in spin_embedded"
	tested=$((tested + 1))
done
[ "$tested" -gt 0 ] || skip "no pyenv CPython 3.6, 3.8 or 3.10 with its static library"
exit 0
