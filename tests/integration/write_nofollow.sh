#!/bin/sh
# write_nofollow: outputs are written as root in shared directories, so an
# output name is never followed through a symbolic link at its end, and
# only regular files, FIFOs, terminals and the null device are written (not
# /dev/ptmx, a new pseudo-terminal nobody reads at each open). A
# link (to a device node, to a FIFO, to another user's file, dangling) and
# a block or other character device are refused before sampling (status
# 69, one line, the program not launched), each left as it was. A file
# replaced keeps its owner and mode. /dev/stdout writes to csampler's own
# standard output. (Private device nodes stand in for the machine's.)
. "$TESTS_SRCDIR/lib.sh"
need_root

mknod "$T/null" c 1 3 || skip "cannot make a device node here"
mknod "$T/zero" c 1 5 || harness "mknod zero"
mknod "$T/blk" b 7 250 || harness "mknod blk"
mkfifo "$T/fifo" || harness "mkfifo"
echo "theirs" >"$T/theirs"
chown nobody "$T/theirs" && chmod 600 "$T/theirs" || harness "chown"

# refused_output NAME WHY: -o NAME is refused before anything runs
refused_output() {
	rm -f "$T/launched"
	run_csampler -q -F 199 -o "$1" -- sh -c "touch '$T/launched'; exec '$PROGS/hot' 0.3"
	assert_eq "exit status for $1 ($2)" "$CS_STATUS" 69
	assert_match "message for $1" "$(cat "$T/cs.err")" "^csampler: refusing to write $1: $2"
	assert_eq "lines on stderr for $1" "$(wc -l <"$T/cs.err" | tr -d ' ')" 1
	[ -e "$T/launched" ] && fail "the program was launched though $1 was refused"
	return 0
}

ln -s "$T/null" "$T/dev.pb.gz"
refused_output "$T/dev.pb.gz" "it is a symbolic link"
ln -s "$T/blk" "$T/blk.folded"
refused_output "$T/blk.folded" "it is a symbolic link"
# (a reader, so that a regression writing through the link does not hang)
cat "$T/fifo" >"$T/from-fifo" &
READER=$!
ln -s "$T/fifo" "$T/fifo.folded"
refused_output "$T/fifo.folded" "it is a symbolic link"
ln -s "$T/theirs" "$T/theirs.txt"
refused_output "$T/theirs.txt" "it is a symbolic link"
ln -s "$T/nowhere/x" "$T/dangling.svg"
refused_output "$T/dangling.svg" "it is a symbolic link"
refused_output "$T/blk" "it is a block device"
refused_output "$T/zero" "it is a device"
for l in dev.pb.gz blk.folded fifo.folded theirs.txt dangling.svg; do
	[ -L "$T/$l" ] || fail "the link $l was replaced"
done
[ -c "$T/null" ] && [ -b "$T/blk" ] && [ -c "$T/zero" ] || fail "a device node was replaced"
assert_eq "the other user's file" "$(cat "$T/theirs")" "theirs"
[ -e "$T/nowhere" ] && fail "the dangling link's directory was made"
echo >"$T/fifo"  # (end the reader)
wait "$READER"
assert_eq "bytes through the link to the FIFO" "$(wc -c <"$T/from-fifo" | tr -d ' ')" 1

# a regular file of another user, replaced: its owner and mode kept
echo "old" >"$T/kept.folded"
chown nobody:nogroup "$T/kept.folded" && chmod 640 "$T/kept.folded" || harness "chown"
run_csampler -q -F 199 -o "$T/kept.folded" -- "$PROGS/hot" 0.3
assert_eq "exit status replacing a file" "$CS_STATUS" 0
assert_folded_has "$T/kept.folded" 'leaf_a [0-9]+$'
assert_eq "owner and mode of the replaced file" "$(stat -c '%U:%G %a' "$T/kept.folded")" \
	"nobody:nogroup 640"
# a new file: root's, with the umask's mode
(umask 027 && run_csampler -q -F 199 -o "$T/new.folded" -- "$PROGS/hot" 0.3 &&
	assert_eq "exit status of a new file" "$CS_STATUS" 0) || exit 1
assert_eq "owner and mode of a new file (umask 027)" "$(stat -c '%U %a' "$T/new.folded")" "root 640"

# /dev/stdout is csampler's standard output, and /dev/null is written
"$CSAMPLER" -q -F 199 -o /dev/stdout -- "$PROGS/hot" 0.3 2>"$T/err" >"$T/stdout.folded" ||
	fail "-o /dev/stdout: $(cat "$T/err")"
assert_folded_has "$T/stdout.folded" 'leaf_a [0-9]+$'
run_csampler -q -F 199 -o "$T/null" --format folded -- "$PROGS/hot" 0.3
assert_eq "exit status for the null device" "$CS_STATUS" 0
[ -c "$T/null" ] || fail "the null device was replaced"
# /dev/ptmx: each open makes a new pseudo-terminal nobody reads (it was
# reported as written); refused before anything runs
run_csampler -q -F 199 -o /dev/ptmx -- "$PROGS/hot" 0.3
assert_eq "exit status for /dev/ptmx" "$CS_STATUS" 69
assert_eq "message for /dev/ptmx" "$(cat "$T/cs.err")" \
	"csampler: refusing to write /dev/ptmx: it is a device; csampler writes regular files, FIFOs, terminals and /dev/null"
exit 0
