#!/bin/sh
# target_errors_strace: csampler launched under a tracer that follows forks
# (strace -f): the child is the tracer's already; the one-line message names
# that tracer (it blamed SELinux/AppArmor before), status 68.
. "$TESTS_SRCDIR/lib.sh"
need_root
need_cmd strace

CS_STATUS=0
# (LeakSanitizer cannot run under a tracer: no leak check in that run)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
strace -f -o /dev/null "$CSAMPLER" -q -d 1 -o "$T/st.folded" -- true \
	>"$T/cs.out" 2>"$T/cs.err" || CS_STATUS=$?
assert_eq "under strace -f: exit status" "$CS_STATUS" 68
assert_match "under strace -f: message" "$(cat "$T/cs.err")" \
	"^csampler: cannot trace true: csampler itself runs under a tracer, process [0-9]+ \\(strace\\), that follows its children; run csampler outside it \\(or without -f\\)$"
exit 0
