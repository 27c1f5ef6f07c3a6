#!/bin/sh
# cli_completion_install: `make install` puts each shell's completion where
# that shell reads it (configure asks the shells: zsh's $fpath, fish's
# vendor directories; bash-completion reads $XDG_DATA_DIRS), and each real
# shell, given only that directory the way it finds it, completes an
# option from the installed file. (They went to zsh/vendor-completions and
# fish/vendor_completions.d under /usr/local/share, which neither reads.)
. "$TESTS_SRCDIR/lib.sh"

TOP=$(cd "$PROGS/../.." && pwd)
[ -f "$TOP/Makefile" ] || harness "no build tree at $TOP"
dirs=$(printf 'print-completion-dirs:\n\t@echo $(prefix) $(bashcompletiondir) $(zshcompletiondir) $(fishcompletiondir)\n' |
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$TOP" -f Makefile -f - print-completion-dirs) || harness "cannot ask make for the directories"
set -- $dirs
prefix=$1 bdir=$2 zdir=$3 fdir=$4
note "prefix $prefix: bash $bdir, zsh $zdir, fish $fdir"
case "$prefix" in
/usr|/usr/local) ;;
*) skip "configured with --prefix=$prefix, where the shells look only when told to" ;;
esac
D=$T/dest
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$TOP" install-dist_bashcompletionDATA install-dist_zshcompletionDATA \
	install-dist_fishcompletionDATA DESTDIR="$D" >"$T/install.out" 2>&1 ||
	fail "make install of the completions failed: $(tail -3 "$T/install.out")"
for f in "$bdir/csampler" "$zdir/_csampler" "$fdir/csampler.fish"; do
	[ -f "$D$f" ] || fail "not installed: $f"
done

# bash: bash-completion loads it on demand from $XDG_DATA_DIRS (default
# /usr/local/share:/usr/share)
case "$bdir" in
/usr/local/share/bash-completion/completions|/usr/share/bash-completion/completions) ;;
*) fail "bash completion installed in $bdir, which bash-completion does not read" ;;
esac
BC=/usr/share/bash-completion/bash_completion
if [ -f "$BC" ] && command -v bash >/dev/null; then
	got=$(XDG_DATA_DIRS="$D${bdir%/bash-completion/completions}" bash -c '
		. "$1" >/dev/null 2>&1
		__load_completion csampler && complete -p csampler' _ "$BC" 2>&1)
	case "$got" in
	*"-F _csampler csampler") ;;
	*) fail "bash-completion did not load the installed completion: $got" ;;
	esac
fi

# zsh: the directory is on its default $fpath, and a completion system
# started with it there finds _csampler and completes an option
if command -v zsh >/dev/null; then
	zsh -fc 'print -l $fpath' | grep -qx "$zdir" || fail "zsh does not read $zdir (its fpath: $(zsh -fc 'print $fpath'))"
	got=$(zsh -fc "fpath=('$D$zdir' \${fpath:#$zdir}); autoload -Uz compinit; compinit -u -D; print -r -- \$_comps[csampler]")
	assert_eq "zsh: the completion function of csampler" "$got" "_csampler"
fi

# fish: the directory is among those it reads, and fish given it there
# completes --duration
if command -v fish >/dev/null; then
	fish -c 'printf "%s\n" $__fish_vendor_completionsdirs' | grep -qx "$fdir" ||
		fail "fish does not read $fdir (it reads: $(fish -c 'echo $__fish_vendor_completionsdirs'))"
	# (fish loads the completion of a command it finds on PATH)
	got=$(PATH="$(dirname "$CSAMPLER"):$PATH" fish --no-config -c \
		"set -p fish_complete_path '$D$fdir'; complete -C 'csampler --dur'" | cut -f1)
	assert_eq "fish: csampler --dur" "$got" "--duration"
fi
exit 0
