#!/bin/sh
# write_atomic: no output file ever has a name before it is complete, so a
# csampler killed while writing (even by SIGKILL) leaves nothing behind. An
# inotify watcher on the output directory sees, for new outputs and for
# outputs replacing existing files, no write to any named file there: each
# output appears complete (linked from an unnamed O_TMPFILE), or under a
# temp name that is at once renamed over the old file.
. "$TESTS_SRCDIR/lib.sh"
need_root

mkdir "$T/out" || harness "mkdir"
start_fixture hot
HOT=$FIXTURE_PID
start_watchdir "$T/out"

for round in new replace; do
	run_csampler -q -F 499 -d 0.5 -o "$T/out/a.folded" -o "$T/out/b.svg" -o "$T/out/c.pb.gz" \
		-o "$T/out/d.txt" -p "$HOT"
	assert_eq "$round: status" "$CS_STATUS" 0
	assert_folded_has "$T/out/a.folded" 'leaf_a'
done
stop_watchdir
note "events: $(grep -v '^ready' "$T/events" | tr '\n' ',')"

assert_eq "files in the directory" "$(ls -A "$T/out" | tr '\n' ' ')" "a.folded b.svg c.pb.gz d.txt "
# no named file was written to (inotify reports the unnamed O_TMPFILE as
# '#INODE', a name no directory listing has)
grep -E '^(modify|close_write) ' "$T/events" | grep -Ev ' #[0-9]+$' &&
	fail "a named output file was written to: $(cat "$T/events")"
# names created: the outputs themselves (round 1), or a temp name
# (".NAME.csampler.PID.XXXXXX") that is renamed right away (round 2)
names='(a\.folded|b\.svg|c\.pb\.gz|d\.txt)'
temps="\\.$names\\.csampler\\.[0-9]+\\.[A-Za-z0-9]{6}"
grep '^create ' "$T/events" | grep -Ev "^create ($names|$temps)\$" &&
	fail "unexpected names created: $(cat "$T/events")"
for tmp in $(grep -E "^create $temps\$" "$T/events" | cut -d' ' -f2); do
	grep -qx "moved_from $tmp" "$T/events" || fail "temp name $tmp was not renamed: $(cat "$T/events")"
done
assert_eq "outputs created in place (new)" "$(grep -cE "^create $names\$" "$T/events")" 4
assert_eq "outputs renamed over the old ones (replace)" "$(grep -cE "^moved_to $names\$" "$T/events")" 4
assert_eq "temp names made (replace)" "$(grep -cE "^create $temps\$" "$T/events")" 4
exit 0
