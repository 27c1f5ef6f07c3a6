#!/bin/sh
# cli_documented: every long option csampler --help lists is accepted by the
# program, documented in csampler(1) and completed by the bash, zsh and fish
# completions; the completions offer no option --help does not list; the man
# page has its sections and documents every exit status of error.h.
. "$TESTS_SRCDIR/lib.sh"

TOP=$TESTS_SRCDIR/..
MAN=$TOP/doc/csampler.1
BASH_COMP=$TOP/completions/csampler
ZSH_COMP=$TOP/completions/_csampler
FISH_COMP=$TOP/completions/csampler.fish
for f in "$MAN" "$BASH_COMP" "$ZSH_COMP" "$FISH_COMP" "$TOP/src/base/error.h"; do
	[ -f "$f" ] || fail "missing $f"
done

run_csampler --help
assert_eq "--help status" "$CS_STATUS" 0
# Long options in the option lines of --help (lines starting with spaces).
grep -E '^  ' "$T/cs.out" | grep -oE -- '--[a-z][a-z-]+' | sort -u >"$T/help-opts"
n=$(wc -l <"$T/help-opts")
[ "$n" -ge 20 ] || fail "only $n long options found in --help"
note "$n long options in --help"

# The man page with its \- escapes undone.
sed 's/\\-/-/g' "$MAN" >"$T/man.txt"

missing=""
while read -r opt; do
	name=${opt#--}
	# the program knows it (it may refuse the line, but not the option)
	"$CSAMPLER" "$opt" >/dev/null 2>"$T/err" </dev/null
	grep -q "unknown option" "$T/err" && missing="$missing
  $opt: unknown to csampler"
	grep -Eq -- "(^|[^a-z-])$opt([^a-z-]|\$)" "$T/man.txt" || missing="$missing
  $opt: not in doc/csampler.1"
	grep -Eq -- "(^|[^a-z-])$opt([^a-z-]|\$)" "$BASH_COMP" || missing="$missing
  $opt: not in completions/csampler (bash)"
	grep -Eq -- "(^|[^a-z-])$opt([^a-z-]|\$)" "$ZSH_COMP" || missing="$missing
  $opt: not in completions/_csampler (zsh)"
	grep '^complete ' "$FISH_COMP" | grep -Eq -- " -l $name( |\$)" || missing="$missing
  $opt: not in completions/csampler.fish"
done <"$T/help-opts"
[ -z "$missing" ] || fail "options not documented everywhere:$missing"

# No completion offers an option that --help does not list (stale entries).
{
	grep -oE -- "(^|[ '(\"{,])--[a-z][a-z-]+" "$BASH_COMP" "$ZSH_COMP" | grep -oE -- '--[a-z][a-z-]+'
	grep '^complete ' "$FISH_COMP" | grep -oE -- " -l [a-z][a-z-]+" | sed 's/^ -l /--/'
} | sort -u >"$T/comp-opts"
stale=$(comm -23 "$T/comp-opts" "$T/help-opts" | tr '\n' ' ')
assert_eq "completion options not in --help" "$stale" ""

# Man page: sections (cli_man_groff renders it).
for section in NAME SYNOPSIS DESCRIPTION OPTIONS '"OUTPUT FORMATS"' '"EXIT STATUS"' \
	       ENVIRONMENT PERMISSIONS EXAMPLES '"SEE ALSO"'; do
	grep -qx "\.SH $section" "$MAN" || fail "man page has no section $section"
done

# Every exit status of error.h is documented in EXIT STATUS.
sed -n '/^\.SH "EXIT STATUS"/,/^\.SH /p' "$MAN" >"$T/exit.txt"
for code in $(sed -n 's/^[[:space:]]*CS_EXIT_[A-Z_]* = \([0-9][0-9]*\),.*/\1/p' "$TOP/src/base/error.h"); do
	grep -qx "\.B $code" "$T/exit.txt" || fail "exit status $code (error.h) not in the man page"
done
grep -q "128" "$T/exit.txt" || fail "man page does not say a program killed by a signal gives 128+N"

# The examples the issue promises.
grep -qF 'csampler -p 1234 -d 10 -o - | flamegraph.pl > out.svg' "$T/man.txt" ||
	fail "man page lacks the flamegraph.pl pipe example"
grep -qF 'go tool pprof -http=: ' "$T/man.txt" || fail "man page lacks the go tool pprof example"
exit 0
