#!/bin/sh
# target_exec_privileges: a set-user-ID program started under csampler
# --children. Without CAP_SYS_PTRACE (an unprivileged user, setpriv) the
# kernel runs it with the user's privileges, as it does under any tracer
# (a copy of id made set-user-ID root prints 0 alone, 65534 traced):
# csampler says so in one line naming the program and the fix (it said
# nothing, and ping failed). As root it keeps them (0) and says nothing.
. "$TESTS_SRCDIR/lib.sh"
need_root
need_cmd setpriv

chmod 755 "$T" || harness "chmod"
cp "$(command -v id)" "$T/id-suid" && chown root:root "$T/id-suid" && chmod 4755 "$T/id-suid" ||
	harness "cannot make a set-user-ID copy of id"
mkdir "$T/out" && chmod 777 "$T/out" || harness "mkdir"
AS_NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
alone=$($AS_NOBODY "$T/id-suid" -u 2>&1)
[ "$alone" = 0 ] || skip "set-user-ID programs do not run as their owner here ($alone: a nosuid mount?)"

CS_STATUS=0
$AS_NOBODY "$CSAMPLER" -q --children -o "$T/out/u.folded" -- sh -c "'$T/id-suid' -u" \
	>"$T/cs.out" 2>"$T/cs.err" || CS_STATUS=$?
assert_eq "unprivileged: exit status (the program's)" "$CS_STATUS" 0
assert_eq "unprivileged: the program's effective uid" "$(cat "$T/cs.out")" 65534
assert_match "unprivileged: message" "$(cat "$T/cs.err")" \
	"^csampler: process [0-9]+ \\(id-suid\\) runs a program with set-user-ID, which the kernel does not grant under a tracer without CAP_SYS_PTRACE: it runs with your privileges, and may fail; run csampler as root to keep them$"

CS_STATUS=0
"$CSAMPLER" -q --children -o "$T/out/r.folded" -- $AS_NOBODY sh -c "'$T/id-suid' -u" \
	>"$T/cs.out" 2>"$T/cs.err" || CS_STATUS=$?
assert_eq "root: exit status" "$CS_STATUS" 0
assert_eq "root: the program's effective uid" "$(cat "$T/cs.out")" 0
assert_eq "root: messages" "$(cat "$T/cs.err")" ""
exit 0
