#!/bin/sh
# sym_aliases: a function known under several names is shown under its
# public one, as perf shows it: glibc's malloc and free, which are also
# __libc_malloc and __libc_free in its dynamic symbols, and whose DWARF
# names them by their hidden aliases' asm labels (__GI___libc_malloc) where
# libc's debug information is installed. Looked up at each entry in a live
# process.
. "$TESTS_SRCDIR/lib.sh"
need_root
need_cmd nm

start_fixture hot 30
libc=$(awk '$6 ~ /\/libc\.so\.6$/ { print $6; exit }' "/proc/$FIXTURE_PID/maps")
[ -n "$libc" ] || skip "the fixture maps no libc.so.6"
base=$(awk -v p="$libc" '$6 == p && $3 ~ /^0+$/ { split($1, r, "-"); print r[1]; exit }' \
	"/proc/$FIXTURE_PID/maps")
for f in malloc free; do
	off=$(nm -D "$libc" | awk -v f="$f" '$3 == f "@@GLIBC_2.2.5" { print $1 }')
	[ -n "$off" ] || skip "no $f@@GLIBC_2.2.5 in $libc"
	aliases=$(nm -D "$libc" | awk -v o="$off" '$1 == o { sub(/@.*/, "", $3); print $3 }' | sort -u | tr '\n' ' ')
	got=$("$PROGS/symlookup" "$FIXTURE_PID" "$(printf '%x' $((0x$base + 0x$off)))" | head -1)
	note "$f: names at its entry: $aliases; looked up: $got"
	assert_eq "the name at $f's entry" "${got%%@*}" "$f"
done
kill "$FIXTURE_PID"
exit 0
