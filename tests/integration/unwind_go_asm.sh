#!/bin/sh
# unwind_go_asm: a Go program hot in crypto/sha256's assembly, which has
# no unwind information and uses rbp for data: every stack was
# '[truncated];crypto/sha256.block' (the summary said where and why). The
# saved frame record under the leaf's return address now leads on to
# Go's frame pointers: at least 95% of the stacks go from
# crypto/sha256.block through main.hashLoop to runtime.goexit, and
# main.hashLoop's share is as large as block's (it calls it). The same,
# stripped (-ldflags=-s -w), named from Go's own function table.
. "$TESTS_SRCDIR/lib.sh"
need_root
need_go
need_cmd readelf

# check_whole FOLDED PREFIX: at least 95% of FOLDED's stacks in
# crypto/sha256.block go through main.hashLoop to runtime.goexit
check_whole() {
	set -- "$1" "$2" $(awk '{ c = $NF; s = $0; sub(/ [0-9]+$/, "", s); t += c
		if (s ~ /;crypto\/sha256\.block$/) b += c
		if (s ~ /^runtime\.goexit;runtime\.main;main\.main;main\.hashLoop;(.*;)?crypto\/sha256\.block$/) w += c }
		END { print t + 0, b + 0, w + 0 }' "$1")
	note "$2$3 samples, $4 in crypto/sha256.block, $5 of them whole to runtime.goexit"
	[ "$4" -gt 0 ] || fail "${2}no sample in crypto/sha256.block: $(sort -t' ' -k2 -rn "$1" | head -3)"
	awk -v b="$4" -v w="$5" 'BEGIN { exit !(100 * w >= 95 * b) }' ||
		fail "${2}only $5 of $4 stacks in crypto/sha256.block whole: $(sort -t' ' -k2 -rn "$1" | head -3)"
}

build_go gosha
F=$T/go.folded
run_csampler -F 199 -o "$F" -- "$T/gosha" 2
assert_eq "exit status" "$CS_STATUS" 0
grep -q '^hashed [1-9]' "$T/cs.out" || fail "gosha did not finish: $(cat "$T/cs.out")"
check_whole "$F" ""
grep -q 'of stacks stop in crypto/sha256.block' "$T/cs.err" &&
	fail "the summary names crypto/sha256.block as a stop: $(cat "$T/cs.err")"

# the same stripped of its symbol table and DWARF (-ldflags=-s -w, as the Go
# toolchain's own binaries are): Go's function table (.gopclntab) names the
# functions, with their files and lines, and gives the function starts the
# frame-record scan needs (it was 'gosha_s+0x...' for every frame, and every
# stack stopped in the leaf)
(cd "$T" && GO111MODULE=off "$GO" build -ldflags='-s -w' -o gosha_s gosha.go) >"$T/build.err" 2>&1 ||
	harness "go build -s -w: $(cat "$T/build.err")"
readelf -S "$T/gosha_s" | grep -q '\.symtab' && harness "gosha_s still has a symbol table"
run_csampler -F 199 -o "$T/s.folded" -o "$T/s.txt" -- "$T/gosha_s" 2
assert_eq "stripped: exit status" "$CS_STATUS" 0
check_whole "$T/s.folded" "stripped: "
grep -q 'gosha_s+0x' "$T/s.folded" && fail "stripped: frames left unnamed: $(grep -m1 'gosha_s+0x' "$T/s.folded")"
grep -Eq '^ +[0-9]+ +[0-9.]+% +[0-9]+ +[0-9.]+%  main\.hashLoop  \(gosha\.go:[0-9]+, gosha_s\)$' "$T/s.txt" ||
	fail "stripped: main.hashLoop without its file: $(grep -m2 hashLoop "$T/s.txt")"
grep -q 'no symbols in' "$T/cs.err" && fail "stripped: said to have no symbols: $(cat "$T/cs.err")"
exit 0
