#!/bin/sh
# dump_go: --dump of a Go program. Its sleeping threads are read in place
# (sp and pc only) and Go has no CFI: their stacks stopped after one or two
# frames (runtime.futex, runtime.futexsleep: "no-info"). The frame record
# under each function's return address is found from the function's start
# now: the sysmon thread reads runtime.usleep <- runtime.sysmon <-
# runtime.mstart1 ... runtime.mstart. An idle M's thread goes on from
# runtime.futexsleep through runtime.notesleep to the scheduler too: it
# did not every time (2 of 5 runs had one that stopped there, and gochan's
# dumps 5 threads of 50, unmarked, at runtime.futexsleep or
# runtime.netpoll): the first step, out of the system call's frameless
# wrapper (runtime.futex, runtime.epollwait), scanned for a frame record
# and took a stale one of an earlier call, with a zero rbp that ended the
# walk as if whole. The return address at the snapshot's sp, just past a
# direct call of the wrapper, is taken first now: every thread of gosha's
# dump ends at runtime.mstart or runtime.goexit (6 dumps of 6; gochan: 64
# threads of 64 in 10 dumps).
# An idle M sleeps on its system stack under runtime.mcall: the walk past
# mcall needs its g0's saved registers, read from the thread's TLS base,
# which only a stop gives, and --dump does not stop a sleeping thread: such
# stacks ended at mcall (gochan: 1-4 threads a dump, 'unwinding stopped').
# Now the thread's m is found in the runtime's list of them
# (runtime.allm; m.procid is its thread; asleep on its system stack, it
# runs m.g0): each goes on to
# runtime.mstart (10 dumps of 10 here, 1-2 such threads each).
. "$TESTS_SRCDIR/lib.sh"
need_root
need_go

build_go gosha
progs=$PROGS
PROGS=$T
start_fixture gosha 30
PROGS=$progs
# its runtime threads settle into their waits
sleep 0.5
run_csampler --dump -p "$FIXTURE_PID"
assert_eq "status" "$CS_STATUS" 0
awk '/^Thread /{t = $0} / in runtime\.sysmon /{s = 1} / in runtime\.mstart /{m = 1}
	END { exit !(s && m) }' "$T/cs.out" ||
	fail "no thread from runtime.sysmon to runtime.mstart: $(cat "$T/cs.out")"
# each sleeping thread's outermost frame (a line "(unwinding stopped...)"
# after it marks it; the running thread, stopped anywhere, mid-morestack
# once, is not asked)
outermost() {
	awk '/^Thread / { if (last != "" && asleep) print last; last = ""; asleep = / state S / }
		/^#[0-9]/ { last = $4 } /unwinding stopped/ { last = last "(stopped)" }
		END { if (last != "" && asleep) print last }' "$1"
}
# dump_roots LABEL: every sleeping thread of FIXTURE_PID's dump (in
# cs.out; one dump made first unless LABEL is gosha's) ends at
# runtime.mstart or runtime.goexit
dump_roots() {
	if [ "$1" != gosha ]; then
		run_csampler --dump -p "$FIXTURE_PID"
		assert_eq "$1: --dump status" "$CS_STATUS" 0
	fi
	outermost "$T/cs.out" >"$T/roots"
	note "$1: sleeping threads' outermost frames: $(sort "$T/roots" | uniq -c | tr '\n' ' ')"
	[ -s "$T/roots" ] || fail "$1: no sleeping thread: $(cat "$T/cs.out")"
	assert_eq "$1: sleeping threads whose stack does not end at runtime.mstart or runtime.goexit ($(cat "$T/cs.out"))" \
		"$(grep -cv '^runtime\.\(mstart\|goexit\)$' "$T/roots")" 0
}
dump_roots gosha
kill "$FIXTURE_PID"

build_go gochan
progs=$PROGS
PROGS=$T
GOMAXPROCS=4 start_fixture gochan 30
PROGS=$progs
# (an idle M is there most of the time, not always: beside two busy loops
# one dump had none, every thread running a goroutine; up to five dumps)
for i in 1 2 3 4 5; do
	sleep 0.3
	run_csampler --dump -p "$FIXTURE_PID"
	assert_eq "gochan: status" "$CS_STATUS" 0
	# each thread's frames through mcall, and whether they reach mstart after
	# it. A running thread stopped in mcall itself, before its move to g0's
	# stack (asm_amd64.s's saves into g.sched), is still on its goroutine's
	# stack, rightly read to runtime.goexit (once in a CI's sanitizer stage):
	# not an idle M, it is not asked.
	set -- $(awk 'function done() { if (inm && !(leafm && gx)) { m++; if (st) s++ } }
		/^Thread / { done(); inm = st = leafm = gx = user = 0 }
		/^#[0-9]/ && !/ \[kernel\]$/ { user++ }
		/ in runtime\.mcall / { inm = 1; if (user == 1) leafm = 1 }
		inm && / in runtime\.mstart / { st = 1 }
		inm && / in runtime\.goexit / { gx = 1 }
		END { done(); print m + 0, s + 0 }' "$T/cs.out")
	note "gochan, dump $i: $1 threads through runtime.mcall, $2 of them on to runtime.mstart"
	assert_eq "gochan: threads through runtime.mcall that reach runtime.mstart ($(cat "$T/cs.out"))" "$2" "$1"
	[ "$1" -gt 0 ] && break
done
[ "$1" -gt 0 ] || fail "gochan: no thread through runtime.mcall in five dumps: $(cat "$T/cs.out")"
kill "$FIXTURE_PID"

# a position-independent build (-buildmode=pie, as some distributions
# build their Go packages) has its function table in
# .data.rel.ro.gopclntab: csampler knew only .gopclntab, so it did not see
# Go there at all (no marks, no goroutines followed: 5% of a profile's
# stacks ended at runtime.mcall, and its dumps' idle threads there)
build_go gochan -buildmode=pie
mv "$T/gochan" "$T/gochan_pie"
PROGS=$T
GOMAXPROCS=4 start_fixture gochan_pie 30
PROGS=$progs
sleep 0.5
run_csampler -v -F 199 -d 1 -o "$T/pie.folded" -p "$FIXTURE_PID"
assert_eq "pie: status" "$CS_STATUS" 0
grep -q "runs Go 1\.[0-9]*: its goroutines are followed" "$T/cs.err" ||
	fail "pie: Go not found: $(cat "$T/cs.err")"
dump_roots pie
kill "$FIXTURE_PID"

# a cgo program (linked by the C toolchain): its CFI table covers its C
# code only, and csampler kept Go's function starts only for a module
# without one, so a Go frame without a frame-pointer chain (Go's crypto
# assembly) ended the walk: 26% of a profile's stacks complete; now 98%.
# Its g is in the C library's thread storage, not in m.tls: a thread asleep
# on its system stack is read as running g0, its m's, with no TLS base.
cp "$TESTS_SRCDIR/progs/gocgo.go" "$T/" || harness "no gocgo.go"
(cd "$T" && GO111MODULE=off CGO_ENABLED=1 "$GO" build -o gochan_cgo gochan.go gocgo.go) \
	>"$T/build.err" 2>&1 || harness "go build (cgo): $(cat "$T/build.err")"
PROGS=$T
GOMAXPROCS=4 start_fixture gochan_cgo 30
PROGS=$progs
sleep 0.5
# (2 s: under the sanitizers 1 s gave 34 stacks, where one stack of 2
# samples, time.now under runtime.goready.func1 on the system stack, cut,
# was over the 5% below)
run_csampler -F 199 -d 2 -o "$T/cgo.folded" -p "$FIXTURE_PID"
assert_eq "cgo: status" "$CS_STATUS" 0
total=$(folded_total "$T/cgo.folded")
# (stacks in Go's signal handler, runtime.cgoSigtramp in a cgo build, are
# cut there by design, as Go's traceback is, unless stopped at its first
# instruction (walked from the signal frame): beside two busy loops, where
# Go preempts more, 3 of a run's 45 stacks; at 999 Hz, 99 of 4,035 before
# the signal frame was read, 0 of 3,884 after)
signal=$(folded_count "$T/cgo.folded" '^\[truncated\];runtime\.(cgoSigtramp|sigtramp)(;|$)')
cut=$(($(folded_count "$T/cgo.folded" '^\[truncated\]') - signal))
note "cgo: $cut of $total stacks truncated, and $signal in Go's signal handler"
[ "$total" -gt 0 ] || fail "cgo: no samples"
[ $((cut * 100)) -le $((total * 5)) ] ||
	fail "cgo: $cut of $total stacks truncated: $(grep '^\[truncated\]' "$T/cgo.folded" | grep -Ev '^\[truncated\];runtime\.(cgoSigtramp|sigtramp)(;|$)' | sort -t' ' -k2 -rn | head -5)"
dump_roots cgo
# (its .debug_aranges covers the C units only: libdw gave a Go function
# the line of a C unit, runtime.park_m at runtime/cgo/gcc_mmap.c:37, in 74
# frames of a dump; the unit that holds the address is taken now)
assert_eq "cgo: Go frames placed in a C file: $(grep -E ' in [a-z0-9_/]+\.[^ ]+ \([^)]*\.c:[0-9]+\)' "$T/cs.out" | head -3)" \
	"$(grep -cE ' in [a-z0-9_/]+\.[^ ]+ \([^)]*\.c:[0-9]+\)' "$T/cs.out")" 0
exit 0
