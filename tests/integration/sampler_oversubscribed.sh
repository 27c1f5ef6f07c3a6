#!/bin/sh
# sampler_oversubscribed: four busy threads per CPU (8 at least), so most of
# them are waiting for a CPU at any moment. Attached at 99 Hz for 4 s with
# --threads: a round that interrupts a waiting thread samples it when it gets
# its CPU ("sampled late"), so samples still come at about one per CPU per
# tick, every thread gets the share of the samples the kernel says it had
# of the CPU, and every stack is whole (nearly all of them in busy_leaf).
. "$TESTS_SRCDIR/lib.sh"
need_root

ncpu=$(nproc)
n=$((ncpu * 4))
[ "$n" -lt 8 ] && n=8
[ "$n" -gt 64 ] && n=64
start_fixture busy "$n"
# each thread's run time (ns) from its schedstat, one "tid ns" line each
thread_cpu() { for t in /proc/"$FIXTURE_PID"/task/*; do echo "${t##*/} $(cut -d' ' -f1 "$t/schedstat")"; done; }
thread_cpu >"$T/cpu0"
cpu_mark "$FIXTURE_PID"
run_csampler -v -F 99 -d 4 --threads -o "$T/out.folded" -p "$FIXTURE_PID"
cpu_window "$FIXTURE_PID"
thread_cpu >"$T/cpu1"
assert_eq "exit status" "$CS_STATUS" 0
stats=$(grep -E '^csampler: [0-9]+ samples' "$T/cs.err")
note "$stats"
late=$(printf '%s\n' "$stats" | sed -nE 's/.*, ([0-9]+) sampled late,.*/\1/p')
[ -n "$late" ] || fail "no 'sampled late' count in: $stats"
[ "$late" -gt 0 ] || fail "no sample was taken late with $n busy threads on $ncpu CPUs"

F=$T/out.folded
total=$(folded_total "$F")
# the CPU the threads had in the 4 s at 99 Hz, as the kernel counts it
# (before late sampling: under 5% of one sample per CPU per tick)
assert_window_samples "samples of the $n busy threads" "$total" 99 4 "$ncpu" 85 103
note "$total samples for $ncpu CPUs ($late sampled late)"

# each thread's share of the samples is its share of the CPU the kernel
# gave the threads between the two reads: within a fifth of it either way
# (the samples are scaled to each thread's kernel-counted CPU, so what is
# left is the attach and the detach around the window, the same for all)
for i in $(seq 1 "$n"); do
	tid=$(awk '{split($1, f, ";"); print f[1]}' "$F" | sed -n "s/^busy-$i-\([0-9]*\)\$/\1/p" | head -1)
	[ -n "$tid" ] || fail "busy-$i: no samples"
	c=$(folded_count "$F" "^busy-$i-[0-9]+;")
	share=$(awk -v tid="$tid" 'NR == FNR { a[$1] = $2; next }
		$1 in a { d = $2 - a[$1]; all += d; if ($1 == tid) mine = d }
		END { printf "%.4f\n", (all > 0) ? mine / all : 0 }' "$T/cpu0" "$T/cpu1")
	want=$(awk -v s="$share" -v t="$total" 'BEGIN { printf "%.0f\n", s * t }')
	assert_within "busy-$i: samples (the kernel gave it $share of the CPU: $want)" "$c" \
		"$(awk -v w="$want" 'BEGIN { printf "%.0f\n", w * 0.8 }')" "$(awk -v w="$want" 'BEGIN { printf "%.0f\n", w * 1.2 }')"
done
# Every stack is whole: a busy thread's from start_thread, the main thread's
# (in pthread_join) from main. A thread that was still on its way out of
# the start barrier when csampler attached, waiting for a CPU, is sampled
# where it was (thread_busy;pthread_barrier_wait...): rare, but right.
whole_re=';start_thread;thread_busy(;[^;]+)*$|;main(;[^;]+)*$'
whole=$(folded_count "$F" "$whole_re")
[ "$whole" -eq "$total" ] ||
	fail "$whole of $total stacks are whole; the others: $(AWK_RE=$whole_re awk '{st = $0; sub(/ [0-9]+$/, "", st); if (st !~ ENVIRON["AWK_RE"]) print}' "$F" | head -5)"
leaf=$(folded_count "$F" ';start_thread;thread_busy;busy_leaf$')
[ $((leaf * 100)) -ge $((total * 98)) ] || fail "$leaf of $total stacks end in busy_leaf, expected 98% at least"
assert_untraced_running "$FIXTURE_PID"
