#!/bin/sh
# sampler_oversubscribed: four busy threads per CPU (8 at least), so most of
# them are waiting for a CPU at any moment. Attached at 99 Hz for 4 s with
# --threads: a round that interrupts a waiting thread samples it when it gets
# its CPU ("sampled late"), so samples still come at about one per CPU per
# tick, every thread gets its share, and every stack is whole (nearly all
# of them in busy_leaf).
. "$TESTS_SRCDIR/lib.sh"
need_root

ncpu=$(nproc)
n=$((ncpu * 4))
[ "$n" -lt 8 ] && n=8
[ "$n" -gt 64 ] && n=64
start_fixture busy "$n"
run_csampler -v -F 99 -d 4 --threads -o "$T/out.folded" -p "$FIXTURE_PID"
assert_eq "exit status" "$CS_STATUS" 0
stats=$(grep -E '^csampler: [0-9]+ samples' "$T/cs.err")
note "$stats"
late=$(printf '%s\n' "$stats" | sed -nE 's/.*, ([0-9]+) sampled late,.*/\1/p')
[ -n "$late" ] || fail "no 'sampled late' count in: $stats"
[ "$late" -gt 0 ] || fail "no sample was taken late with $n busy threads on $ncpu CPUs"

F=$T/out.folded
total=$(folded_total "$F")
# 396 ticks of up to one sample per CPU; ticks a busy machine delays are
# missed, but not most of them. (Before late sampling: under 5%.)
want=$((ncpu * 396 * 40 / 100))
[ "$total" -ge "$want" ] || fail "$total samples, expected at least $want (one per CPU per tick)"
note "$total samples for $ncpu CPUs ($late sampled late)"

even=$((total / n))
for i in $(seq 1 "$n"); do
	c=$(folded_count "$F" "^busy-$i-[0-9]+;")
	[ "$c" -ge $((even / 3)) ] && [ "$c" -le $((even * 3)) ] ||
		fail "busy-$i: $c samples, expected about $even (one thread in $n)"
done
# Every stack is whole: a busy thread's from start_thread, the main thread's
# (in pthread_join) from main. A thread that was still on its way out of
# the start barrier when csampler attached, waiting for a CPU, is sampled
# where it was (thread_busy;pthread_barrier_wait...): rare, but right.
whole_re=';start_thread;thread_busy(;[^;]+)*$|;main(;[^;]+)*$'
whole=$(folded_count "$F" "$whole_re")
[ "$whole" -eq "$total" ] ||
	fail "$whole of $total stacks are whole; the others: $(awk -v re="$whole_re" '{st = $0; sub(/ [0-9]+$/, "", st); if (st !~ re) print}' "$F" | head -5)"
leaf=$(folded_count "$F" ';start_thread;thread_busy;busy_leaf$')
[ $((leaf * 100)) -ge $((total * 98)) ] || fail "$leaf of $total stacks end in busy_leaf, expected 98% at least"
assert_untraced_running "$FIXTURE_PID"
