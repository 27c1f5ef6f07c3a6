#!/bin/sh
# cli_shell_completions: the zsh (_csampler) and fish (csampler.fish)
# completions, driven by the shells themselves: zsh through zpty with compadd
# recorded, fish through `complete -C`. Options, PIDs for -p, formats for -f,
# and the program after "--". Skips a shell that is not installed; skips
# the test when neither is.
. "$TESTS_SRCDIR/lib.sh"

COMPDIR=$TESTS_SRCDIR/../completions
have_zsh=no have_fish=no
command -v zsh >/dev/null 2>&1 && have_zsh=yes
command -v fish >/dev/null 2>&1 && have_fish=yes
[ "$have_zsh$have_fish" = nono ] && skip "neither zsh nor fish is installed"

NAME=csq$$
cp /bin/sleep "$T/$NAME" || harness "cannot copy sleep"
"$T/$NAME" 300 &
TARGET=$!
FIXTURE_PIDS="$FIXTURE_PIDS $TARGET"
wait_state "$TARGET" "SR"

# ---- zsh ------------------------------------------------------------------
cat >"$T/capture.zsh" <<'ZSH'
# zsh -f capture.zsh FPATH-DIR 'command line': print each completion candidate.
# The markers are split in the lines typed ("<CA""ND>") because the pty
# echoes those lines back: a marker spelled whole in them would match its
# own echo, which on a busy machine can come before the shell has run them.
zmodload zsh/zpty || exit 3
zpty z zsh -f -i
zpty -w z "PROMPT=''; fpath=($1 \$fpath); autoload -Uz compinit; compinit -u -D"
zpty -w z 'compadd () { local -a __hits; builtin compadd -O __hits "$@"; (( $#__hits )) && print -rl -- "<CA""ND>"${^__hits}; builtin compadd "$@" }'
zpty -w z 'comp-done () { print -r -- "<DO""NE>" }'
zpty -w z 'zle -C cap-complete complete-word _main_complete; cap-wrap () { zle cap-complete; zle comp-done }; zle -N comp-done; zle -N cap-wrap; bindkey "^T" cap-wrap'
zpty -w z 'print -r -- "<REA""DY>"'
zpty -r z line '*<READY>*' >/dev/null
zpty -w -n z "$2"$'\x14'
while zpty -r z line; do
  [[ $line == *'<DONE>'* ]] && break
  [[ $line == *'<CAND>'* ]] && print -r -- "${${line##*<CAND>}%%$'\r'}"
done
zpty -d z
ZSH

zsh_complete() {
	timeout -k 5 30 zsh -f "$T/capture.zsh" "$COMPDIR" "$1" | tr -d '\r' | sed '/^$/d' | sort -u >"$T/reply" ||
		fail "zsh completion of '$1' failed"
}

if [ "$have_zsh" = yes ]; then
	zsh -n "$COMPDIR/_csampler" || fail "_csampler: zsh syntax error"
	zsh_complete "csampler --dur"
	assert_eq "zsh: csampler --dur" "$(cat "$T/reply")" "--duration"
	zsh_complete "csampler -f "
	assert_eq "zsh: csampler -f" "$(tr '\n' ' ' <"$T/reply")" "folded pprof speedscope svg text "
	zsh_complete "csampler -p "
	grep -qx "$TARGET" "$T/reply" || fail "zsh: '-p ' did not offer $TARGET"
	zsh_complete "csampler --attach-mode="
	assert_eq "zsh: --attach-mode=" "$(tr '\n' ' ' <"$T/reply")" "per-sample persistent "
	zsh_complete "csampler -o x.svg -- ech"
	grep -qx echo "$T/reply" || fail "zsh: '-- ech' did not offer echo"
	grep -q -- '^--' "$T/reply" && fail "zsh: '-- ech' offered options"
	note "zsh completions checked"
else
	note "zsh not installed: _csampler not checked"
fi

# ---- fish -----------------------------------------------------------------
fish_complete() {
	timeout -k 5 30 fish --no-config -c "source '$COMPDIR/csampler.fish'; complete -C '$1'" |
		cut -f1 | sort -u >"$T/reply" || fail "fish completion of '$1' failed"
}

if [ "$have_fish" = yes ]; then
	fish --no-execute "$COMPDIR/csampler.fish" || fail "csampler.fish: fish syntax error"
	fish_complete "csampler --dur"
	assert_eq "fish: csampler --dur" "$(cat "$T/reply")" "--duration"
	fish_complete "csampler -f "
	assert_eq "fish: csampler -f" "$(tr '\n' ' ' <"$T/reply")" "folded pprof speedscope svg text "
	fish_complete "csampler -p "
	grep -qx "$TARGET" "$T/reply" || fail "fish: '-p ' did not offer $TARGET"
	fish_complete "csampler -o x.svg -- ech"
	grep -qx echo "$T/reply" || fail "fish: '-- ech' did not offer echo"
	fish_complete "csampler -F 99 ls --dur"
	grep -q -- '--duration' "$T/reply" && fail "fish: 'ls --dur' completed csampler's own option"
	note "fish completions checked"
else
	note "fish not installed: csampler.fish not checked"
fi
exit 0
