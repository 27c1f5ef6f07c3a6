#!/bin/sh
# convert_pprof: -i FILE writes a pprof profile recorded before in any
# format. csampler's own .pb.gz becomes folded stacks and a text report
# identical to the ones recorded from the same run, an SVG, speedscope and
# pprof again with the same total (go tool pprof -raw); gzipped or not, or
# on standard input. A profile Go's runtime/pprof wrote (what
# net/http/pprof serves) becomes folded stacks with its functions, the
# same total of samples, and each hot function's samples as go tool pprof
# counts them; the labels on every sample (--label's) are kept, those that
# differ (Go's pprof.Do) said in a note. Go's heap profile keeps its bytes in use (pprof's default
# type): each function's bytes as go tool pprof counts them, in every
# format, and the pprof written again is one of inuse_space. Not a profile,
# a damaged gzip stream, a missing file, a --diff of time against bytes:
# status 73 and the reason; -i with -p or without -o: usage errors.
. "$TESTS_SRCDIR/lib.sh"
need_go
need_cmd python3

run_csampler -q -F 499 --threads --label service=api --label version=1.4 -o "$T/r.pb.gz" \
	-o "$T/r.folded" -o "$T/r.txt" -- "$PROGS/hot" 1
assert_eq "recording: status" "$CS_STATUS" 0
total=$(folded_total "$T/r.folded")
run_csampler -i "$T/r.pb.gz" --threads -o "$T/c.folded" -o "$T/c.txt" -o "$T/c.svg" \
	-o "$T/c.speedscope.json" -o "$T/c.pb"
assert_eq "convert: status" "$CS_STATUS" 0
assert_eq "folded stacks from the .pb.gz" "$(sort "$T/c.folded" | md5sum)" "$(sort "$T/r.folded" | md5sum)"
assert_eq "text report from the .pb.gz" "$(md5sum <"$T/c.txt")" "$(md5sum <"$T/r.txt")"
grep -q "csampler: wrote $T/c.svg (flame graph, $total samples)" "$T/cs.err" ||
	fail "SVG: $(cat "$T/cs.err")"
grep -q '</svg>' "$T/c.svg" || fail "the SVG is not whole"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(0 if d["profiles"] else 1)' \
	"$T/c.speedscope.json" || fail "speedscope: no profiles"
assert_eq "pprof again: samples" "$(pprof_raw_total "$T/c.pb")" "$total"
# the labels every sample carries are the profile's again
"$GO" tool pprof -raw "$T/c.pb" >"$T/c.raw" 2>&1 || fail "pprof -raw: $(cat "$T/c.raw")"
assert_eq "pprof again: samples labelled service=api, version=1.4" \
	"$(grep -c 'service:\[api\].*version:\[1\.4\]\|version:\[1\.4\].*service:\[api\]' "$T/c.raw")" \
	"$(grep -c 'thread:\[' "$T/c.raw")"
grep -q 'note:' "$T/cs.err" && fail "a note on labels every sample has: $(cat "$T/cs.err")"
# not gzipped, and from standard input
gzip -dc "$T/r.pb.gz" >"$T/plain.pb"
"$CSAMPLER" -q -i - --threads -o "$T/s.folded" <"$T/plain.pb" || fail "-i - failed"
assert_eq "folded from a plain .pb on standard input" "$(sort "$T/s.folded" | md5sum)" \
	"$(sort "$T/r.folded" | md5sum)"

# Go's own CPU profile
cp "$TESTS_SRCDIR/progs/gopprof.go" "$T/" || harness "no gopprof.go"
(cd "$T" && "$GO" build -o gopprof gopprof.go) >"$T/build.err" 2>&1 ||
	harness "go build: $(cat "$T/build.err")"
"$T/gopprof" "$T/go.pb.gz" 2 >"$T/go.out" || fail "gopprof failed"
go_total=$(pprof_raw_total "$T/go.pb.gz")
# (2 s of its CPU at Go's 100 Hz: about 200 samples, however loaded the
# host; it ran 2 s of wall time before, and had 15 at load 17)
[ "$go_total" -ge 100 ] || fail "Go's profile holds $go_total samples"
run_csampler -i "$T/go.pb.gz" -o "$T/go.folded" -o "$T/go.txt"
assert_eq "Go's profile: status" "$CS_STATUS" 0
assert_eq "Go's profile: samples" "$(folded_total "$T/go.folded")" "$go_total"
assert_folded_has "$T/go.folded" '^runtime\.main;main\.main;runtime/pprof\.Do;main\.main\.func1;main\.goHotA [0-9]+$'
# its pprof.Do labels differ from sample to sample: said, not kept
grep -q "note: $T/go.pb.gz: sample labels that differ from sample to sample are not kept (phase); go tool pprof -tags shows them" \
	"$T/cs.err" || fail "Go's labels: $(cat "$T/cs.err")"
# each function's samples as go tool pprof counts them in the same file
"$GO" tool pprof -top -sample_index=samples "$T/go.pb.gz" >"$T/go.top" 2>"$T/top.err" ||
	fail "pprof -top: $(cat "$T/top.err")"
for fn in goHotA goHotB; do
	assert_eq "Go's profile: main.$fn's samples" "$(folded_count "$T/go.folded" ";main\\.$fn\$")" \
		"$(awk -v f="main.$fn" '$NF == f { print $1 }' "$T/go.top")"
done
grep -q '^command:  gopprof' "$T/go.txt" || fail "Go's profile: no program name: $(head -3 "$T/go.txt")"

# Go's heap profile: its bytes in use (pprof's default), kept as bytes
"$T/gopprof" "$T/go2.pb.gz" 0.2 "$T/heap.pb.gz" >"$T/go.out" || fail "gopprof (heap) failed"
run_csampler -i "$T/heap.pb.gz" -o "$T/h.folded" -o "$T/h.txt" -o "$T/h.pb" -o "$T/h.svg" \
	-o "$T/h.speedscope.json"
assert_eq "heap profile: status" "$CS_STATUS" 0
"$GO" tool pprof -top -unit=B "$T/heap.pb.gz" >"$T/heap.top" 2>"$T/top.err" ||
	fail "pprof -top (heap): $(cat "$T/top.err")"
grep -q '^Type: inuse_space' "$T/heap.top" || fail "pprof's default: $(head -5 "$T/heap.top")"
for fn in goKeepA goKeepB; do
	want=$(awk -v f="main.$fn" '$NF == f { sub(/B$/, "", $1); print $1 }' "$T/heap.top")
	[ "${want:-0}" -ge 1048576 ] || fail "pprof: main.$fn holds '$want' bytes"
	assert_eq "heap: main.$fn's bytes" "$(folded_count "$T/h.folded" ";main\\.$fn\$")" "$want"
done
grep -q "csampler: wrote $T/h.folded (folded stacks, [0-9]* bytes)" "$T/cs.err" ||
	fail "heap: $(cat "$T/cs.err")"
grep -q '^profile:  inuse_space (bytes), [0-9]* bytes in' "$T/h.txt" || fail "heap text: $(head -5 "$T/h.txt")"
grep -q '^Top functions by self bytes' "$T/h.txt" || fail "heap text: $(head -12 "$T/h.txt")"
"$GO" tool pprof -top -unit=B "$T/h.pb" >"$T/h.top" 2>"$T/top.err" || fail "pprof -top: $(cat "$T/top.err")"
grep -q '^Type: inuse_space' "$T/h.top" || fail "pprof written again: $(head -5 "$T/h.top")"
assert_eq "pprof written again: main.goKeepA" \
	"$(awk '$NF == "main.goKeepA" { print $1 }' "$T/h.top")" \
	"$(awk '$NF == "main.goKeepA" { print $1 }' "$T/heap.top")"
grep -q 'data-word="bytes"' "$T/h.svg" || fail "SVG: no bytes"
grep -Eq '<title>main\.goKeepA \([0-9]+ bytes, [0-9.]+%\)( — [^<]*)?</title>' "$T/h.svg" ||
	fail "SVG: goKeepA's title: $(grep -o '<title>main\.goKeepA[^<]*' "$T/h.svg" | head -1)"
grep -q '"unit":"bytes"' "$T/h.speedscope.json" || fail "speedscope: not in bytes"
# a test profile of alloc_space (one sample type of bytes, no default)
python3 "$TESTS_SRCDIR/mkpprof.py" heap "$T/heap.pb" || harness "mkpprof.py failed"
run_csampler -i "$T/heap.pb" -o "$T/x.folded"
assert_eq "alloc_space: status" "$CS_STATUS" 0
grep -q ' 4096$' "$T/x.folded" || fail "alloc_space: $(cat "$T/x.folded")"
rm -f "$T/x.folded"
# time and bytes are not compared
run_csampler -i "$T/go.pb.gz" -i "$T/heap.pb.gz" --diff -o "$T/x.folded"
assert_eq "--diff of time and bytes: status" "$CS_STATUS" 73
grep -q "is a profile of time and '$T/heap.pb.gz' of inuse_space: compare two of one kind" \
	"$T/cs.err" || fail "--diff of time and bytes: $(cat "$T/cs.err")"

# refused
printf 'not a profile' >"$T/junk"
run_csampler -i "$T/junk" -o "$T/x.folded"
assert_eq "junk: status" "$CS_STATUS" 73
grep -q "cannot read the input '$T/junk': not a pprof profile" "$T/cs.err" || fail "junk: $(cat "$T/cs.err")"
head -c 200 "$T/r.pb.gz" >"$T/cut.pb.gz"
run_csampler -i "$T/cut.pb.gz" -o "$T/x.folded"
assert_eq "cut gzip: status" "$CS_STATUS" 73
grep -q "a damaged or cut gzip stream" "$T/cs.err" || fail "cut gzip: $(cat "$T/cs.err")"
run_csampler -i "$T/none.pb.gz" -o "$T/x.folded"
assert_eq "missing file: status" "$CS_STATUS" 73
[ -e "$T/x.folded" ] && fail "an output was written for a refused input"
run_csampler -i "$T/r.pb.gz" -p 1 -o "$T/x.folded"
assert_eq "-i with -p: status" "$CS_STATUS" 64
run_csampler -i "$T/r.pb.gz"
assert_eq "-i without -o: status" "$CS_STATUS" 64
grep -q -- "-i needs -o FILE" "$T/cs.err" || fail "-i without -o: $(cat "$T/cs.err")"
exit 0
