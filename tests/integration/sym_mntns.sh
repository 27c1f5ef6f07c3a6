#!/bin/sh
# sym_mntns: a fixture in its own mount namespace, its binary on a tmpfs only
# that namespace sees, symbolizes (files are read through the target's eyes).
. "$TESTS_SRCDIR/lib.sh"
need_root
need_cmd unshare

mkdir "$T/ns" || harness "mkdir"
unshare -m --propagation private sh -c \
	"mount -t tmpfs csampler-test '$T/ns' && cp '$PROGS/hot' '$T/ns/hot-ns' && exec '$T/ns/hot-ns' 30" \
	>"$T/hot.out" 2>"$T/hot.err" &
launcher=$!
FIXTURE_PIDS="$FIXTURE_PIDS $launcher"
for i in $(seq 1 100); do grep -q '^ready' "$T/hot.out" && break; sleep 0.05; done
grep -q '^ready' "$T/hot.out" || skip "cannot run in a new mount namespace: $(cat "$T/hot.err")"
FIXTURE_PID=$(awk '/^ready/ { print $2 }' "$T/hot.out")
[ -e "$T/ns/hot-ns" ] && harness "the binary is visible outside its namespace"

run_csampler -F 199 -d 2 -o "$T/out.folded" -p "$FIXTURE_PID"
assert_eq "exit status" "$CS_STATUS" 0
assert_folded_has "$T/out.folded" ';main;.*work_round;b1;b2;b3;b4;b5;b6;b7;b8;b9;b10;leaf_b [0-9]+$'
grep -q 'hot-ns+0x' "$T/out.folded" && fail "unsymbolized frames in the namespaced binary"
exit 0
