#!/bin/sh
# convert_hostile: -i of profiles made to make csampler build far more than
# they weigh (written by tests/mkpprof.py) is bounded by what it builds,
# each refused or cut with a clear line, fast:
#   - 4 million empty Sample messages (8 MB, 2 bytes each; 64 MB of them
#     took 4 GB and 39 s): refused, as asking for more than 16 times the
#     message's size (and 64 MB) of memory, exit 73;
#   - one location of 200,000 inline lines (84 s and 5.6 GB before): read,
#     its lines cut to 256, the innermost and its own function kept;
#   - a function name of 20 MB: read, the name cut to 4096 bytes as a
#     recording's are;
#   - three samples whose counts in nanoseconds each nearly fill an int64
#     (the total wrapped, and the text report showed 200%): refused, exit 73.
# A regular file over the 1 GB cap is refused by its size, before a byte is
# read (a sparse file of 2 GB: it was read whole, 31 s). A device
# (/dev/zero: 1 GB read before the cap refused it, 2.8 s) is refused before
# a byte is read; a FIFO is opened without waiting for its writer (the
# open blocked for good), read once a writer comes (here 1 s later), and
# given up 10 s after no byte came; a pipe into -i - is read.
TEST_TIMEOUT=120
. "$TESTS_SRCDIR/lib.sh"
need_cmd python3
mk() { python3 "$TESTS_SRCDIR/mkpprof.py" "$@" || harness "mkpprof.py $*"; }

mk empty "$T/empty.pb.gz" 4000000
run_csampler -i "$T/empty.pb.gz" -o "$T/empty.txt"
assert_eq "empty samples: status" "$CS_STATUS" 73
assert_match "empty samples: message" "$(cat "$T/cs.err")" \
	"^csampler: cannot read the input '$T/empty.pb.gz': its [0-9]+ KB message asks for more than [0-9]+ MB of memory \(at most 16 times a message's size and 64 MB are built from it\)"
[ -e "$T/empty.txt" ] && fail "empty samples: an output was made"

mk inline "$T/inline.pb.gz" 200000
run_csampler -i "$T/inline.pb.gz" -o "$T/inline.folded"
assert_eq "200,000 inline lines: status" "$CS_STATUS" 0
assert_eq "200,000 inline lines: frames of its stack" \
	"$(awk '{ sub(/ [0-9]+$/, ""); print split($0, f, ";") }' "$T/inline.folded")" 256

mk bigname "$T/bigname.pb.gz" 20000000
run_csampler -i "$T/bigname.pb.gz" -o "$T/bigname.folded"
assert_eq "a name of 20 MB: status" "$CS_STATUS" 0
assert_eq "a name of 20 MB: bytes of its frame" \
	"$(awk '{ n = split($1, f, ";"); print length(f[n]) }' "$T/bigname.folded")" 4096

mk maxcount "$T/max.pb.gz"
run_csampler -i "$T/max.pb.gz" -o "$T/max.txt"
assert_eq "counts that overflow: status" "$CS_STATUS" 73
assert_eq "counts that overflow: message" "$(cat "$T/cs.err")" \
	"csampler: cannot read the input '$T/max.pb.gz': the samples' counts add up to more than a profile can hold (2^63 nanoseconds)"

truncate -s 2G "$T/huge.pb" || harness "truncate"
run_csampler -i "$T/huge.pb" -o "$T/huge.txt"
assert_eq "a 2 GB file: status" "$CS_STATUS" 73
assert_eq "a 2 GB file: message" "$(cat "$T/cs.err")" "csampler: the input '$T/huge.pb' is larger than 1024 MB"

run_csampler -i /dev/zero -o "$T/zero.txt"
assert_eq "/dev/zero: status" "$CS_STATUS" 73
assert_eq "/dev/zero: message" "$(cat "$T/cs.err")" \
	"csampler: the input '/dev/zero' is a terminal or character device: name a profile file (e.g. profile.pb.gz), or pipe one into -i -"
mk inline "$T/small.pb.gz" 3
mkfifo "$T/in.fifo" || harness "mkfifo"
(sleep 1; cat "$T/small.pb.gz" >"$T/in.fifo") &
run_csampler -i "$T/in.fifo" -o "$T/fifo.folded"
assert_eq "a FIFO whose writer comes 1 s late: status" "$CS_STATUS" 0
[ -s "$T/fifo.folded" ] || fail "a FIFO whose writer comes 1 s late: nothing written: $(cat "$T/cs.err")"
started=$(date +%s)
run_csampler -i "$T/in.fifo" -o "$T/fifo2.folded"
assert_eq "a FIFO nobody writes: status" "$CS_STATUS" 73
assert_eq "a FIFO nobody writes: message" "$(cat "$T/cs.err")" \
	"csampler: nothing came from the input '$T/in.fifo' in 10 s: start what writes it first"
waited=$(( $(date +%s) - started ))
[ "$waited" -le 30 ] || fail "a FIFO nobody writes: given up after $waited s"
# (standard input a FIFO a writer fills: a pipe, as the shell's |, whose
# subshell would keep run_csampler's status)
mkfifo "$T/pipe.fifo" || harness "mkfifo"
cat "$T/small.pb.gz" >"$T/pipe.fifo" &
run_csampler -i - -o "$T/pipe.folded" <"$T/pipe.fifo"
assert_eq "standard input a pipe: status" "$CS_STATUS" 0
cmp -s "$T/fifo.folded" "$T/pipe.folded" || fail "the pipe's profile is not the FIFO's"
exit 0
