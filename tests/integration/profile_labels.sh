#!/bin/sh
# profile_labels: --label KEY=VALUE puts a label on every sample of the
# pprof output (go tool pprof -raw shows it on each, -tags counts all the
# time under it), in the SVG's title (XML-escaped), the text report's
# labels line (terminal-escaped) and the speedscope name (JSON-escaped);
# --serve puts it on every served profile. Keys outside the grammar fleet
# engines accept, csampler's own keys and repeated keys are usage errors
# (64) naming the fix.
. "$TESTS_SRCDIR/lib.sh"
need_root
need_go
need_cmd curl
need_cmd python3

# every sample of pprof FILE carries service:[api] and version:[VALUE]
# (-raw prints a sample's labels on the line after it)
check_pprof_labels() {
	local file=$1 version=$2 total labelled
	total=$(pprof_raw_total "$file")
	[ "$total" -gt 0 ] || fail "$file: no samples"
	labelled=$(awk -v v="version:[$version]" '
		/^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
		s && /^ *[0-9]+ +[0-9]+:/ { n = $1; next }
		s && n && index($0, "service:[api]") && index($0, v) { c += n }
		{ n = 0 } END { print c + 0 }' "$T/raw")
	assert_eq "$file: samples labelled service=api, version=$version (of $total)" "$labelled" "$total"
}

value='1.2 <"x">&'
run_csampler -q --label service=api --label "version=$value" -F 499 -d 1 \
	-o "$T/l.pb.gz" -o "$T/l.svg" -o "$T/l.txt" -o "$T/l.speedscope.json" -- "$PROGS/hot" 2
assert_eq "status" "$CS_STATUS" 0
check_pprof_labels "$T/l.pb.gz" "$value"
"$GO" tool pprof -tags "$T/l.pb.gz" >"$T/tags" 2>"$T/tags.err" || fail "pprof -tags: $(cat "$T/tags.err")"
grep -A1 '^ *service: Total' "$T/tags" | grep -q '100%): api$' ||
	fail "pprof -tags: not all the time under service=api: $(cat "$T/tags")"
grep -q '<text id="title"[^<]*\[service=api, version=1.2 &lt;&quot;x&quot;&gt;&amp;\]</text>' "$T/l.svg" ||
	fail "SVG title without the escaped labels: $(grep -o '<text id="title"[^<]*' "$T/l.svg")"
assert_eq "text report's labels line" "$(grep '^labels:' "$T/l.txt")" "labels:   service=api, version=$value"
assert_eq "speedscope name" \
	"$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["name"])' "$T/l.speedscope.json")" \
	"$PROGS/hot 2 [service=api, version=$value]"

# a value that could forge lines or markup stays one label, escaped
run_csampler -q --label "note=$(printf 'a\nb\033[31m')" -F 499 -d 0.5 -o "$T/e.txt" -- "$PROGS/hot" 1
assert_eq "status (control characters)" "$CS_STATUS" 0
assert_eq "text report: the value escaped" "$(grep '^labels:' "$T/e.txt")" 'labels:   note=a\x0ab\x1b[31m'

# --serve: every served profile
start_fixture hot 300
start_server --serve 0 --label service=api --label version=7 -F 199 -p "$FIXTURE_PID"
http_get "/debug/pprof/profile?seconds=1" "$T/s.pb.gz"
assert_eq "served profile: status" "$HTTP_STATUS" 200
check_pprof_labels "$T/s.pb.gz" 7

# usage errors
for bad in "9x=1:not starting with a digit" "a.b=1:letters, digits and '_'" \
	   "thread=x:csampler's own label" "noeq:expected KEY=VALUE"; do
	run_csampler --label "${bad%%:*}" -p "$FIXTURE_PID"
	assert_eq "--label ${bad%%:*}: status" "$CS_STATUS" 64
	grep -q "${bad#*:}" "$T/cs.err" || fail "--label ${bad%%:*}: $(cat "$T/cs.err")"
done
run_csampler --label a=1 --label a=2 -p "$FIXTURE_PID"
assert_eq "--label given twice: status" "$CS_STATUS" 64
exit 0
