#!/bin/sh
# dump_children: --dump --children on a shell dumps the shell and every
# process under it, children before grandchildren, each under its own
# "Process PID" heading with its threads: a running program (unwound to its
# functions), a sleeping one read in place, and a nested shell with a child
# of its own. Every process ends untraced and running. (It was refused:
# "--dump cannot be combined with --children".)
. "$TESTS_SRCDIR/lib.sh"
need_root

start_fixture_sh() {
	sh -c "'$PROGS/hot' 60 >/dev/null & sleep 60 & sh -c 'sleep 61; :' & wait" &
	SHELL_PID=$!
	FIXTURE_PIDS="${FIXTURE_PIDS:-} $SHELL_PID"
}
start_fixture_sh
# the tree: the shell, hot, sleep 60, the nested sh, sleep 61
for i in $(seq 1 100); do
	[ "$(pgrep -P "$SHELL_PID" | wc -l)" = 3 ] && NESTED=$(pgrep -x -P "$SHELL_PID" sh) &&
		[ -n "$NESTED" ] && [ -n "$(pgrep -P "$NESTED")" ] && break
	sleep 0.05
done
HOT=$(pgrep -P "$SHELL_PID" -x hot)
SLEEP=$(pgrep -P "$SHELL_PID" -x sleep)
GRAND=$(pgrep -P "$NESTED")
[ -n "$HOT" ] && [ -n "$SLEEP" ] && [ -n "$GRAND" ] || harness "the shell's tree did not start"
FIXTURE_PIDS="$FIXTURE_PIDS $HOT $SLEEP $NESTED $GRAND"

run_csampler --dump --children -p "$SHELL_PID"
assert_eq "exit status" "$CS_STATUS" 0
OUT=$T/cs.out
order=$(sed -n 's/^Process \([0-9]*\): .*/\1/p' "$OUT" | tr '\n' ' ')
note "processes dumped: $order"
set -- $order
assert_eq "processes dumped" "$#" 5
assert_eq "the first" "$1" "$SHELL_PID"
assert_eq "the last (a grandchild)" "$5" "$GRAND"
for p in "$HOT" "$SLEEP" "$NESTED"; do
	case " $2 $3 $4 " in *" $p "*) ;; *) fail "child $p not among the second to fourth: $order" ;; esac
done
# each heading followed by its threads; the running program unwound
awk -v hot="$HOT" '/^Process / { cur = $2 } /^Thread / { n[cur]++ }
	/ in (leaf_[abc]|main) / && cur == hot ":" { h = 1 }
	END { for (p in n) c++; exit !(c == 5 && h) }' "$OUT" ||
	fail "not every process has its threads, or hot is not unwound: $(head -40 "$OUT")"
grep -q "^Thread sleep (tid $SLEEP, main) state S (sleeping), in syscall clock_nanosleep" "$OUT" ||
	fail "sleep not shown blocked: $(grep -A1 "^Process $SLEEP:" "$OUT")"
for p in "$SHELL_PID" "$HOT" "$SLEEP" "$NESTED" "$GRAND"; do
	assert_untraced_running "$p"
done
exit 0
