#!/bin/sh
# python_split: Python frames in place of the interpreter's evaluation loop
# (issue 33). Debian's python3.11 runs tests/progs/pysplit.py under
# csampler: three threads, each its own mix of pure Python functions
# (py_arith, py_text), a C extension that holds the GIL (c_json:
# json.dumps) and one that lets it go (c_hash: hashlib's sha256), each
# call timed with the thread's own CPU clock (299 Hz: a share test runs
# beside another, which 499 Hz under ASan starved of CPU). Then:
# - at least 99% of the samples that pass through the evaluation loop show
#   Python frames there (no _PyEval_EvalFrameDefault left in the stack);
# - the split between the four functions (every sample whose stack holds
#   the function) is the fixture's own within 3 points (or 3 standard
#   errors, on a busy machine's fewer samples);
# - a C extension keeps its C frames above the Python function that called
#   it (json's encoder over c_json, sha256 over c_hash);
# - the pprof profile, read by go tool pprof, has the Python frames in a
#   mapping of their own, [python], with file and line;
# - --no-python shows the evaluation loop and no Python function;
# - -v says the layout came from csampler's table (it fits Debian's
#   build; its debug information is read only where it does not).
. "$TESTS_SRCDIR/lib.sh"
need_root
PY=/usr/bin/python3.11
[ -x "$PY" ] || skip "no $PY (Debian bookworm's python3.11): the layout known is 3.11's"

F=$T/py.folded
run_csampler -v -F 299 -o "$F" -o "$T/py.pb.gz" -- "$PY" "$TESTS_SRCDIR/progs/pysplit.py" 6
assert_eq "exit status" "$CS_STATUS" 0
grep -q '^cpu py_arith [1-9]' "$T/cs.out" || fail "pysplit did not finish: $(cat "$T/cs.out" "$T/cs.err")"
note "$(grep -E '^csampler: [0-9]+ samples' "$T/cs.err" | head -1)"
# -v says where the layout came from: csampler's table, which fits
# Debian's build (its debug information is read only where it does not)
layout=$(grep -c "runs CPython 3\.11: its Python frames are read, laid out as csampler's table" "$T/cs.err")
assert_eq "lines saying the interpreter's frames are read with the table" "$layout" 1
total=$(folded_total "$F")
funcs='(py_arith|py_text|c_json|c_hash)'
through=$(folded_count "$F" "(^|;)($funcs|_PyEval_EvalFrameDefault)(;|\$)")
left=$(folded_count "$F" '(^|;)_PyEval_EvalFrameDefault(;|$)')
note "samples through the evaluation loop: $through of $total; with the loop's own frame left: $left"
[ "$through" -gt 0 ] || fail "no sample passed through the evaluation loop: $(head -3 "$F")"
[ $((left * 100)) -le "$through" ] ||
	fail "$left of $through samples through the evaluation loop show no Python frames there: $(grep -m3 _PyEval_EvalFrameDefault "$F")"

# the split by Python function, against the fixture's own CPU clocks
for f in py_arith py_text c_json c_hash; do
	echo "$f $(folded_count "$F" "(^|;)$f(;|\$)") $(awk -v f="$f" '$1 == "cpu" && $2 == f { print $3 }' "$T/cs.out")"
done >"$T/split"
awk '{ s += $2; t += $3 } END { if (s == 0 || t == 0) exit 1 }' "$T/split" || fail "no split: $(cat "$T/split")"
awk -v total="$total" "$AWK_ROOT"'
	{ f[NR] = $1; s[NR] = $2; t[NR] = $3; S += $2; TT += $3 }
	END {
		bad = 0
		for (i = 1; i <= NR; i++) {
			p = 100 * s[i] / S; w = 100 * t[i] / TT; d = p - w; if (d < 0) d = -d
			tol = 3 * 100 * root((w / 100) * (1 - w / 100) / S); if (tol < 3) tol = 3
			printf "# %-8s csampler %5.1f%% (%d samples), its own %5.1f%%; tolerance %.1f\n", f[i], p, s[i], w, tol
			if (d > tol) bad = 1
		}
		printf "# the four functions are in %.1f%% of all samples\n", 100 * S / total
		exit bad }' "$T/split" || fail "the split by Python function is not the fixture's own"
covered=$(awk '{ s += $2 } END { print s }' "$T/split")
[ $((covered * 100)) -ge $((total * 80)) ] ||
	fail "the four functions are in only $covered of $total samples (less than 80%)"

# C extensions keep their frames over the Python function that called them
folded_count "$F" ';c_json;.*encoder' | grep -qv '^0$' || fail "no json encoder frame over c_json: $(grep -m3 ';c_json' "$F")"
folded_count "$F" ';c_hash;.*(sha256|SHA256|EVP_Digest)' | grep -qv '^0$' ||
	fail "no sha256 frame over c_hash: $(grep -m3 ';c_hash' "$F")"

# pprof: a mapping of their own, with functions, files and lines
if command -v go >/dev/null 2>&1; then
	need_go
	"$GO" tool pprof -raw "$T/py.pb.gz" >"$T/raw" 2>"$T/pprof.err" || fail "go tool pprof -raw: $(cat "$T/pprof.err")"
	pymap=$(awk '/^Mappings/ { on = 1; next } on && $3 == "[python]" { sub(/:$/, "", $1); print $1 }' "$T/raw")
	[ -n "$pymap" ] || fail "no [python] mapping: $(sed -n '/^Mappings/,$p' "$T/raw")"
	awk '/^Mappings/ { on = 1; next } on && $3 == "[python]"' "$T/raw" | grep -q '\[FN\]\[FL\]\[LN\]' ||
		fail "the [python] mapping does not claim functions, files and lines: $(grep '\[python\]' "$T/raw")"
	grep -Eq "^ +[0-9]+: 0x[0-9a-f]+ M=$pymap py_arith [^ ]*/pysplit\.py:(2[5-9]|30) " "$T/raw" ||
		fail "no py_arith location at pysplit.py:LINE in [python]: $(grep -m3 py_arith "$T/raw")"
	"$GO" tool pprof -top -nodecount=5 "$T/py.pb.gz" >"$T/top" 2>"$T/pprof.err" || fail "go tool pprof -top: $(cat "$T/pprof.err")"
	grep -q ' py_arith$' "$T/top" || fail "py_arith is not among pprof's top 5: $(cat "$T/top")"
else
	note "no go (golang-go): the pprof profile was not read back"
fi

# --no-python: the interpreter's C functions, as perf shows them
run_csampler --no-python -F 199 -o "$T/off.folded" -- "$PY" "$TESTS_SRCDIR/progs/pysplit.py" 1
assert_eq "exit status (--no-python)" "$CS_STATUS" 0
off_total=$(folded_total "$T/off.folded")
off_loop=$(folded_count "$T/off.folded" '(^|;)_PyEval_EvalFrameDefault(;|$)')
off_py=$(folded_count "$T/off.folded" "(^|;)$funcs(;|\$)")
note "--no-python: evaluation loop in $off_loop of $off_total samples, Python functions in $off_py"
assert_eq "samples naming a Python function with --no-python" "$off_py" 0
[ $((off_loop * 2)) -ge "$off_total" ] || fail "--no-python: the evaluation loop is in only $off_loop of $off_total"
exit 0
