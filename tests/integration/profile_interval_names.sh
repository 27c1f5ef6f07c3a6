#!/bin/sh
# profile_interval_names: --interval never writes one interval's file over
# another's. A pattern whose finest field is coarser than the interval
# (x-%H%M with --interval 1: one name a minute, 3 files a second lost 95
# samples silently) is refused before sampling (64, naming the field to
# add). A name that comes round again (a pattern's fields repeat: %H%M%S
# each day), found written since the run began, is not overwritten: the
# interval goes to NAME-2.EXT, said once. (Files touched during the run
# under the names the next intervals will take stand for names written
# by the same run earlier.)
. "$TESTS_SRCDIR/lib.sh"
need_root

start_fixture hot 300
HOT=$FIXTURE_PID
run_csampler --interval 1 -d 3 -o "$T/x-%H%M.folded" -p "$HOT"
assert_eq "exit status for a pattern of minutes at --interval 1" "$CS_STATUS" 64
assert_match "its message" "$(head -1 "$T/cs.err")" \
	"^csampler: --interval 1 writes a file every 1 s, but '$T/x-%H%M.folded' names one every 60 s at most: intervals would share a name; add %S \\(seconds\\)$"
ls "$T" | grep -q '^x-' && fail "a file was written"
run_csampler --interval 60 -d 0.5 -o "$T/m-%H%M.folded" -p "$HOT"
assert_eq "a pattern of minutes at --interval 60" "$CS_STATUS" 0

mkdir "$T/out" || harness "mkdir"
"$CSAMPLER" -F 199 --interval 1 -d 4 -o "$T/out/p-%Y%m%d%H%M%S.folded" -p "$HOT" 2>"$T/cs.err" &
CS=$!
# the names of the seconds to come, touched as if this run wrote them
# (once it has attached: its run begins then, and a file touched before a
# slow start, under ASAN, was older than the run and rightly written over)
wait_traced "$HOT" "csampler's attach ($(cat "$T/cs.err"))"
sleep 0.1
now=$(date +%s)
for k in 1 2 3 4 5 6; do
	touch "$T/out/p-$(date -d "@$((now + k))" +%Y%m%d%H%M%S).folded"
done
wait "$CS" || fail "csampler: $(cat "$T/cs.err")"
empty=$(find "$T/out" -name 'p-*.folded' -empty | wc -l | tr -d ' ')
taken=$(find "$T/out" -name 'p-*-2.folded' | wc -l | tr -d ' ')
note "touched names left empty: $empty; intervals written as NAME-2: $taken"
assert_eq "touched files left as they were" "$empty" 6
[ "$taken" -ge 2 ] || fail "intervals written as NAME-2: $taken ($(ls "$T/out" | tr '\n' ' '))"
assert_eq "lines saying so" "$(grep -c 'was written by this run already' "$T/cs.err")" 1
reported=$(sed -nE 's/^csampler: ([0-9]+) samples? .*/\1/p' "$T/cs.err")
assert_eq "samples in the files (all intervals)" "$(cat "$T"/out/p-*.folded | awk '{s += $NF} END {print s + 0}')" "$reported"
exit 0
