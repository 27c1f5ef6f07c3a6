#!/bin/sh
# unwind_java: a JVM's JIT-compiled code keeps no frame pointer by default,
# so its stacks stop there: the summary says where and what to add
# (-XX:+PreserveFramePointer), in one line, naming the JIT code once (not
# one line per address). With -XX:+PreserveFramePointer at least 95% of
# the stacks are whole, and no such line.
. "$TESTS_SRCDIR/lib.sh"
need_root
need_cmd java
need_cmd javac

cp "$TESTS_SRCDIR/progs/JavaHot.java" "$T/" || harness "no JavaHot.java"
(cd "$T" && javac JavaHot.java) >"$T/javac.err" 2>&1 || harness "javac: $(cat "$T/javac.err")"
run_csampler -F 99 -o "$T/nofp.folded" -- java -cp "$T" JavaHot 2
assert_eq "exit status" "$CS_STATUS" 0
# (the JIT code named once, not one line per address; another place,
# in the JVM itself, may make a line of its own)
assert_eq "lines naming JIT code" "$(grep -c 'of stacks stop in JIT code' "$T/cs.err")" 1
grep 'of stacks stop in \[anon\]@' "$T/cs.err" && fail "JIT code named by address"
assert_match "the line" "$(grep 'of stacks stop in JIT code' "$T/cs.err")" \
	'^csampler: [0-9]+% of stacks stop in JIT code: JIT-compiled Java without frame pointers: start the JVM with -XX:\+PreserveFramePointer \(and name its code with a perf map: jcmd PID Compiler.perfmap\)$'
run_csampler -F 99 -o "$T/fp.folded" -- java -XX:+PreserveFramePointer -cp "$T" JavaHot 2
assert_eq "exit status (-XX:+PreserveFramePointer)" "$CS_STATUS" 0
pct=$(sed -n 's/.*; \([0-9]*\)% of stacks complete$/\1/p' "$T/cs.err")
assert_within "stacks complete with -XX:+PreserveFramePointer (%)" "${pct:-0}" 95 100
grep 'of stacks stop in' "$T/cs.err" && fail "a stop named with frame pointers kept"
exit 0
