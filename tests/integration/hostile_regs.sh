#!/bin/sh
# hostile_regs: threads spinning with garbage in rsp/rbp, rsp below any
# mapping, inside PROT_NONE or at the edge of a mapping, and with cyclic or
# self-referencing frame-pointer chains (progs/hostile_regs.c). csampler
# neither crashes nor hangs; every thread's samples are kept, those read in
# its spin (about 0.5 ms in every 10: the fixture's threads sleep between
# spins, so they do not take the CPUs from the tests beside it) as a short
# stack ending in its own spin function; the counts add up; the target runs
# on untraced.
# --idle samples every thread at every tick, so each one is seen however
# loaded the machine is.
. "$TESTS_SRCDIR/lib.sh"
need_root

start_fixture hostile_regs
run_csampler --idle -F 499 -d 2 --threads -o "$T/out.folded" -o "$T/out.pb.gz" -p "$FIXTURE_PID"
assert_eq "exit status ($(cat "$T/cs.err"))" "$CS_STATUS" 0
F=$T/out.folded
reported=$(sed -nE 's/^csampler: wrote .* \(folded stacks, ([0-9]+) samples?\).*/\1/p' "$T/cs.err")
assert_eq "samples in the output" "$(folded_total "$F")" "$reported"
for mode in garbage nullsp protnone edge cycle selfloop; do
	n=$(folded_count "$F" "^$mode-[0-9]+;.*hostile_spin_$mode\$")
	note "$mode: $n samples"
	[ "$n" -gt 0 ] || fail "no samples of the $mode thread: $(cat "$F")"
	# its stacks read in the spin are short: nothing invented beyond the
	# thread's start (its sleeps between spins have the kernel's frames)
	awk -v m="$mode" '$0 ~ "^" m "-.*hostile_spin_" { n = split($0, f, ";"); if (n > 8) { print; bad = 1 } }
		END { exit bad }' "$F" || fail "$mode: an implausibly deep stack"
done
# the spin functions are only ever leaves, never invented callers
grep -E 'hostile_spin_[a-z]+;' "$F" && fail "a spin function appears as a caller"
assert_untraced_running "$FIXTURE_PID"
exit 0
