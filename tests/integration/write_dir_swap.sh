#!/bin/sh
# write_dir_swap: csampler writes as root in shared directories, and its
# outputs are made after sampling. Another user who owns a directory on
# the output's path (say /tmp/theirs in -o /tmp/theirs/prof.txt) can swap
# it for a link to anywhere during the run; the output then landed in the
# link's target (as root: a file made in /etc). Each output's directory is
# opened at the check before sampling and the file made in it (openat,
# linkat, renameat): a directory swapped meanwhile changes nothing. The
# default output's directory is judged before sampling too: an unwritable
# one costs no run (it was found only after sampling, exit 69).
. "$TESTS_SRCDIR/lib.sh"
need_root

mkdir "$T/theirs" "$T/elsewhere" || harness "mkdir"
chown nobody "$T/theirs" || harness "chown"
start_fixture hot 30
"$CSAMPLER" -q -F 199 -d 2 -o "$T/theirs/prof.txt" -o "$T/theirs/prof.folded" \
	-p "$FIXTURE_PID" 2>"$T/cs.err" &
CS=$!
FIXTURE_PIDS="$FIXTURE_PIDS $CS"
# (once csampler samples: it traces the fixture)
for i in $(seq 1 200); do
	[ "$(tracer_tgid "$FIXTURE_PID")" = "$CS" ] && break
	sleep 0.05
done
[ "$(tracer_tgid "$FIXTURE_PID")" = "$CS" ] || fail "csampler did not attach: $(cat "$T/cs.err")"
# the owner of theirs/ swaps it for a link to elsewhere/
mv "$T/theirs" "$T/theirs.moved" && ln -s "$T/elsewhere" "$T/theirs" || harness "swap"
wait_exit "$CS" 30 "csampler" "$FIXTURE_PID"
assert_eq "exit status ($(cat "$T/cs.err"))" "$WAIT_STATUS" 0
for f in prof.txt prof.folded; do
	[ -e "$T/elsewhere/$f" ] && fail "$f was written through the swapped directory's link"
	[ -s "$T/theirs.moved/$f" ] || fail "$f is not in the directory checked: $(ls -la "$T/theirs.moved")"
done
grep -q "leaf_a" "$T/theirs.moved/prof.folded" || fail "the folded output has no leaf_a: $(head -3 "$T/theirs.moved/prof.folded")"
assert_untraced_running "$FIXTURE_PID"

# the default output in a directory the user cannot write: refused before
# the program runs, with the status of an output error
need_cmd setpriv
mkdir "$T/ro" && chmod 755 "$T/ro" || harness "mkdir ro"
CS_STATUS=0
(cd "$T/ro" && setpriv --reuid=nobody --regid=nogroup --clear-groups \
	"$CSAMPLER" -q -d 1 -- sh -c "echo ran" >"$T/ro.out" 2>"$T/ro.err") || CS_STATUS=$?
assert_eq "default output in an unwritable directory: status ($(cat "$T/ro.err"))" "$CS_STATUS" 69
assert_match "default output in an unwritable directory: message" "$(cat "$T/ro.err")" \
	"^csampler: cannot create csampler-0-[0-9-]*\\.pb\\.gz: Permission denied$"
[ -s "$T/ro.out" ] && fail "the program ran though its profile could not be written: $(cat "$T/ro.out")"
exit 0
