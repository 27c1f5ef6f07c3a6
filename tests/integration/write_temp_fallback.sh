#!/bin/sh
# write_temp_fallback: on a filesystem without O_TMPFILE (a bindfs FUSE
# mount) an output is written to a named temp, ".NAME.csampler.PID.XXXXXX",
# renamed over NAME once complete: nothing else is left, new or replaced.
# A temp left by a csampler killed while writing (SIGKILL cannot be caught)
# is removed by the next run that writes the same name; a temp of a
# csampler still running, another user's file and other names are kept.
. "$TESTS_SRCDIR/lib.sh"
need_root
need_cmd bindfs
need_cmd fusermount

mkdir "$T/under" "$T/mnt" || harness "mkdir"
bindfs "$T/under" "$T/mnt" 2>"$T/bindfs.err" || skip "cannot mount bindfs: $(cat "$T/bindfs.err")"
trap 'fusermount -u "$T/mnt" 2>/dev/null; cleanup' EXIT
start_watchdir "$T/mnt"

for round in new replace; do
	run_csampler -q -F 199 -o "$T/mnt/p.folded" -o "$T/mnt/p.svg" -- "$PROGS/hot" 0.3
	assert_eq "$round: exit status" "$CS_STATUS" 0
	assert_folded_has "$T/mnt/p.folded" 'leaf_a [0-9]+$'
	assert_eq "$round: files in the directory" "$(ls -A "$T/mnt" | tr '\n' ' ')" "p.folded p.svg "
done
stop_watchdir
temps='\.p\.(folded|svg)\.csampler\.[0-9]+\.[A-Za-z0-9]{6}'
# each output's: one made and removed by the check before sampling, one
# written and renamed over the output
assert_eq "temp names made (2 rounds, 2 outputs, 2 each)" "$(grep -cE "^create $temps\$" "$T/events")" 8
assert_eq "temp names renamed" "$(grep -cE "^moved_from $temps\$" "$T/events")" 4
assert_eq "temp names removed" "$(grep -cE "^delete $temps\$" "$T/events")" 4
assert_eq "outputs renamed into place" "$(grep -cE "^moved_to p\.(folded|svg)\$" "$T/events")" 4

# leftovers: a dead csampler's (PID beyond pid_max: no such process), a
# running one's (this shell), another user's, and an unrelated name
dead=".p.folded.csampler.2147483.abcdef"
live=".p.folded.csampler.$$.ghijkl"
other=".p.folded.csampler.2147483.nobody"
echo partial >"$T/mnt/$dead"
echo partial >"$T/mnt/$live"
echo partial >"$T/under/$other"
chown nobody "$T/under/$other" || harness "chown"
echo mine >"$T/mnt/.p.folded.mine"
run_csampler -q -F 199 -o "$T/mnt/p.folded" -- "$PROGS/hot" 0.3
assert_eq "exit status with leftovers" "$CS_STATUS" 0
[ -e "$T/mnt/$dead" ] && fail "a dead csampler's temp was kept"
[ -e "$T/mnt/$live" ] || fail "a running csampler's temp was removed"
[ -e "$T/mnt/$other" ] || fail "another user's file was removed"
[ -e "$T/mnt/.p.folded.mine" ] || fail "an unrelated file was removed"
exit 0
