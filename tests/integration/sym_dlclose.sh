#!/bin/sh
# sym_dlclose: samples in a library that was dlopen'ed and then dlclose'd
# before the profile was written still symbolize.
. "$TESTS_SRCDIR/lib.sh"
need_root

run_csampler -F 199 -o "$T/out.folded" -- "$PROGS/dlopener" 1.5
assert_eq "exit status" "$CS_STATUS" 0
assert_folded_has "$T/out.folded" ';main;plugin_spin;plugin_leaf [0-9]+$'
assert_folded_has "$T/out.folded" ';main;after_unload [0-9]+$'
grep -q 'libplugin.so+0x' "$T/out.folded" && fail "unsymbolized frames in the unloaded library"
exit 0
