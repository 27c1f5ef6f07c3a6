#!/bin/sh
# fault_children_memory: --children on a shell loop that starts about 900
# short-lived processes (sh, cat). Each process's symbolizer loaded libc's
# debug information anew (the debug file is compressed: ~10 MB a process):
# 5.7 GB at 499 Hz (940 MB and 3 s to symbolize 90 samples at 99 Hz). A
# binary's addresses are now looked up where it was loaded first (and once
# per file offset), so csampler stays under 400 MB (about 200 MB), and
# most samples still get a named leaf. And file descriptors: each process
# held its maps file, its root and each binary it mapped for the whole run
# (3000 vfork children held 18288), so with 'ulimit -n 256' the run ran
# out. Now a gone process closes its maps file, and a binary or root many
# processes share is opened once: the same loop under 'ulimit -n 256'
# needs no more, and its samples are named.
. "$TESTS_SRCDIR/lib.sh"
need_root
need_cmd python3

CS_STATUS=0
python3 -c '
import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=open(sys.argv[1], "w"))
print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
' "$T/cs.err" "$CSAMPLER" -q --children -F 499 -o "$T/c.folded" -- \
	sh -c 'for i in $(seq 300); do x=$(echo $i | cat | cat); done' >"$T/rusage" ||
	harness "python3 failed"
read -r status maxrss <"$T/rusage"
assert_eq "status" "$status" 0
# (AddressSanitizer's shadow and quarantine take several times more)
limit=400
ldd "$CSAMPLER" 2>/dev/null | grep -q libasan && limit=2000
note "csampler's peak RSS: $((maxrss / 1024)) MB (limit $limit MB; it was 5.7 GB)"
[ "$maxrss" -lt $((limit * 1024)) ] || fail "peak RSS $((maxrss / 1024)) MB, expected under $limit MB"
total=$(folded_total "$T/c.folded")
named=$(awk '{ c = $NF; st = $0; sub(/ [0-9]+$/, "", st); n = split(st, f, ";");
	       if (f[n] !~ /^(0x|\[)/) s += c } END { print s + 0 }' "$T/c.folded")
note "$named of $total samples have a named leaf"
[ "$total" -gt 0 ] || fail "no samples: $(cat "$T/cs.err")"
[ $((named * 2)) -ge "$total" ] || fail "only $named of $total samples have a named leaf: $(head -5 "$T/c.folded")"

CS_STATUS=0
( ulimit -n 256 && exec "$CSAMPLER" -q --children -F 499 -o "$T/f.folded" -- \
	sh -c 'for i in $(seq 300); do x=$(echo $i | cat | cat); done' ) >"$T/cs.out" 2>"$T/cs.err" ||
	CS_STATUS=$?
assert_eq "ulimit -n 256: status" "$CS_STATUS" 0
grep -q 'out of file descriptors\|Too many open files' "$T/cs.err" &&
	fail "ulimit -n 256: ran out of descriptors: $(head -3 "$T/cs.err")"
total=$(folded_total "$T/f.folded")
named=$(awk '{ c = $NF; st = $0; sub(/ [0-9]+$/, "", st); n = split(st, f, ";");
	       if (f[n] !~ /^(0x|\[)/) s += c } END { print s + 0 }' "$T/f.folded")
note "ulimit -n 256: $named of $total samples have a named leaf"
[ "$total" -gt 0 ] && [ $((named * 2)) -ge "$total" ] ||
	fail "ulimit -n 256: only $named of $total samples have a named leaf: $(cat "$T/cs.err")"
exit 0
