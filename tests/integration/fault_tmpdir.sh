#!/bin/sh
# fault_tmpdir: the stack map spills, and the writers sort, through scratch
# files in TMPDIR. An unusable TMPDIR (missing, or full) is refused before
# the target is touched, with one line naming it and the fix (it lost 97%
# of the samples silently before, exit 0). A TMPDIR that fills up during the
# run is reported when it happens, and the run ends with a clear error and
# status 71 (the profile itself is built through scratch files); when the
# room comes back before the end, the outputs are written, the samples
# lost counted under a frame that says so.
. "$TESTS_SRCDIR/lib.sh"
need_root
need_cmd mount

start_fixture manystacks 0
M=$FIXTURE_PID

CS_STATUS=0
TMPDIR="$T/none" "$CSAMPLER" -q -F 499 -d 1 --max-stacks=16 -o "$T/a.folded" -p "$M" \
	>"$T/cs.out" 2>"$T/cs.err" || CS_STATUS=$?
assert_eq "missing TMPDIR: status" "$CS_STATUS" 71
assert_eq "missing TMPDIR: message" "$(cat "$T/cs.err")" \
	"csampler: cannot write scratch files in $T/none (TMPDIR); set TMPDIR to a writable directory with free space: No such file or directory"
[ -e "$T/a.folded" ] && fail "missing TMPDIR: an output was written"
assert_untraced_running "$M"

mkdir "$T/full" "$T/small" || harness "mkdir"
mount -t tmpfs -o size=16k csampler-test "$T/full" 2>/dev/null || skip "cannot mount a tmpfs here"
trap 'umount "$T/full" "$T/small" 2>/dev/null; cleanup' EXIT
dd if=/dev/zero of="$T/full/filler" bs=1k count=16 2>/dev/null
CS_STATUS=0
TMPDIR="$T/full" "$CSAMPLER" -q -F 499 -d 1 --max-stacks=16 -o "$T/a.folded" -p "$M" \
	>"$T/cs.out" 2>"$T/cs.err" || CS_STATUS=$?
assert_eq "full TMPDIR: status" "$CS_STATUS" 71
assert_match "full TMPDIR: message" "$(cat "$T/cs.err")" \
	"^csampler: cannot write scratch files in $T/full \\(TMPDIR\\); .*: No space left on device$"
[ -e "$T/a.folded" ] && fail "full TMPDIR: an output was written"

# room for the check, not for the run: every sample is a new stack
mount -t tmpfs -o size=128k csampler-test "$T/small" || harness "cannot mount a tmpfs"
dd if=/dev/zero of="$T/small/filler" bs=1k count=100 2>/dev/null
# (the run lasts until the spill file cannot be written, then Ctrl-C: on a
# busy machine the target makes fewer stacks a second)
TMPDIR="$T/small" "$CSAMPLER" -F 999 -d 60 --max-stacks=16 -o "$T/b.folded" -p "$M" \
	>"$T/cs.out" 2>"$T/cs.err" &
CS=$!
FIXTURE_PIDS="$FIXTURE_PIDS $CS"
for i in $(seq 1 400); do
	grep -q 'cannot write the spill file' "$T/cs.err" && break
	kill -0 "$CS" 2>/dev/null || break
	sleep 0.1
done
kill -INT "$CS" 2>/dev/null
wait_exit "$CS" 20 "csampler after Ctrl-C" "$M"
CS_STATUS=$WAIT_STATUS
note "$(cat "$T/cs.err")"
assert_eq "TMPDIR filling up: status" "$CS_STATUS" 71
assert_eq "TMPDIR filling up: reported once" "$(grep -c 'cannot write the spill file' "$T/cs.err")" 1
# the profile goes through scratch files too: it cannot be made, and no
# partial output is left
assert_match "TMPDIR filling up: the end" "$(tail -n 1 "$T/cs.err")" \
	'^csampler: cannot build the profile: No space left on device$'
[ -e "$T/b.folded" ] && fail "TMPDIR filling up: a partial output was written"

# the same, the room given back before the end (8 MB for the build): the
# outputs are written, and carry the samples lost under a frame of their
# own (they had no mark)
mkdir "$T/room" || harness "mkdir"
mount -t tmpfs -o size=8m csampler-test "$T/room" || harness "cannot mount a tmpfs"
trap 'umount "$T/full" "$T/small" "$T/room" 2>/dev/null; cleanup' EXIT
dd if=/dev/zero of="$T/room/filler" bs=1k count=8088 2>/dev/null
TMPDIR="$T/room" "$CSAMPLER" -F 999 -d 60 --max-stacks=16 -o "$T/c.folded" -o "$T/c.txt" \
	-p "$M" >"$T/cs.out" 2>"$T/cs.err" &
CS=$!
FIXTURE_PIDS="$FIXTURE_PIDS $CS"
for i in $(seq 1 400); do
	grep -q 'cannot write the spill file' "$T/cs.err" && break
	kill -0 "$CS" 2>/dev/null || break
	sleep 0.1
done
rm -f "$T/room/filler"
kill -INT "$CS" 2>/dev/null
wait_exit "$CS" 20 "csampler after Ctrl-C" "$M"
CS_STATUS=$WAIT_STATUS
assert_eq "room given back: status" "$CS_STATUS" 71
lost=$(sed -nE 's/^csampler: ([0-9]+) samples lost: the spill file .*/\1/p' "$T/cs.err")
[ -n "$lost" ] && [ "$lost" -gt 0 ] || fail "room given back: no count of samples lost: $(cat "$T/cs.err")"
assert_eq "room given back: the lost samples' frame in the folded output" \
	"$(folded_count "$T/c.folded" '^\[lost: samples the scratch file \(TMPDIR\) could not keep\]$')" "$lost"
# (the text report's function tables are a top 25, where one lost sample
# ties with many frames; its thread table always has the row)
assert_eq "room given back: the lost samples' row in the text report" \
	"$(awk '$NF == "[lost]" { print $1 }' "$T/c.txt")" "$lost"
assert_untraced_running "$M"
exit 0
