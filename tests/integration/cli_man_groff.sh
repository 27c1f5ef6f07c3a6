#!/bin/sh
# cli_man_groff: csampler(1) renders with groff -man without a single
# warning (-ww), as man(1) would render it.
. "$TESTS_SRCDIR/lib.sh"
need_cmd groff

MAN=$TESTS_SRCDIR/../doc/csampler.1
[ -f "$MAN" ] || fail "missing $MAN"
groff -man -ww -z "$MAN" >"$T/groff.err" 2>&1 || fail "groff failed: $(cat "$T/groff.err")"
assert_eq "groff -man -ww -z warnings" "$(cat "$T/groff.err")" ""
# and the text it renders names the options (a page that renders empty
# would pass the line above)
groff -man -Tutf8 -P-cbu "$MAN" 2>/dev/null >"$T/man.txt"
grep -q -- '--backend' "$T/man.txt" || fail "the rendered page does not name --backend: $(head -5 "$T/man.txt")"
exit 0
