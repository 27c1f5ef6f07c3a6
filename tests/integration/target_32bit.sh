#!/bin/sh
# target_32bit: csampler unwinds 64-bit (x86-64) programs only. A 32-bit
# (i386) program gave every stack as '[truncated];ADDRESS' with status 0;
# now attaching to one or launching one is refused before anything starts
# (status 66, one line saying why), and a launched process that executes
# one (through sh -c 'exec ...') is named in one warning.
. "$TESTS_SRCDIR/lib.sh"
need_root
cc -m32 -O2 -o "$T/spin32" "$TESTS_SRCDIR/progs/spin32.c" 2>"$T/cc.err" ||
	skip "cannot build a 32-bit program (gcc-multilib): $(head -1 "$T/cc.err")"

# the launch is refused before the program runs: this holds on any kernel
run_csampler -q -d 1 -o "$T/b.folded" -- "$T/spin32"
assert_eq "launch: status" "$CS_STATUS" 66
assert_eq "launch: message" "$(cat "$T/cs.err")" \
	"csampler: $T/spin32: a 32-bit program; csampler unwinds 64-bit (x86-64) programs only"

"$T/spin32" >"$T/spin32.out" 2>"$T/spin32.err" &
S=$!
FIXTURE_PIDS="$FIXTURE_PIDS $S"
i=0
until grep -q '^ready' "$T/spin32.out" 2>/dev/null; do
	# (a kernel without 32-bit support, as a PVM guest's or one booted
	# with ia32_emulation=false: "Exec format error")
	case $(proc_state "$S") in Z|'') skip "this kernel does not run 32-bit programs ($(head -c 200 "$T/spin32.err")): the launch's refusal checked, the attach and the exec not" ;;
	esac
	i=$((i + 1)); [ $i -lt 100 ] || harness "spin32 never ready"; sleep 0.05
done

run_csampler -q -d 1 -o "$T/a.folded" -p "$S"
assert_eq "attach: status" "$CS_STATUS" 66
assert_eq "attach: message" "$(cat "$T/cs.err")" \
	"csampler: cannot profile process $S: it runs a 32-bit program; csampler unwinds 64-bit (x86-64) programs only"
assert_untraced_running "$S"
[ -e "$T/a.folded" ] && fail "attach: an output was written"

"$CSAMPLER" -q -d 1 -o "$T/c.folded" -- sh -c "exec '$T/spin32'" >"$T/cs.out" 2>"$T/cs.err" &
cs=$!
sleep 1.5
pkill -KILL -f "^$T/spin32\$" 2>/dev/null
wait "$cs"
assert_match "exec of a 32-bit program: warning" "$(cat "$T/cs.err")" \
	"^csampler: process [0-9]+ \\(spin32\\) now runs a 32-bit program: its samples show the sampled address only"
exit 0
