#!/bin/sh
# fault_output: the real csampler, attached to the self-checking ledger, with
# an output it cannot write: the path is a directory, stdout is closed under
# -o - (found before sampling), the disk is full (small tmpfs), the
# directory is read-only. Each ends with one clear line and status 69,
# leaves no partial or temp file, and the ledger runs on untraced with its
# checksums right. (write_disk_full.sh covers
# the writers' side of the same errors in detail.)
. "$TESTS_SRCDIR/lib.sh"
. "$TESTS_SRCDIR/ledger_lib.sh"
need_root
need_cmd mount

start_fixture ledger 2 1
L=$FIXTURE_PID
LOUT=$T/ledger.out
ledger_check "$L" "$LOUT" 0

# the path is a directory when csampler starts: refused before sampling
mkdir "$T/out" "$T/out/dir.folded" || harness "mkdir"
st=0
"$CSAMPLER" -q -F 499 -d 0.5 -o "$T/out/dir.folded" -p "$L" 2>"$T/err" || st=$?
assert_eq "status for a directory" "$st" 64
assert_match "directory message" "$(head -1 "$T/err")" \
	"^csampler: --output '$T/out/dir.folded' is a directory: name a file \(e.g. '$T/out/dir.folded/profile.pb.gz'\)$"
ledger_check "$L" "$LOUT" 0

# the path becomes a directory while csampler samples: the complete file
# cannot be named; nothing is left next to it or in it
rmdir "$T/out/dir.folded"
st=0
"$CSAMPLER" -q -F 499 -d 2 -o "$T/out/dir.folded" -p "$L" 2>"$T/err" &
cs=$!
# (once its clock ticks: the output's check at the start is past; a fixed
# sleep was once too short for csampler under ASAN, which then refused the
# directory at its start, status 64)
wait_clock $cs || true
mkdir "$T/out/dir.folded" || harness "mkdir"
wait "$cs" || st=$?
assert_eq "status for a directory made while sampling" "$st" 69
assert_eq "directory message" "$(cat "$T/err")" \
	"csampler: cannot write $T/out/dir.folded: it is a directory; name a file in it"
assert_eq "files next to the directory" "$(ls -A "$T/out" | tr '\n' ' ')" "dir.folded "
assert_eq "files in the directory" "$(ls -A "$T/out/dir.folded" | wc -l | tr -d ' ')" 0
ledger_check "$L" "$LOUT" 0

# -o - with stdout closed: an error before sampling (the only line: no
# "sampling process" line), not a write into whatever fd 1 became
st=0
"$CSAMPLER" -F 499 -d 30 -o - -p "$L" >&- 2>"$T/err" || st=$?
assert_eq "status with stdout closed" "$st" 69
assert_eq "closed stdout message" "$(cat "$T/err")" \
	"csampler: cannot write to stdout: Bad file descriptor"
ledger_check "$L" "$LOUT" 0

# a full disk, and a read-only one
mkdir "$T/full" "$T/ro" || harness "mkdir"
mount -t tmpfs -o size=16k,mode=0755 csampler-test "$T/full" 2>/dev/null ||
	skip "cannot mount a tmpfs here"
trap 'umount "$T/full" "$T/ro" 2>/dev/null; cleanup' EXIT
dd if=/dev/zero of="$T/full/filler" bs=1k count=16 2>/dev/null
st=0
"$CSAMPLER" -q -F 499 -d 0.5 -o "$T/full/out.svg" -p "$L" 2>"$T/err" || st=$?
assert_eq "status on a full disk" "$st" 69
assert_eq "full disk message" "$(cat "$T/err")" \
	"csampler: cannot write $T/full/out.svg: No space left on device"
assert_eq "files on the full disk" "$(ls -A "$T/full" | tr '\n' ' ')" "filler "
ledger_check "$L" "$LOUT" 0

mount -t tmpfs -o size=64k,ro csampler-test "$T/ro" || harness "cannot mount a read-only tmpfs"
st=0
"$CSAMPLER" -q -F 499 -d 0.5 -o "$T/ro/out.pb.gz" -p "$L" 2>"$T/err" || st=$?
assert_eq "status on a read-only filesystem" "$st" 69
assert_eq "read-only message" "$(cat "$T/err")" \
	"csampler: cannot create $T/ro/out.pb.gz: Read-only file system"
ledger_check "$L" "$LOUT" 0
exit 0
