#!/bin/sh
# fault_output_fifo: an output named on the command line that is a FIFO
# never holds csampler for good. Nobody reads it: csampler waits 10 s for
# a reader, or until SIGINT or SIGTERM, says so in one line, writes the
# other outputs and exits 69 (before: the open blocked forever, SIGINT and
# SIGTERM held, the other outputs never written). A reader that holds it open and reads nothing
# (its pipe filled first): SIGINT ends the wait, exit 69, the other output
# written. "Ends the wait" is judged against the 10 s stall: under 5 s with
# the other output written (about 0.1 s on a quiet host; a loaded one
# stretches that, never to the stall). A reader that reads: the
# FIFO carries the whole profile. The target runs on untraced each time.
TEST_TIMEOUT=240
. "$TESTS_SRCDIR/lib.sh"
need_root

start_fixture manystacks 0
M=$FIXTURE_PID
mkfifo "$T/ff" || harness "mkfifo"

# nobody reads it: SIGTERM ends the wait
"$CSAMPLER" -p "$M" -d 1 -o "$T/ff" -o "$T/a.svg" 2>"$T/err" &
cs=$!
FIXTURE_PIDS="$FIXTURE_PIDS $cs"
i=0
while [ $i -lt 1200 ] && ! grep -q ' samples (' "$T/err"; do i=$((i + 1)); sleep 0.05; done
sleep 0.5
t0=$(date +%s%N)
kill -TERM "$cs"
st=0
wait "$cs" || st=$?
t1=$(date +%s%N)
assert_eq "FIFO nobody reads, SIGTERM: status ($(cat "$T/err"))" "$st" 69
assert_within "FIFO nobody reads, SIGTERM: seconds to end" \
	"$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')" 0 5
grep -q "^csampler: cannot write $T/ff: nobody read the FIFO" "$T/err" || fail "$(cat "$T/err")"
[ -s "$T/a.svg" ] || fail "FIFO nobody reads: the other output was not written"
assert_untraced_running "$M"

# (each wait for the summary allows 60 s: the sanitizer build on a loaded
# host had printed nothing after 10 s, building manystacks' profile)
# a reader that holds it open and reads nothing (the pipe filled first:
# whatever the profile's size, its first write waits); SIGINT once sampling
# ended
sleep 60 <"$T/ff" &
holder=$!
FIXTURE_PIDS="$FIXTURE_PIDS $holder"
head -c 65536 /dev/zero >"$T/ff" || harness "cannot fill the FIFO"
# (emptied here: the background job's own 2> may truncate it only after the
# loop below has read the first run's summary, as in a busybox CI run)
: >"$T/err"
"$CSAMPLER" -F 999 -p "$M" -d 1 -f folded -o "$T/ff" -o "$T/b.svg" 2>"$T/err" &
cs=$!
FIXTURE_PIDS="$FIXTURE_PIDS $cs"
i=0
while [ $i -lt 1200 ] && ! grep -q ' samples (' "$T/err"; do i=$((i + 1)); sleep 0.05; done
grep -q ' samples (' "$T/err" || fail "no summary: $(cat "$T/err")"
sleep 0.5
t0=$(date +%s%N)
kill -INT "$cs"
st=0
wait "$cs" || st=$?
t1=$(date +%s%N)
assert_eq "FIFO read by nobody, SIGINT: status ($(cat "$T/err"))" "$st" 69
assert_within "FIFO read by nobody, SIGINT: seconds to end" \
	"$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')" 0 5
grep -q "^csampler: cannot write $T/ff" "$T/err" || fail "no line about the FIFO: $(cat "$T/err")"
[ -s "$T/b.svg" ] || fail "the other output was not written: $(cat "$T/err")"
# (reaped before the next reader opens the FIFO: while the holder lives,
# the pipe keeps the 64 KiB written above and that reader would read them)
kill_ours KILL "$holder"
wait "$holder" 2>/dev/null
assert_untraced_running "$M"

# a reader that reads
cat "$T/ff" >"$T/read.folded" &
reader=$!
st=0
"$CSAMPLER" -F 499 -p "$M" -d 1 -f folded -o "$T/ff" 2>"$T/err" || st=$?
wait "$reader"
assert_eq "FIFO read: status" "$st" 0
total=$(folded_total "$T/read.folded")
summary=$(sed -nE 's/^csampler: wrote .* \(folded stacks, ([0-9]+) samples\).*/\1/p' "$T/err")
assert_eq "FIFO read: the whole profile came through" "$total" "$summary"
assert_untraced_running "$M"
exit 0
