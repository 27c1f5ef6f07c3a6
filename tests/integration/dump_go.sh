#!/bin/sh
# dump_go: --dump of a Go program. Its sleeping threads are read in place
# (sp and pc only) and Go has no CFI: their stacks stopped after one or two
# frames (runtime.futex, runtime.futexsleep: "no-info"). The frame record
# under each function's return address is found from the function's start
# now: the sysmon thread reads runtime.usleep <- runtime.sysmon <-
# runtime.mstart1 ... runtime.mstart. (An idle M's thread goes on from
# runtime.futexsleep through runtime.notesleep to the scheduler too, but
# not every time: 2 of 5 runs had one that stopped there, so that is not
# asserted.)
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
exit 0
