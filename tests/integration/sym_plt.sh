#!/bin/sh
# sym_plt: code in a program's PLT (.plt, .plt.sec, .plt.got) is named
# after the function its entry jumps to, "printf@plt", as objdump and perf
# name it, C++ names demangled ("operator new(unsigned long)@plt"); the
# lazy-binding stub is "[plt]". Before, the symbol table's sizeless _init
# before them named every one. Each entry of hot (C) and cxxtpl (C++) is
# looked up in the live process, at its first byte and its eighth (an
# entry of .plt.got has 8).
. "$TESTS_SRCDIR/lib.sh"
need_root
need_cmd objdump

# check_plt FIXTURE: every PLT entry of the running fixture
check_plt() {
	local bin base n=0 vaddr name want got
	bin=$(readlink -f "$PROGS/$1")
	base=$(awk -v p="$bin" '$6 == p && $3 == "00000000" { split($1, r, "-"); print r[1]; exit }' \
		"/proc/$FIXTURE_PID/maps")
	[ -n "$base" ] || fail "$1: no mapping of $bin"
	objdump -d -C -w -j .plt -j .plt.sec -j .plt.got "$bin" 2>/dev/null |
		sed -n 's/^\([0-9a-f]*\) <\(.*\)>:$/\1 \2/p' >"$T/$1.entries"
	while read -r vaddr name; do
		case $name in
		*@plt) want=$name ;;
		*@plt-0x*) want="[plt]" ;;   # the stub before the first entry
		*) continue ;;
		esac
		for off in 0 7; do
			got=$("$PROGS/symlookup" "$FIXTURE_PID" \
				"$(printf '%x' $((0x$base + 0x$vaddr + off)))" | head -1)
			assert_eq "$1: 0x$vaddr+$off" "${got%@??:0}" "$want"
		done
		n=$((n + 1))
	done <"$T/$1.entries"
	note "$1: $n PLT entries named"
	[ "$n" -ge 5 ] || fail "$1: only $n PLT entries found: $(cat "$T/$1.entries")"
}

start_fixture hot 30
check_plt hot
kill "$FIXTURE_PID"
[ -x "$PROGS/cxxtpl" ] || skip "cxxtpl not built (no g++): C checked, C++ names not"
start_fixture cxxtpl 30
check_plt cxxtpl
kill "$FIXTURE_PID"
exit 0
