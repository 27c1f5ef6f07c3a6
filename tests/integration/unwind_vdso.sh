#!/bin/sh
# unwind_vdso: samples in the vdso (a clock_gettime loop) unwind out of the
# vdso, with the CFI read from the vdso image, through libc's clock_gettime
# into main. And from a thread: a thread made after csampler read the
# mappings (launched) looping on CLOCK_THREAD_CPUTIME_ID, which the vdso
# serves through its system-call fallback, unwinds whole to start_thread
# (it was '[truncated];__vdso_clock_gettime' for every sample: its stack's
# mapping was not known), on-CPU, with --idle, with --backend=perf, and in
# --dump.
. "$TESTS_SRCDIR/lib.sh"
need_root

start_fixture vdsoloop 60
grep -q '\[vdso\]' "/proc/$FIXTURE_PID/maps" || skip "no vdso in this kernel"
run_csampler -F 199 -d 3 -o "$T/out.folded" -p "$FIXTURE_PID"
assert_eq "exit status" "$CS_STATUS" 0
F=$T/out.folded
# libc's clock_gettime calls the vdso's (__vdso_clock_gettime or its alias)
# (under it, a static function of the vdso no symbol names, as kvm-clock's
# read on a firecracker guest: '[vdso]+0x7bd')
via='(^|;)main;vdso_loop;[^;]*clock_gettime[^;]*;(__vdso_)?clock_gettime(;\[vdso\]\+0x[0-9a-f]+)?$'
counts=$(AWK_RE=$via awk '{ c = $NF; s = $0; sub(/ [0-9]+$/, "", s); t += c
	if (s ~ ENVIRON["AWK_RE"]) v += c; if (s ~ /(^|;)main(;|$)/) m += c }
	END { print t + 0, v + 0, m + 0 }' "$F")
set -- $counts
note "$1 samples: $2 in the vdso unwound to main, $3 reach main"
[ "$1" -gt 0 ] || fail "no samples"
awk -v t="$1" -v v="$2" 'BEGIN { exit !(2 * v >= t) }' ||
	fail "fewer than half the samples unwound out of the vdso: $(sort -t' ' -k2 -rn "$F" | head -3)"
awk -v t="$1" -v m="$3" 'BEGIN { exit !(100 * m >= 99 * t) }' ||
	fail "only $3 of $1 samples reach main: $(grep -v ';main;' "$F" | head -3)"
kill -KILL "$FIXTURE_PID"

# the thread's samples: every one through the vdso to start_thread
# (WHAT FILE)
thread_whole() {
	local what=$1 counts
	counts=$(awk '{ c = $NF; s = $0; sub(/ [0-9]+$/, "", s)
		if (s ~ /;vdso_loop;/) { t += c
			if (s ~ /(^|;)start_thread;vdso_loop;[^;]*clock_gettime[^;]*;(__vdso_)?clock_gettime(;\[vdso\]\+0x[0-9a-f]+)?$/) v += c
			if (s ~ /(^|;)start_thread;vdso_loop(;|$)/) w += c } }
		END { print t + 0, v + 0, w + 0 }' "$2")
	set -- $counts
	note "$what: $1 samples of the thread, $2 in the vdso unwound to start_thread, $3 reach it"
	[ "$1" -gt 0 ] || fail "$what: no samples of the thread: $(head -3 "$F")"
	[ "$2" -gt 0 ] || fail "$what: no sample in the vdso unwound: $(sort -t' ' -k2 -rn "$F" | head -3)"
	[ "$3" = "$1" ] || fail "$what: only $3 of $1 samples reach start_thread: $(grep -v ';start_thread;' "$F" | head -3)"
}
for args in "" "--idle"; do
	run_csampler -F 199 $args -o "$F" -- "$PROGS/vdsoloop" 1.5 thread
	assert_eq "launched, thread $args: exit status" "$CS_STATUS" 0
	thread_whole "launched, thread $args" "$F"
done
run_csampler --backend=perf -F 199 -o "$F" -- "$PROGS/vdsoloop" 1.5 thread
if [ "$CS_STATUS" = 67 ]; then
	note "perf events not permitted here: --backend=perf not checked"
else
	assert_eq "launched, thread, perf: exit status" "$CS_STATUS" 0
	thread_whole "launched, thread, perf" "$F"
fi
start_fixture vdsoloop 60 thread
# (a runnable thread that got no CPU while --dump waited for its stop, at
# nice 5 beside the quick group at load 10: "ask again", as the output
# says, up to 3 times)
for try in 1 2 3; do
	run_csampler --dump -p "$FIXTURE_PID"
	assert_eq "--dump: exit status" "$CS_STATUS" 0
	grep -q 'no stack: the thread did not stop within' "$T/cs.out" || break
	note "--dump, try $try: a thread did not stop in time; asked again"
done
awk '/^Thread / { cur = $0 !~ /, main\)/ } cur && / in start_thread / { found = 1 } END { exit !found }' \
	"$T/cs.out" || fail "--dump: the thread does not unwind to start_thread: $(cat "$T/cs.out")"
exit 0
