#!/bin/sh
# write_disk_full: an output that cannot be written (disk full on a small
# tmpfs, a read-only filesystem, a missing directory) fails with one clear
# line and exit status 69, leaves no partial or temp file, and keeps a file
# that was there before intact; a full stdout (/dev/full) is an error too.
. "$TESTS_SRCDIR/lib.sh"
need_root
need_cmd mount

mkdir "$T/full" "$T/ro" || harness "mkdir"
mount -t tmpfs -o size=64k,mode=0755 csampler-test "$T/full" 2>/dev/null ||
	skip "cannot mount a tmpfs here"
trap 'umount "$T/full" "$T/ro" 2>/dev/null; cleanup' EXIT

# fill the tmpfs to 4 KiB below its size: a text report still fits, the SVG not
"$PROGS/mkprofile" "$T/full/old.svg" || fail "mkprofile into an empty tmpfs failed"
svg_size=$(wc -c <"$T/full/old.svg")
[ "$svg_size" -gt 8192 ] || harness "SVG only $svg_size bytes: too small to overflow"
dd if=/dev/zero of="$T/full/filler" bs=1k count=56 2>/dev/null
free=$(df -k "$T/full" | awk 'NR == 2 {print $4}')
[ "$free" -le 4 ] || harness "$free KiB still free on the tmpfs"
cp "$T/full/old.svg" "$T/old.svg" 2>/dev/null

status=0
"$PROGS/mkprofile" "$T/full/new.svg" 2>"$T/err" || status=$?
assert_eq "exit status on a full disk" "$status" 69
assert_eq "error message" "$(cat "$T/err")" \
	"csampler: cannot write $T/full/new.svg: No space left on device"
assert_eq "files on the full disk" "$(ls "$T/full" | tr '\n' ' ')" "filler old.svg "

# a failed rewrite leaves the old file whole
status=0
"$PROGS/mkprofile" -T "a longer title" "$T/full/old.svg" 2>"$T/err" || status=$?
assert_eq "exit status of a failed rewrite" "$status" 69
cmp -s "$T/full/old.svg" "$T/old.svg" || fail "the previous old.svg was damaged"
assert_eq "files after the failed rewrite" "$(ls "$T/full" | tr '\n' ' ')" "filler old.svg "

# several outputs: the ones that fit are written, the run still fails
status=0
rm -f "$T/full/old.svg"
"$PROGS/mkprofile" "$T/full/small.folded" "$T/full/big.svg" 2>"$T/err" || status=$?
assert_eq "exit status with one failed output" "$status" 69
[ -s "$T/full/small.folded" ] || fail "the folded file that fit was not written"
assert_eq "files after a partial run" "$(ls "$T/full" | tr '\n' ' ')" "filler small.folded "
assert_eq "one line per failure" "$(wc -l <"$T/err" | tr -d ' ')" 1

# a read-only filesystem: the temp file cannot even be created
mount -t tmpfs -o size=64k,ro csampler-test "$T/ro" || harness "cannot mount a read-only tmpfs"
status=0
"$PROGS/mkprofile" "$T/ro/out.pb.gz" 2>"$T/err" || status=$?
assert_eq "exit status on a read-only filesystem" "$status" 69
assert_eq "read-only message" "$(cat "$T/err")" \
	"csampler: cannot create $T/ro/out.pb.gz: Read-only file system"
assert_eq "files on the read-only filesystem" "$(ls "$T/ro" | wc -l | tr -d ' ')" 0

# a missing directory
status=0
"$PROGS/mkprofile" "$T/missing/out.txt" 2>"$T/err" || status=$?
assert_eq "exit status for a missing directory" "$status" 69
assert_eq "missing directory message" "$(cat "$T/err")" \
	"csampler: cannot create $T/missing/out.txt: the directory $T/missing does not exist"

# stdout that is /dev/full
status=0
"$PROGS/mkprofile" -f svg - >/dev/full 2>"$T/err" || status=$?
assert_eq "exit status writing to /dev/full" "$status" 69
assert_eq "stdout message" "$(cat "$T/err")" \
	"csampler: cannot write the svg output to stdout: No space left on device"
exit 0
