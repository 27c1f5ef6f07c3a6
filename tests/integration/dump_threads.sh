#!/bin/sh
# dump_threads: --dump on the multi-threaded fixture prints every thread with
# its name, state, syscall and its own call chain; target-controlled names are
# escaped; blocked threads are read in place (no stop), running ones stopped
# together; the target ends running and untraced; the pause (-v) is bounded.
. "$TESTS_SRCDIR/lib.sh"
need_root

# (its spinning threads run at the default nice even in the quick group,
# where fixtures run at nice 5: --dump waits about 440 ms for a running
# thread to stop, and CI's -j6 run at load 11 had one get no CPU that long)
CSAMPLER_FIXTURE_NICE=
start_fixture threads evil
PID=$FIXTURE_PID
wait_state "$PID" RS

run_csampler --dump -v -p "$PID"
assert_eq "exit status" "$CS_STATUS" 0
assert_untraced_running "$PID"
kill -0 "$PID" 2>/dev/null || fail "the fixture died"
OUT=$T/cs.out

# One "Thread" block per task of the process (none started or ended since).
want=$(ls /proc/"$PID"/task | wc -l)
got=$(grep -c '^Thread ' "$OUT")
assert_eq "threads printed" "$got" "$want"
grep -q "^Process $PID: $want threads: " "$OUT" || fail "no process line: $(head -1 "$OUT")"

# block NAME: the lines of the thread block whose header names NAME.
block() {
	NAME=$1 awk '
		/^Thread / { on = (index($0, "Thread " ENVIRON["NAME"] " (tid ") == 1) }
		/^$/ { on = 0 }
		on' "$OUT"
}

# assert_chain NAME HEADER-ERE FUNCTION...: the block of NAME has a header
# matching HEADER-ERE and frames #0.. in which the functions appear in order.
assert_chain() {
	local name=$1 header=$2 b prev=-1 f n
	shift 2
	b=$(block "$name")
	[ -n "$b" ] || fail "no block for thread '$name' in: $(grep '^Thread' "$OUT")"
	printf '%s\n' "$b" | head -1 | grep -Eq -- "$header" ||
		fail "thread '$name' header: '$(printf '%s\n' "$b" | head -1)' does not match /$header/"
	for f in "$@"; do
		n=$(printf '%s\n' "$b" | grep -E "^#[0-9]+ +0x[0-9a-f]{16} in $f \(.*threads\.c:[0-9]+\) \[.*/threads\]$" |
			head -1 | sed 's/^#\([0-9]*\).*/\1/')
		[ -n "$n" ] || fail "thread '$name' has no frame '$f' with file:line and module: $b"
		[ "$n" -gt "$prev" ] || fail "thread '$name': frame '$f' (#$n) out of order"
		prev=$n
	done
}

assert_chain threads "^Thread threads \(tid $PID, main\) state S \(sleeping\), in syscall futex" main
assert_chain th-spin-a '^Thread th-spin-a \(tid [0-9]+\) state R \(running\)$' \
	spin_a_leaf spin_a_middle thread_spin_a
assert_chain th-spin-b '^Thread th-spin-b \(tid [0-9]+\) state R \(running\)$' \
	spin_b_leaf spin_b_middle thread_spin_b
assert_chain th-sleeper '^Thread th-sleeper \(tid [0-9]+\) state S \(sleeping\), in syscall (clock_nanosleep|nanosleep|restart_syscall)' \
	sleeper_leaf sleeper_middle thread_sleeper
assert_chain th-reader '^Thread th-reader \(tid [0-9]+\) state S \(sleeping\), in syscall read' \
	reader_leaf reader_middle thread_reader
# The escape sequence and newline in a thread name come out as \xNN.
assert_chain 'ev\x1b[7mil\x0aname' '^Thread ev\\x1b\[7mil\\x0aname \(tid [0-9]+\) state S' \
	sleeper_leaf sleeper_middle thread_evil

# A blocked thread's kernel frames (/proc/TID/stack, root) come first, named
# from /proc/kallsyms: the reader waits in the kernel's read of its pipe
# (vfs_read), under its user frames.
b=$(block th-reader)
kframes=$(printf '%s\n' "$b" | grep -Ec '^#[0-9]+ +0xffffffff[0-9a-f]{8} in [A-Za-z_][A-Za-z0-9_.]* \[kernel\]$')
[ "$kframes" -ge 2 ] || fail "thread th-reader: fewer than 2 kernel frames: $b"
printf '%s\n' "$b" | grep -q ' in vfs_read \[kernel\]$' || fail "thread th-reader: no vfs_read: $b"
first_user=$(printf '%s\n' "$b" | grep -E '^#[0-9]+ +0x0000' | head -1 | sed 's/^#\([0-9]*\).*/\1/')
assert_eq "thread th-reader: its first user frame follows its $kframes kernel frames" "$first_user" "$kframes"
block th-spin-a | grep -q '\[kernel\]$' && fail "a running thread has kernel frames: $(block th-spin-a)"
note "th-reader: $kframes kernel frames"

# Every spinning thread's stack reaches the thread start; frames are numbered from 0.
for name in th-spin-a th-spin-b; do
	block "$name" | grep -Eq '^#0  0x' || fail "thread $name: first frame is not #0"
	block "$name" | grep -q ' in start_thread ' || fail "thread $name: stack does not reach start_thread"
done

# No control byte reached the output.
if LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" "$OUT"; then
	fail "control characters in the dump"
fi

# The pause is reported and sane (a bound, not a timing test): the blocked
# threads (main, the sleepers, the reader) are read in place, the two
# spinners stopped together.
pause=$(sed -n 's/^csampler: read \([0-9]*\) blocked threads of pid [0-9]* in place ([0-9.]* ms); paused \([0-9]*\) of \([0-9]*\) others together for \([0-9.]*\) ms.*/\1 \2 \3 \4/p' "$T/cs.err")
[ -n "$pause" ] || fail "no pause line in: $(cat "$T/cs.err")"
set -- $pause
assert_eq "threads read in place + stopped" "$(($1 + $2))" "$want"
assert_eq "threads stopped of those not blocked" "$2" "$3"
[ "$1" -ge 4 ] || fail "only $1 blocked threads read in place (main, two sleepers, reader block)"
awk -v ms="$4" 'BEGIN { exit !(ms < 1000) }' || fail "pause of $4 ms is not bounded by 1 s"
note "$(grep '^csampler: read' "$T/cs.err")"
# the blocked ones say so, the spinners do not
for name in threads th-sleeper th-reader; do
	block "$name" | head -1 | grep -q ', read in place$' || fail "thread $name not read in place: $(block "$name" | head -1)"
done
block th-spin-a | head -1 | grep -q 'read in place' && fail "a running thread was read in place"

# A second dump right after works the same (nothing left behind by the
# first); --no-kernel: no kernel frame.
run_csampler --dump --no-kernel -p "$PID"
assert_eq "second exit status" "$CS_STATUS" 0
assert_eq "second: threads printed" "$(grep -c '^Thread ' "$T/cs.out")" "$want"
assert_eq "--no-kernel: kernel frames" "$(grep -c '\[kernel\]$' "$T/cs.out")" 0
[ -s "$T/cs.err" ] && fail "--dump without -v printed on stderr: $(cat "$T/cs.err")"
assert_untraced_running "$PID"
exit 0
