#!/bin/sh
# profile_options: options that shape a profile, through the real program:
# --thread-group merges matching threads under one name, each thread or
# group a tower of its own (it implies --threads); --addresses keeps
# module+offset frames; without -o the default csampler-PID-DATE.pb.gz is
# written in the current directory and pprof reads it; --children follows a
# forked and exec'd child, and without it the child is not sampled.
. "$TESTS_SRCDIR/lib.sh"
need_root
need_go

# --thread-group (it implies --threads: without, it changed nothing)
start_fixture threads
run_csampler -q --thread-group 'th-spin-.*=spinners' -F 499 -d 2 \
	-o "$T/g.folded" -p "$FIXTURE_PID"
assert_eq "thread-group: exit status" "$CS_STATUS" 0
assert_folded_has "$T/g.folded" '^spinners;.*spin_a_leaf [0-9]+$'
assert_folded_has "$T/g.folded" '^spinners;.*spin_b_leaf [0-9]+$'
grep -q '^th-spin-' "$T/g.folded" && fail "a grouped thread kept its own root frame"
kill -KILL "$FIXTURE_PID"

# --addresses
run_csampler -q --addresses -F 199 -o "$T/a.folded" -- "$PROGS/hot" 1
assert_eq "addresses: exit status" "$CS_STATUS" 0
assert_folded_has "$T/a.folded" 'hot\+0x[0-9a-f]+ [0-9]+$'
grep -q 'leaf_a' "$T/a.folded" && fail "--addresses still symbolized leaf_a"

# the default output file (at 499 Hz for 2 s: at the default rate one
# second of a fixture starved by CI's sanitizer stage held no leaf_a)
start_fixture hot 30
(cd "$T" && timeout 60 "$CSAMPLER" -F 499 -d 2 -p "$FIXTURE_PID" >"$T/d.out" 2>"$T/d.err") ||
	fail "default output run failed: $(cat "$T/d.err")"
set -- "$T"/csampler-"$FIXTURE_PID"-*.pb.gz
[ -f "$1" ] || fail "no csampler-$FIXTURE_PID-DATE.pb.gz in the current directory"
grep -q "wrote .*csampler-$FIXTURE_PID-.*\.pb\.gz" "$T/d.err" || fail "the default file was not named: $(cat "$T/d.err")"
gzip -t "$1" || fail "the default file is not gzip"
"$GO" tool pprof -top "$1" >"$T/top.txt" 2>&1 || fail "pprof cannot read it: $(cat "$T/top.txt")"
grep -q leaf_a "$T/top.txt" || fail "pprof -top of the default file lacks leaf_a"
kill -KILL "$FIXTURE_PID"

# --children: sh forks and execs hot; only with --children is it sampled
run_csampler -q --children -F 199 -o "$T/c.folded" -- sh -c "'$PROGS/hot' 1.5; true"
assert_eq "children: exit status" "$CS_STATUS" 0
assert_folded_has "$T/c.folded" 'a10;leaf_a [0-9]+$'
run_csampler -q -F 199 -o "$T/n.folded" -- sh -c "'$PROGS/hot' 1.5; true"
assert_eq "no children: exit status" "$CS_STATUS" 0
grep -q 'leaf_a' "$T/n.folded" && fail "without --children the child was sampled"
exit 0
