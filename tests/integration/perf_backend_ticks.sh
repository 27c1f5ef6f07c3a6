#!/bin/sh
# perf_backend_ticks: with --backend=perf the kernel samples, and csampler's
# ticks only read what it wrote: csampler wakes as often as its rings need
# (each read before a quarter of a ring fills: about 66 times a second at
# 999 Hz and the 64 KiB window), at real-time priority as the default
# backend's rounds are, so a read never waits for a CPU while the rings
# fill (mariadbd under sysbench lost 2,500-7,300 of 10-13k samples in 5 s
# at normal priority, none at SCHED_FIFO). It used to tick at every
# period, and each tick took a CPU from a thread of the target: two busy
# threads on the 2 CPUs, 999 Hz, 5 s: preempted 5,200 times then, 520-566
# now at either priority; csampler's own threads woke 2,970 times in 3 s
# then, 202 now. The samples are still every period of the target's CPU,
# none lost.
TEST_TIMEOUT=120
. "$TESTS_SRCDIR/lib.sh"
need_root
[ -z "${CSAMPLER_WRAPPER:-}" ] || skip "csampler runs under $CSAMPLER_WRAPPER, whose threads these counts would be"

start_fixture hot 0 2
pid=$FIXTURE_PID
# wake-ups: csampler's threads' context switches, and their policies
switches() { cat /proc/"$1"/task/*/status 2>/dev/null | awk '/^(non)?voluntary_ctxt_switches/ { s += $2 } END { print s + 0 }'; }
policies() { for t in /proc/"$1"/task/*; do awk '{ print $41 }' "$t/stat" 2>/dev/null; done | sort -u | tr '\n' ' '; }

# (the default backend first: the policy read the same way sees its
# rounds' real-time priority)
"$CSAMPLER" -v -F 999 -d 3 -o "$T/pt.folded" -p "$pid" 2>"$T/cs.err" &
cs=$!
wait_sampling "$cs"
sleep 1
assert_match "the default backend's threads' policies (1: SCHED_FIFO)" "$(policies "$cs")" '(^| )1 '
wait "$cs"

cpu_mark "$pid"
: >"$T/cs.err"   # (wait_sampling must not read the first run's line)
"$CSAMPLER" --backend=perf -v -F 999 -d 4 -o "$T/pf.folded" -p "$pid" 2>"$T/cs.err" &
cs=$!
wait_sampling "$cs"
s0=$(switches "$cs")
sleep 2
s1=$(switches "$cs")
pol=$(policies "$cs")
wait "$cs"
st=$?
cpu_window "$pid"
assert_eq "perf: exit status: $(tail -n 3 "$T/cs.err")" "$st" 0
note "perf: csampler's threads switched $((s1 - s0)) times in 2 s; policies: $pol"
# (about 132 in 2 s; at every period, about 2,000)
assert_within "perf: csampler's wake-ups in 2 s of sampling at 999 Hz" "$((s1 - s0))" 0 400
assert_match "perf: csampler's reading thread's policy (1: SCHED_FIFO)" "$pol" '(^| )1 '
assert_match "perf: samples lost" "$(grep 'lost (rings full)' "$T/cs.err")" ' 0 lost \(rings full\)'
total=$(folded_total "$T/pf.folded")
assert_window_samples "perf: samples of 4 s at 999 Hz" "$total" 999 4 2 95 101

# --realtime=0: normal priority, as asked
: >"$T/cs.err"
"$CSAMPLER" --backend=perf --realtime=0 -v -F 999 -d 2 -o "$T/pf0.folded" -p "$pid" 2>"$T/cs.err" &
cs=$!
wait_sampling "$cs"
pol=$(policies "$cs")
wait "$cs"
st=$?
assert_eq "perf --realtime=0: exit status: $(tail -n 3 "$T/cs.err")" "$st" 0
assert_eq "perf --realtime=0: csampler's threads' policies (0: SCHED_OTHER)" "$pol" "0 "
exit 0
