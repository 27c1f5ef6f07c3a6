#!/bin/sh
# sym_python: profiling the Debian python3 interpreter running a Python loop
# names >= 95% of the frames that fall in binaries (the interpreter and its
# libraries have a symbol table: .symtab, in the file or its detached debug
# file; the test skips when the interpreter's is missing). Unnamed frames show
# as "module+0xOFF"; frames outside any file ("0x..." / "[anon]@0x...") are not
# counted.
. "$TESTS_SRCDIR/lib.sh"
need_root
PY=/usr/bin/python3
[ -x "$PY" ] || skip "no $PY (the Debian python3 package)"
# Debian strips the interpreter to .dynsym; its many static functions are
# named by the detached symbols python3.X-dbg installs under /usr/lib/debug.
need_cmd readelf
real=$(readlink -f "$PY")
bid=$(readelf -n "$real" 2>/dev/null | awk '/Build ID/ { print $3 }')
case $bid in ??*) ;; *) skip "$real has no build-id" ;; esac
dbg=/usr/lib/debug/.build-id/$(echo "$bid" | cut -c1-2)/$(echo "$bid" | cut -c3-).debug
[ -e "$dbg" ] || skip "no symbol table for $real: install the Debian package $(basename "$real")-dbg"

cat >"$T/loop.py" <<'PYEOF'
import sys, time
t0 = time.time()
def work(n):
    d = {}
    for i in range(n):
        d[str(i)] = [i * 2.5, (i, str(i))]
    return sum(v[0] for v in d.values())
print("ready", flush=True)
while time.time() - t0 < 30:
    work(2000)
PYEOF
"$PY" "$T/loop.py" >"$T/py.out" 2>&1 &
FIXTURE_PID=$!
FIXTURE_PIDS="$FIXTURE_PIDS $FIXTURE_PID"
for i in $(seq 1 100); do grep -q '^ready' "$T/py.out" && break; sleep 0.05; done
grep -q '^ready' "$T/py.out" || harness "python never said ready: $(cat "$T/py.out")"

# (--no-python: the interpreter's own frames, as they are in its binary;
# its Python frames are python_split's)
run_csampler --no-python -F 199 -d 3 -o "$T/out.folded" -p "$FIXTURE_PID"
assert_eq "exit status" "$CS_STATUS" 0
assert_folded_has "$T/out.folded" '_PyEval_EvalFrameDefault'
# frames weighted by sample count; the first field is the thread root
awk '{
	c = $NF; $NF = ""; sub(/ $/, "")
	n = split($0, f, ";")
	for (i = 2; i <= n; i++) {
		if (f[i] ~ /^0x[0-9a-f]+$/ || f[i] ~ /^\[anon\]@0x/) continue
		if (f[i] ~ /^[^ ]+\+0x[0-9a-f]+$/) { unnamed += c; who[f[i]] += c } else named += c
	}
} END {
	total = named + unnamed
	if (total == 0) { print "# no frames"; exit 1 }
	printf "# python3: %d of %d frames in binaries named (%.1f%%)\n", named, total, 100 * named / total
	for (k in who) if (who[k] * 50 > total) printf "#   often unnamed: %s (%d)\n", k, who[k]
	exit (named * 100 >= 95 * total) ? 0 : 1
}' "$T/out.folded" || fail "fewer than 95% of the interpreter's frames are named"
exit 0
