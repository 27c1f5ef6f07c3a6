#!/bin/sh
# unwind_go_switch: a Go program whose goroutines hand work through
# channels (gochan), so its threads run the runtime's work on their system
# stack (g0) all the time: runtime.systemstack (goready, the write
# barrier's flush, the GC), and runtime.mcall (a goroutine parks: park_m,
# schedule). Those stacks stopped there ('[truncated]', the summary naming
# runtime.mcall and runtime.systemstack: no unwind information), 8% of
# them. As Go's own traceback does, a walk that reaches systemstack on the
# system stack now goes on from the goroutine's saved registers (m.curg's
# sched, read at the stop with its stack) to runtime.goexit, and a stack
# that starts at mcall (the system stack begins afresh there, at g0's
# saved sp) goes on to the thread's first frames, runtime.mstart0 and
# runtime.mstart.
# time.Now's vDSO call runs on the system stack too, without a switch of
# goroutine: its frame pointers lead back to the goroutine's stack, copied
# at the stop from m.vdsoSP (it was '[truncated];time.now;
# __vdso_clock_gettime'). At least 98% of all stacks whole and reaching
# their root (runtime.goexit, runtime.mstart, the program's entry:
# _rt0_amd64_linux, or _rt0_amd64 which it jumps to, whole at a process's
# first instructions, once in CI): 99.2% and 99.5% in two runs; 92%
# before. A stack stopped at the first instruction of Go's signal handler
# (a ptraced thread's signal goes to the tracer first, so our stop, due
# meanwhile, comes as the handler is entered) is walked from the place the
# kernel's signal frame holds: where the thread was. One in Go's signal
# handler past that starts
# at runtime.sigtramp, where Go's own traceback ends too, but the code it
# interrupted is not followed through the signal frame: it is marked
# [truncated] (it was counted whole, in the summary's complete share too),
# left out of the 98%, and how many is noted (8 of 331 at load 6-18, where
# Go's preemption signals come often; 0-1 on a quiet host; gochan sends
# itself SIGURG every 50 us here, so there are some).
# --backend=perf has no goroutine stack (the kernel copies only the stack
# in use) and no g0's saved registers: where the DWARF walk ends short, the
# kernel's frame-pointer chain of the same sample (Go keeps frame pointers;
# the chain crosses from the system stack to the goroutine) goes on when it
# ends at a Go root: 142 of 142 stacks whole, where 215 of 244 were (the
# rest ended at systemstack or mcall); at least 93% here, each from a
# root. A stack it cannot make whole stays marked [truncated] (it was
# counted whole once: the summary said 92% complete where 87.8% reached a
# root).
. "$TESTS_SRCDIR/lib.sh"
need_root
need_go
build_go gochan
export GOMAXPROCS=2

# counts FOLDED: total, whole (no [truncated] root), crossed (goroutine
# frames from runtime.goexit, then systemstack, then what ran on g0),
# systemstack not at the leaf, mcall stacks, mcall stacks truncated,
# time.now in the vDSO, those from runtime.goexit, stacks from a root,
# stacks through mcall (not at the leaf) from runtime.mstart, stacks that
# end at mcall unmarked (its outermost frame), stacks in the signal
# handler (marked), stacks from runtime.sigtramp unmarked
counts() {
	awk '{ c = $NF; s = $0; sub(/ [0-9]+$/, "", s); t += c
		if (s !~ /^\[truncated\]/) w += c
		if (s ~ /^(runtime\.goexit|runtime\.mstart|runtime\.rt0_go|_rt0_amd64(_linux)?|main)(;|$)/) r += c
		if (s ~ /^\[truncated\];runtime\.sigtramp(;|$)/) sg += c
		if (s ~ /^runtime\.sigtramp(;|$)/) su += c
		if (s ~ /;runtime\.mcall;/) { mi += c; if (s ~ /^runtime\.mstart;/) mr += c }
		if (s ~ /;runtime\.systemstack;/) { ss += c
			if (s ~ /^runtime\.goexit;(.*;)?runtime\.systemstack;[^;]/) x += c }
		if (s ~ /(^|;)runtime\.mcall(;|$)/) { mc += c; if (s ~ /^\[truncated\]/) mt += c }
		if (s ~ /^runtime\.mcall(;|$)/) mu += c
		# (under kvm-clock the clock read is a static vdso function no
		# symbol names: a leaf [vdso]+0xN below __vdso_clock_gettime)
		if (s ~ /(^|;)time\.now;__vdso_clock_gettime(;[[]vdso[]][+]0x[0-9a-f]+)?$/) { tn += c
			if (s ~ /^runtime\.goexit;/) tw += c } }
		END { print t + 0, w + 0, x + 0, ss + 0, mc + 0, mt + 0, tn + 0, tw + 0, r + 0, mi + 0, mr + 0, mu + 0, sg + 0, su + 0 }' "$1"
}

F=$T/go.folded
# (SIGURG every 50 us: some samples in Go's signal handler)
GOCHAN_SIGNALS=1
export GOCHAN_SIGNALS
run_csampler -F 199 -o "$F" -- "$T/gochan" 4
unset GOCHAN_SIGNALS
assert_eq "exit status" "$CS_STATUS" 0
grep -q '^hashed [1-9]' "$T/cs.out" || fail "gochan did not finish: $(cat "$T/cs.out")"
set -- $(counts "$F")
note "$1 samples, $2 whole, $9 from a root, ${13} in the signal handler (marked); systemstack inside: $4, $3 of them from runtime.goexit; mcall: $5 ($6 truncated; ${10} inside, ${11} of them from runtime.mstart); time.now in the vDSO: $7, $8 from runtime.goexit"
assert_eq "stacks from runtime.sigtramp not marked [truncated]" "${14}" 0
# (a stop at the handler's first instruction, the kernel's delivery just
# done, is walked from where the signal frame says the thread was: at most
# 3% of stacks are left cut in the handler; 60 of 804 were before, 2 of 788
# after)
[ $((${13} * 100)) -le $(($1 * 3)) ] ||
	fail "${13} of $1 stacks cut in Go's signal handler: $(grep 'sigtramp' "$F" | sort -t' ' -k2 -rn | head -5)"
# (over 5% of stacks cut: the summary names where, and why)
if [ $((${13} * 100)) -gt $(($1 * 6)) ]; then
	grep -q "of stacks stop in runtime\.sigtramp (gochan): Go's signal handler" "$T/cs.err" ||
		fail "the summary does not name Go's signal handler: $(cat "$T/cs.err")"
fi
awk -v t="$1" -v w="$2" -v g="${13}" 'BEGIN { exit !(100 * w >= 98 * (t - g)) }' ||
	fail "only $2 of $1 - ${13} stacks whole: $(grep '^\[truncated\]' "$F" | sort -t' ' -k2 -rn | head -5)"
awk -v t="$1" -v r="$9" -v g="${13}" 'BEGIN { exit !(100 * r >= 98 * (t - g)) }' ||
	fail "only $9 of $1 - ${13} stacks reach their root: $(grep -Ev '^(runtime\.goexit|runtime\.mstart|runtime\.rt0_go|_rt0_amd64(_linux)?|main);' "$F" | sort -t' ' -k2 -rn | head -5)"
[ "${10}" -gt 0 ] || fail "no stack through runtime.mcall: $(sort -t' ' -k2 -rn "$F" | head -5)"
# (the three shares below are of a few to a few tens of stacks: 90%, less
# one stack; in CI 5 of 6 through mcall started at mstart, the sixth in
# gogo mid-switch, marked [truncated])
awk -v m="${10}" -v r="${11}" 'BEGIN { exit !(100 * (r + 1) >= 90 * m) }' ||
	fail "only ${11} of ${10} stacks through runtime.mcall start at runtime.mstart: $(grep ';runtime\.mcall;' "$F" | grep -v '^runtime\.mstart;' | head -5)"
[ "$4" -gt 0 ] || fail "no stack through runtime.systemstack: $(sort -t' ' -k2 -rn "$F" | head -5)"
awk -v s="$4" -v x="$3" 'BEGIN { exit !(100 * (x + 1) >= 90 * s) }' ||
	fail "only $3 of $4 stacks through runtime.systemstack go on to runtime.goexit: $(grep ';runtime\.systemstack;' "$F" | grep -v '^runtime\.goexit' | head -5)"
# (none ends at mcall unmarked: a walk interrupted in mcall before its
# switch goes on up the goroutine's stack; one that cannot is marked)
assert_eq "stacks ending at runtime.mcall unmarked" "${12}" 0
# (4-14 stacks in time.now's vDSO call a run; once, at CI's load 12, none:
# then a second run of gochan is counted for them)
if [ "$7" -eq 0 ]; then
	note "no stack in time.now's vDSO call: gochan again"
	run_csampler -F 199 -o "$T/go2.folded" -- "$T/gochan" 4
	assert_eq "second run: exit status" "$CS_STATUS" 0
	set -- $(counts "$T/go2.folded")
	F=$T/go2.folded
fi
[ "$7" -gt 0 ] || fail "no stack in time.now's vDSO call: $(grep 'time\.now' "$F" | head -3)"
awk -v n="$7" -v w="$8" 'BEGIN { exit !(100 * (w + 1) >= 90 * n) }' ||
	fail "only $8 of $7 stacks in time.now's vDSO call reach runtime.goexit: $(grep 'time\.now;__vdso' "$F" | head -3)"
grep -Eq 'of stacks stop in runtime\.(mcall|systemstack)' "$T/cs.err" &&
	fail "the summary names mcall or systemstack as a stop: $(cat "$T/cs.err")"

# --idle: a thread asleep is copied where it sleeps (its sp and pc only,
# no stop), and an idle M sleeps on its system stack under mcall (park_m,
# schedule, findRunnable, then futex or epoll_wait). g0's saved registers
# are read from its TLS base, which only a stop gives: it is now kept from
# the thread's last stop (a thread's does not move). Such stacks ended at
# mcall, [truncated]: 929 of 1,187 through mcall (and of the on-CPU
# profile's, the threads read asleep just after the tick: 7 of 173, 3 of
# 18 in a CI run); now 6 of 1,170, mid-switch ones. A thread not stopped
# before in the run still ended there: beside the quick group and two busy
# loops, an idle M that did not run in the 2 s had 63 of 583, and at -j10
# (load 17) 138 of 439. Such a thread's m is now found in the runtime's
# list of them (runtime.allm: m.procid, m.g0): 284-407 of 284-407 from
# mstart beside four busy loops, 839-914 quiet (the binary before: 173 of
# 919; the one with only the kept TLS base: 301 of 439 at load 17). The
# list is walked again for a thread not looked for yet (an M started since)
# at most every 10 ms: every 250 ms, 84 of 743 ended there in a
# scripts/check --busy run (an M started mid-run, asleep until the next
# walk; beside six busy loops 19-22 of about 600 in 2 runs of 3, now 0 in
# 4 of 4). In CI's quick group an M parked after handing its P to a
# locked M (runtime.startlockedm, at the program's start) still ended at
# mcall, 22 and 30 samples (469 of 491, 466 of 495 from mstart): read once
# just after it started, within 10 ms of a walk, and that cut stack counted
# for its whole sleep (25-115 samples in 8 of 70 runs beside the quick
# group). A cut stack is now read again at its 1st, 2nd, 4th ... 64th
# reuse: at most 5 of 480-755 in 30 runs so
run_csampler --idle -F 199 -o "$T/idle.folded" -- "$T/gochan" 2
assert_eq "--idle: exit status" "$CS_STATUS" 0
set -- $(counts "$T/idle.folded")
note "--idle: $1 samples, $2 whole; mcall: $5 ($6 truncated; ${10} inside, ${11} of them from runtime.mstart)"
[ "${10}" -gt 0 ] || fail "--idle: no stack through runtime.mcall: $(sort -t' ' -k2 -rn "$T/idle.folded" | head -5)"
awk -v m="${10}" -v r="${11}" 'BEGIN { exit !(100 * r >= 95 * m) }' ||
	fail "--idle: only ${11} of ${10} stacks through runtime.mcall start at runtime.mstart: $(grep ';runtime\.mcall;' "$T/idle.folded" | grep -v '^runtime\.mstart;' | sort -t' ' -k2 -rn | head -5)"

# the perf backend: the kernel's copy of the stack in use only
run_csampler --backend=perf -F 199 -o "$T/perf.folded" -- "$T/gochan" 3
assert_eq "perf: exit status" "$CS_STATUS" 0
set -- $(counts "$T/perf.folded")
note "perf: $1 samples, $2 whole, $9 from a root; mcall: $5 ($6 truncated)"
awk -v t="$1" -v w="$2" 'BEGIN { exit !(100 * w >= 93 * t) }' ||
	fail "perf: only $2 of $1 stacks whole: $(grep '^\[truncated\]' "$T/perf.folded" | sort -t' ' -k2 -rn | head -5)"
# (a sample without user registers, at a thread's start, is its own
# frame: '[kernel: no user context ...]', 2 of 293 in a CI run)
nouser=$(folded_count "$T/perf.folded" '^\[kernel: no user context')
assert_eq "perf: whole stacks that do not start at a root ($nouser without user registers): $(grep -v '^\[' "$T/perf.folded" |
	grep -Ev '^(runtime\.goexit|runtime\.mstart|runtime\.rt0_go|_rt0_amd64(_linux)?|main)(;| )' | head -3)" \
	"$(($2 - $9 - nouser))" 0
[ "$5" -gt 0 ] || fail "perf: no stack in runtime.mcall: $(sort -t' ' -k2 -rn "$T/perf.folded" | head -5)"
assert_eq "perf: stacks ending at runtime.mcall unmarked" "${12}" 0

# a frame stopped on its function's first instruction, without CFI (Go):
# nothing pushed yet, its return address at [sp], rbp still its caller's.
# The frame-pointer step skipped the caller, or ended the walk as whole
# where the caller had no record: the perf backend's sample of a page
# fault at runtime.check's first fetch came out whole, runtime.check
# alone (rbp 0 in runtime.rt0_go), in a run beside the quick group.
# goentry spins on the first instruction of an assembly function, called
# by main.spinCaller: every stack there must hold its caller.
mkdir -p "$T/goentry-src" &&
	cp "$TESTS_SRCDIR/progs/goentry.go" "$TESTS_SRCDIR/progs/goentry_amd64.s" "$T/goentry-src/" ||
	harness "no goentry sources"
(cd "$T/goentry-src" && GO111MODULE=off "$GO" build -o ../goentry .) >"$T/build.err" 2>&1 ||
	harness "go build goentry: $(cat "$T/build.err")"
for backend in ptrace perf; do
	run_csampler --backend=$backend -F 199 -o "$T/entry-$backend.folded" -- "$T/goentry" 2
	assert_eq "goentry ($backend): exit status" "$CS_STATUS" 0
	at=$(folded_count "$T/entry-$backend.folded" ';main\.spinAtEntry$')
	whole=$(folded_count "$T/entry-$backend.folded" '^runtime\.goexit;runtime\.main;main\.main;main\.spinCaller;main\.spinAtEntry$')
	note "goentry ($backend): $at stacks at main.spinAtEntry, $whole of them through main.spinCaller from runtime.goexit"
	[ "$at" -gt 50 ] || fail "goentry ($backend): $at stacks at main.spinAtEntry: $(sort -t' ' -k2 -rn "$T/entry-$backend.folded" | head -3)"
	assert_eq "goentry ($backend): stacks at main.spinAtEntry without their callers: $(grep ';main\.spinAtEntry ' "$T/entry-$backend.folded" |
		grep -v '^runtime\.goexit;runtime\.main;main\.main;main\.spinCaller;' | sort -t' ' -k2 -rn | head -3)" "$((at - whole))" 0
done
exit 0
