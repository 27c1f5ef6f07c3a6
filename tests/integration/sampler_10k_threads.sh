#!/bin/sh
# sampler_10k_threads: two busy threads among 10,000 asleep, attached at
# 999 Hz for 3 s. csampler keeps one /proc file per thread (the busy ones,
# made last, were past the old budget of two per thread: 0 samples) and
# reads a sleeping thread's run time ever seldomer (the old tick read about
# 300 of them every time and fell behind: about 45% of the rate at 5000
# threads). Every thread is followed; the sampler takes at least 75% of
# the periods the busy threads' CPU while sampled is worth at the rate
# asked (the first ticks read every thread once; the kernel's account of
# that CPU, so a busy machine does not fail it), the outputs hold no more
# than their CPU over the run is worth, every sample is theirs with its
# whole stack,
# and the target is left untraced and running. Then the same with
# --backend=perf, which reads nothing per thread: at least 95%.
TEST_TIMEOUT=180
. "$TESTS_SRCDIR/lib.sh"
need_root

n=10000
hard=$(ulimit -Hn)
[ "$hard" = unlimited ] || [ "$hard" -ge $((n + 300)) ] ||
	skip "needs an open-file hard limit of at least $((n + 300)) (it is $hard)"

start_fixture sleepers "$n" 2
# check BACKEND MIN-PCT: sample it with BACKEND; the busy threads get at
# least MIN-PCT of the rate asked
check() {
	local backend=$1 min=$2
	cpu_mark "$FIXTURE_PID"
	run_csampler --backend="$backend" -v -F 999 -d 3 --annotate -o "$T/$backend.folded" -p "$FIXTURE_PID"
	cpu_window "$FIXTURE_PID"
	assert_eq "$backend: status" "$CS_STATUS" 0
	grep -q 'out of file descriptors' "$T/cs.err" && fail "$backend: not every thread followed: $(cat "$T/cs.err")"
	note "$backend: $(grep 'attached to process' "$T/cs.err")"
	stats=$(grep -E '^csampler: [0-9]+ samples' "$T/cs.err") || fail "$backend: no summary: $(cat "$T/cs.err")"
	note "$stats"
	seen=$(printf '%s\n' "$stats" | sed -nE 's/.*, ([0-9]+) threads seen,.*/\1/p')
	[ "${seen:-0}" -ge $((n + 4)) ] || fail "$backend: threads seen: '$seen', expected at least $((n + 4))"

	# The busy threads never block: the CPU they used (the sleepers use
	# next to none) at the rate asked is the samples due. Each thread's
	# output is the kernel's account of its CPU while sampled (the
	# summary's "s of CPU"), so the periods the sampler took are judged
	# against that account: the bracket around the run also holds the
	# attach and the detach of 10,000 threads, when a machine running other
	# work gives the target more CPU than while csampler samples (CI: 1.54
	# CPUs over the bracket, 0.75 in the window).
	# (with perf, the kernel's frames above a sample taken in it: a
	# preemption at the timer interrupt's return, marked _[k])
	got=$(folded_count "$T/$backend.folded" ';busy_spin;busy_leaf(;[^;]*_\[k\])*$')
	total=$(folded_total "$T/$backend.folded")
	assert_window_samples "$backend: samples of the busy threads ($total in all)" "$got" 999 3 2 0 101
	account=$(printf '%s\n' "$stats" | sed -nE 's/^csampler: [0-9]+ samples \(([0-9.]+) s of CPU\).*/\1/p')
	taken=$(printf '%s\n' "$stats" | sed -nE 's/.*, ([0-9]+) periods taken.*/\1/p')
	[ -n "$account" ] && [ -n "$taken" ] || fail "$backend: no CPU account or periods taken: $(cat "$T/cs.err")"
	# (no bound above: the raw periods of a thread that waits for a CPU
	# are more than its CPU is worth, the reason each output is scaled to
	# the kernel's account: 1186 for 0.72 s at a load of 50; the outputs'
	# bound is the one above)
	lo=$(awk -v a="$account" -v m="$min" 'BEGIN { printf "%d\n", a * 999 * m / 100 }')
	note "$backend: $taken periods taken for the kernel's $account s of CPU while sampled (at least $lo)"
	[ "$taken" -ge "$lo" ] ||
		fail "$backend: $taken periods taken for the kernel's $account s of CPU while sampled, expected at least $lo"
	[ "$got" -eq "$total" ] ||
		fail "$backend: $got of $total samples are the busy threads' whole stack: $(head -5 "$T/$backend.folded")"
	[ "$(tracer_pid "$FIXTURE_PID")" = 0 ] || fail "$backend: left traced"
}
check ptrace 75
# the kernel samples at every period of each CPU: nothing falls behind
check perf 95
assert_untraced_running "$FIXTURE_PID"
exit 0
