#!/bin/sh
# convert_symbolize: -i names the bare addresses of a profile recorded with
# --addresses from the files its mappings name, as pprof does with local
# binaries: the functions, the inline frames and the source lines a
# recording would show, the pprof written again marked as having them.
# Only the very build that was profiled is used: a file of another build
# at that path, a missing one or a FIFO there leave the addresses as they
# were, with one note naming the file and why (never a hang); the file is
# also looked for where pprof looks (PPROF_BINARY_PATH). -i with
# --addresses keeps them bare.
. "$TESTS_SRCDIR/lib.sh"
need_go
need_cmd readelf
need_cmd strip

mkdir -p "$T/bin"
cp "$PROGS/hot" "$T/bin/hot" || harness "cannot copy hot"
run_csampler -q -F 499 --addresses -o "$T/a.pb.gz" -o "$T/a.folded" -- "$T/bin/hot" 1
assert_eq "recording: status" "$CS_STATUS" 0
total=$(folded_total "$T/a.folded")
# (1 s at 499 Hz: about 500 on a quiet machine, 95 seen on a loaded one;
# the chains below need a few dozen)
[ "$total" -ge 30 ] || fail "the recording holds $total samples"
# the recording itself names no function of hot (the test would pass without -i's names)
if grep -q 'leaf_a' "$T/a.folded"; then fail "--addresses named leaf_a: $(head -1 "$T/a.folded")"; fi

run_csampler -i "$T/a.pb.gz" -o "$T/c.folded" -o "$T/c.txt" -o "$T/c.pb"
assert_eq "convert: status" "$CS_STATUS" 0
assert_eq "convert: samples" "$(folded_total "$T/c.folded")" "$total"
assert_folded_has "$T/c.folded" ';main;worker;work_round;a1;a2;a3;a4;a5;a6;a7;a8;a9;a10;leaf_a [0-9]+$'
assert_folded_has "$T/c.folded" ';work_round;b1;b2;b3;b4;b5;b6;b7;b8;b9;b10;leaf_b [0-9]+$'
assert_folded_has "$T/c.folded" '^_start;__libc_start_main_impl;'
# every sample of hot's code named: no hot+0x... frame left
assert_eq "frames left bare" "$(grep -c 'hot+0x' "$T/c.folded")" 0
grep -Eq 'leaf_a .*hot\.c:[0-9]+' "$T/c.txt" || fail "text: no leaf_a at hot.c:N: $(head -20 "$T/c.txt")"
grep -q 'note:' "$T/cs.err" && fail "a note where every file was found: $(cat "$T/cs.err")"
# pprof written again: functions with their file, the mapping marked symbolized
"$GO" tool pprof -raw -symbolize=none "$T/c.pb" >"$T/raw" 2>"$T/raw.err" ||
	fail "pprof -raw: $(cat "$T/raw.err")"
grep -Eq ' leaf_a [^ ]*hot\.c:[0-9]+' "$T/raw" || fail "pprof: no leaf_a at hot.c:N: $(grep -m3 leaf "$T/raw")"
"$GO" tool pprof -top -symbolize=none "$T/c.pb" >"$T/top" 2>&1 || fail "pprof -top: $(cat "$T/top")"
grep -q 'leaf_a$' "$T/top" || fail "pprof -top: no leaf_a: $(head -12 "$T/top")"

# --addresses: the addresses stay
run_csampler -i "$T/a.pb.gz" --addresses -o "$T/k.folded"
assert_eq "--addresses: status" "$CS_STATUS" 0
if grep -q leaf_a "$T/k.folded"; then fail "-i --addresses named leaf_a"; fi

# another build at the path: not used, said
cp "$PROGS/busy" "$T/bin/hot" || harness "cannot copy busy"
run_csampler -i "$T/a.pb.gz" -o "$T/o.folded"
assert_eq "another build: status" "$CS_STATUS" 0
if grep -q leaf_a "$T/o.folded"; then fail "another build's symbols used: $(head -1 "$T/o.folded")"; fi
assert_folded_has "$T/o.folded" '^hot\+0x[0-9a-f]+;__libc_start_main_impl;__libc_start_call_main;hot\+0x'
grep -q "note: $T/a.pb.gz: [0-9]* addresses in $T/bin/hot left unnamed: the file here is another build (build-id [0-9a-f]*, the profile's [0-9a-f]*)" \
	"$T/cs.err" || fail "another build: $(cat "$T/cs.err")"

# no file, or a FIFO in its place: not opened, said
rm -f "$T/bin/hot"
run_csampler -i "$T/a.pb.gz" -o "$T/m.folded"
assert_eq "missing: status" "$CS_STATUS" 0
grep -q "note: $T/a.pb.gz: [0-9]* addresses in $T/bin/hot left unnamed: no such readable file" \
	"$T/cs.err" || fail "missing: $(cat "$T/cs.err")"
mkfifo "$T/bin/hot" || harness "mkfifo"
timeout 60 "$CSAMPLER" -i "$T/a.pb.gz" -o "$T/f.folded" 2>"$T/f.err"
assert_eq "FIFO: status" "$?" 0
grep -q "addresses in $T/bin/hot left unnamed: no such readable file" "$T/f.err" ||
	fail "FIFO: $(cat "$T/f.err")"

# found elsewhere, as pprof looks: PPROF_BINARY_PATH's DIR/BUILD-ID/NAME,
# DIR/NAME (another build there is passed over)
id=$(readelf -n "$PROGS/hot" 2>/dev/null | awk '/Build ID/ { print $3; exit }')
[ -n "$id" ] || harness "no build-id in hot"
mkdir -p "$T/pp/$id" "$T/other" "$T/byname"
cp "$PROGS/hot" "$T/pp/$id/hot" && cp "$PROGS/busy" "$T/other/hot" && cp "$PROGS/hot" "$T/byname/hot" ||
	harness "cannot copy"
export PPROF_BINARY_PATH="$T/nothing:$T/pp"
run_csampler -i "$T/a.pb.gz" -o "$T/p.folded"
assert_folded_has "$T/p.folded" ';work_round;a1;a2;a3;a4;a5;a6;a7;a8;a9;a10;leaf_a [0-9]+$'
PPROF_BINARY_PATH="$T/other:$T/byname"
run_csampler -i "$T/a.pb.gz" -o "$T/n.folded"
assert_folded_has "$T/n.folded" ';work_round;b1;b2;b3;b4;b5;b6;b7;b8;b9;b10;leaf_b [0-9]+$'
grep -q 'note:' "$T/cs.err" && fail "a note where the file was found: $(cat "$T/cs.err")"
unset PPROF_BINARY_PATH

# a stripped binary recorded as usual (its frames named by address): the
# unstripped build found under PPROF_BINARY_PATH names them (Debian's go
# tool pprof cannot: it reads no build-id from a binary whose first note
# segment is 8-byte aligned, and says 'build-id mismatch (... != )')
mkdir -p "$T/strip" "$T/full"
cp "$PROGS/hot" "$T/strip/hot" && strip "$T/strip/hot" && cp "$PROGS/hot" "$T/full/hot" ||
	harness "cannot strip a copy of hot"
run_csampler -q -F 499 -o "$T/st.pb.gz" -o "$T/st.folded" -- "$T/strip/hot" 1
assert_eq "stripped recording: status" "$CS_STATUS" 0
if grep -q leaf_a "$T/st.folded"; then fail "the stripped copy named leaf_a"; fi
PPROF_BINARY_PATH="$T/full" "$CSAMPLER" -i "$T/st.pb.gz" -o "$T/sn.folded" 2>"$T/sn.err" ||
	fail "-i of the stripped recording: $(cat "$T/sn.err")"
assert_folded_has "$T/sn.folded" ';work_round;c1;c2;c3;c4;c5;c6;c7;c8;c9;c10;leaf_c [0-9]+$'
exit 0
