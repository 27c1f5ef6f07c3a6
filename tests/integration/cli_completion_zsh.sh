#!/bin/sh
# cli_completion_zsh: the zsh completion (_csampler), driven by zsh itself
# through zpty with compadd recorded: options, PIDs for -p, formats for -f,
# values of --attach-mode=, and the program after "--"; in each mode
# (--dump, -i, --top, --serve) no option offered is one csampler refuses.
. "$TESTS_SRCDIR/lib.sh"
need_cmd zsh

COMPDIR=$TESTS_SRCDIR/../completions
start_named_target

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

zsh -n "$COMPDIR/_csampler" || fail "_csampler: zsh syntax error"
check_completions zsh zsh_complete
check_mode_completions zsh zsh_complete
zsh_complete "csampler --attach-mode="
assert_eq "zsh: --attach-mode=" "$(tr '\n' ' ' <"$T/reply")" "per-sample persistent "
grep -q -- '^--' "$T/reply" && fail "zsh: '-- ech' offered options"

exit 0
