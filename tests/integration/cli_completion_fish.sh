#!/bin/sh
# cli_completion_fish: the fish completion (csampler.fish), driven by fish
# itself through `complete -C`: options, PIDs for -p, formats for -f, the
# program after "--", and nothing of csampler's own after the program; in
# each mode (--dump, -i, --top, --serve) no option offered is one csampler
# refuses.
. "$TESTS_SRCDIR/lib.sh"
need_cmd fish

COMPDIR=$TESTS_SRCDIR/../completions
start_named_target

# ---- fish -----------------------------------------------------------------
fish_complete() {
	timeout -k 5 30 fish --no-config -c "source '$COMPDIR/csampler.fish'; complete -C '$1'" |
		cut -f1 | sort -u >"$T/reply" || fail "fish completion of '$1' failed"
}

fish --no-execute "$COMPDIR/csampler.fish" || fail "csampler.fish: fish syntax error"
check_completions fish fish_complete
check_mode_completions fish fish_complete --
fish_complete "csampler -F 99 ls --dur"
grep -q -- '--duration' "$T/reply" && fail "fish: 'ls --dur' completed csampler's own option"
exit 0
