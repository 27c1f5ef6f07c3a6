#!/bin/sh
# cli_bash_completion: completions/csampler, driven through bash-completion
# as an interactive bash would: COMP_WORDS/COMP_CWORD set, the function that
# `complete -p csampler` names called, COMPREPLY read back. In each mode
# (--dump, -i, --top, --serve) no option offered is one csampler refuses.
. "$TESTS_SRCDIR/lib.sh"

BC=/usr/share/bash-completion/bash_completion
[ -f "$BC" ] || skip "bash-completion is not installed ($BC)"
need_cmd bash
COMP_FILE=$TESTS_SRCDIR/../completions/csampler

start_named_target

# complete WORD... : print COMPREPLY, one per line, for the command line
# WORD... with the cursor at the end of the last word.
complete_line() {
	bash -c '
		. "$1" >/dev/null 2>&1
		. "$2"
		shift 2
		fn=$(complete -p csampler | sed -n "s/.*-F \([^ ]*\) csampler\$/\1/p")
		[ -n "$fn" ] || { echo "no completion function for csampler" >&2; exit 3; }
		COMP_WORDS=("$@")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMP_LINE="$*"
		COMP_POINT=${#COMP_LINE}
		COMPREPLY=()
		"$fn" csampler "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}" 2>/dev/null
		printf "%s\n" "${COMPREPLY[@]}"
	' complete_line "$BC" "$COMP_FILE" "$@" >"$T/reply" || fail "completion failed for: $*"
}

# reply_is WHAT EXPECTED: the candidates, in any order, are exactly EXPECTED
# (one a line).
reply_is() {
	got=$(LC_ALL=C sort "$T/reply")
	want=$(printf '%s\n' "$2" | LC_ALL=C sort)
	assert_eq "completion of '$1'" "$got" "$want"
}

complete_line csampler --dur
reply_is "csampler --dur" "--duration"

complete_line csampler --thread-
reply_is "csampler --thread-" "--thread-group"

# -p: running PIDs with their command names; the test's own process is one.
# (the last PID the kernel gave, read before the listing: a process made
# between the two is in the listing or after that PID)
last0=$(awk '{print $5}' /proc/loadavg)
ls /proc | grep -E '^[0-9]+$' | sort -n >"$T/before"
complete_line csampler -p ""
last1=$(awk '{print $5}' /proc/loadavg)
grep -qx "$TARGET ($NAME)" "$T/reply" ||
	fail "'-p ' did not offer '$TARGET ($NAME)': $(head -5 "$T/reply" | tr '\n' ' ')..."
n=$(grep -cE '^[0-9]+ \(.*\)$' "$T/reply")
[ "$n" -ge 2 ] || fail "'-p ' offered $n processes"
bad=$(grep -vE '^[0-9]+ \(.*\)$' "$T/reply" | head -3 | tr '\n' ' ')
assert_eq "entries of '-p ' not 'PID (name)'" "$bad" ""
# every PID offered was running: it still is, or it was when the
# completion began, or it was given out while it ran (the machine runs
# other tests; PIDs wrap at pid_max)
made_meanwhile() {
	if [ "$last1" -ge "$last0" ]; then [ "$1" -gt "$last0" ] && [ "$1" -le "$last1" ]
	else [ "$1" -gt "$last0" ] || [ "$1" -le "$last1" ]; fi
}
bogus=$(for p in $(sed 's/ .*//' "$T/reply"); do
	[ -d "/proc/$p" ] || made_meanwhile "$p" || grep -qx "$p" "$T/before" || echo "$p"
done | head -3 | tr '\n' ' ')
assert_eq "PIDs offered by '-p ' that never ran" "$bogus" ""
# a command name selects its PID, inserted bare
complete_line csampler -p "$NAME"
reply_is "csampler -p $NAME" "$TARGET"
complete_line csampler --pid="$NAME"
reply_is "csampler --pid=$NAME" "$TARGET"
# the digits of a PID narrow to it
complete_line csampler -p "$TARGET"
grep -Eqx "$TARGET|$TARGET \($NAME\)" "$T/reply" || fail "'-p $TARGET' did not offer $TARGET"

complete_line csampler -f ""
reply_is "csampler -f" "pprof
folded
svg
text
speedscope"
complete_line csampler --format=sv
reply_is "csampler --format=sv" "svg"
complete_line csampler --attach-mode ""
reply_is "csampler --attach-mode" "persistent
per-sample"

# -o: files, and '-'
mkdir "$T/dir" && : >"$T/dir/prof.svg" && : >"$T/dir/prof.folded"
complete_line csampler -o "$T/dir/prof."
reply_is "csampler -o DIR/prof." "$T/dir/prof.svg
$T/dir/prof.folded"
complete_line csampler -o -
grep -qx -- "-" "$T/reply" || fail "'-o -' does not offer standard output"

# After "--" or the program's name: the program, then its own arguments.
complete_line csampler -o x.svg -- "$NAME"
grep -qx "$NAME" "$T/reply" && fail "'-- $NAME' offered a non-command"
complete_line csampler -o x.svg -- ech
grep -qx echo "$T/reply" || fail "'-- ech' did not offer echo"
complete_line csampler -F 199 ech
grep -qx echo "$T/reply" || fail "'-F 199 ech' did not offer echo"
complete_line csampler -- ls --dur
grep -q -- "--duration" "$T/reply" && fail "'-- ls --dur' completed csampler's own option"

# In each mode, only the options csampler takes there.
# shellcheck disable=SC2086
bash_complete() { complete_line $1; }
check_mode_completions bash bash_complete
exit 0
