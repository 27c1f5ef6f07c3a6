#!/bin/sh
# sym_rust: Rust names, legacy and v0 mangling, demangled without the legacy
# ::h<hash> suffix.
. "$TESTS_SRCDIR/lib.sh"
need_root
need_cmd nm
[ -x "$PROGS/rustnames-v0" ] || skip "Rust fixtures not built (no rustc)"

for flavour in v0 legacy; do
	prog=rustnames-$flavour
	case $flavour in
	legacy) nm "$PROGS/$prog" | grep -q '_ZN9rustnames5names8hot_loop17h[0-9a-f]*E' ||
		skip "this rustc does not mangle legacy by default: v0 checked, legacy not" ;;
	v0) nm "$PROGS/$prog" | grep -q '_RNv.*9rustnames5names8hot_loop' || fail "$prog is not v0-mangled" ;;
	esac
	start_fixture "$prog" 30
	run_csampler -F 199 -d 2 -o "$T/$prog.folded" -p "$FIXTURE_PID"
	assert_eq "$prog exit status" "$CS_STATUS" 0
	assert_folded_has "$T/$prog.folded" ';(<)?rustnames::names::Worker(>)?::step;rustnames::names::hot_loop(;[^;]+)* [0-9]+$'
	grep -Eq '::h[0-9a-f]{16}' "$T/$prog.folded" && fail "$prog: legacy hash left in a name"
	grep -Eq '(^|;)_(ZN|R)[A-Za-z0-9_]*9rustnames' "$T/$prog.folded" && fail "$prog: mangled rustnames symbol"
	kill "$FIXTURE_PID"
done
exit 0
