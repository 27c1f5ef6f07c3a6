#!/bin/sh
# idle_kernel: --idle shows where a blocked thread waits in the kernel
# (/proc/TID/stack, root), above its user frames, named from /proc/kallsyms
# (tests/progs/threads.c: th-reader waits in a read of a pipe nobody
# writes, th-sleeper in nanosleep, two threads spin). Every stack of the
# reader ends in the kernel's read (vfs_read_[k] with --annotate), no stack
# of a spinning thread has a kernel frame (it is stopped on its way back to
# user space), and --no-kernel gives user frames only. The previous binary
# has no kernel frame at all. /proc/kallsyms is read once a run (strace):
# the outputs name the kernel frames with the recorder's symbols (it was
# read twice, by the recorder and again by the symbol cache).
. "$TESTS_SRCDIR/lib.sh"
need_root

start_fixture threads
PID=$FIXTURE_PID
wait_state "$PID" RS
[ -r /proc/"$PID"/task/"$PID"/stack ] || skip "/proc/TID/stack is not readable here"

run_csampler --idle -F 99 -d 1 --threads --annotate -o "$T/idle.folded" -p "$PID"
assert_eq "exit status ($(cat "$T/cs.err"))" "$CS_STATUS" 0
reader=$(folded_count "$T/idle.folded" '^th-reader-[0-9]+;')
[ "$reader" -gt 50 ] || fail "th-reader has $reader samples in 1 s at 99 Hz"
assert_eq "th-reader's samples in the kernel's read: $(grep '^th-reader' "$T/idle.folded" | head -3)" \
	"$(folded_count "$T/idle.folded" '^th-reader-[0-9]+;.*;reader_leaf;([^;]*;)*[^;]*read[^;]*;([^;]*_\[k\];)*vfs_read_\[k\](;[^;]*_\[k\])*$')" "$reader"
assert_folded_has "$T/idle.folded" '^th-sleeper-[0-9]+;.*;sleeper_leaf;.*_\[k\] [0-9]+$'
assert_eq "spinning threads' samples with kernel frames: $(grep '^th-spin.*_\[k\]' "$T/idle.folded" | head -2)" \
	"$(folded_count "$T/idle.folded" '^th-spin-[ab]-[0-9]+;.*_\[k\]')" 0
# (none named by address)
assert_eq "kernel frames named by address" "$(folded_count "$T/idle.folded" '(^|;)0x[0-9a-f]*_\[k\]')" 0

run_csampler --idle -F 99 -d 1 --threads --annotate --no-kernel -o "$T/nok.folded" -p "$PID"
assert_eq "--no-kernel: exit status ($(cat "$T/cs.err"))" "$CS_STATUS" 0
assert_eq "--no-kernel: kernel frames" "$(folded_count "$T/nok.folded" '_\[k\]')" 0
assert_folded_has "$T/nok.folded" '^th-reader-[0-9]+;.*;reader_leaf;'
assert_untraced_running "$PID"

command -v strace >/dev/null 2>&1 || skip "needs strace (Debian's strace) to count the reads of /proc/kallsyms"
# (LeakSanitizer cannot run under a tracer: off for this run)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	CSAMPLER_WRAPPER="strace -f -qq -e trace=openat -o $T/strace.txt" \
	run_csampler --idle -F 99 -d 1 --threads --annotate -o "$T/once.folded" -p "$PID"
assert_eq "under strace: exit status ($(cat "$T/cs.err"))" "$CS_STATUS" 0
assert_folded_has "$T/once.folded" ';vfs_read_\[k\]'
assert_eq "opens of /proc/kallsyms in one run: $(grep kallsyms "$T/strace.txt")" \
	"$(grep -c '"/proc/kallsyms"' "$T/strace.txt")" 1
assert_untraced_running "$PID"
exit 0
