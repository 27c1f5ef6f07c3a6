#!/bin/sh
# sampler_switch_note: the switch into a thread (issue 44, doc/internals.md
# "The switch into a thread"). The kernel charges a thread's CPU from the
# moment it is picked; perf's task clock, and any sampler's timer, from
# when the switch into it is done. csampler reads each stopped thread's
# task clock beside its schedstat (sampling/sampler_switch.c), says the
# span in -v's line, and puts it where the threads arrived (the stops of
# threads not running at the tick: at a wait's exit, its voluntary
# switches' share; elsewhere, its preemptions'); a note says the part
# left spread over their stacks when it is over 5% of the threads' CPU.
# pingpong keeps both clocks per thread itself ("thread NAME CPU
# TASK-CLOCK"), csampler's stops included: csampler's span with its stops
# must match it (on this PVM guest, 3-4% for the epoll pair quiet, 3-37%
# beside two busy loops; 4.5% and 6.6% for the napper), within 1.5 points
# and a tenth of it. The note shows exactly when its own figure is over 5;
# the default backend puts most of the epoll pair's span where it
# arrived; and each epoll phase stays within the larger of 3 points and
# the part left spread (plus 3 standard errors) of its own CPU clock's
# share (spread, a run at 37% put the client's read 11.0 points short, the
# server's wait 7.9; placed, every phase within 2.9 at 17-35%), and so
# does the napper's beside the loops (found waiting at most ticks, it was
# never stopped there: its span, 7-8%, spread and its sleep 7.1-8.9
# points short; one in four of those stopped only for where it arrives,
# 1.1-3.1, with the span all placed). Runs:
# epoll as the host is, epoll and nap beside two busy loops of the test's,
# and epoll there again with --backend=perf (its threads' task clocks read
# while they run: within a scheduler tick each; its span put where the
# threads arrived, the stacks of their switches out:
# perf_sampler_arrivals.c; spread before, the client's read and write
# 3.7 points off beside the loops, 2.0 at most placed).
TEST_TIMEOUT=200
. "$TESTS_SRCDIR/lib.sh"
need_root

DIAG_RE="switch-in span ([0-9.]+) s of ([0-9.]+) s run \\(([0-9.]+) s with csampler's stops, ([0-9.]+) s put where they arrived\\) on ([0-9]+) threads"
# --backend=perf: no stops; its threads' task clocks open with their own
# clocks (after a few samples of each), so the window starts a little
# later; the span it puts where they arrived
PERF_DIAG_RE="switch-in span ([0-9.]+) s of ([0-9.]+) s run on the threads' own clocks \\(([0-9.]+) s put where they arrived"
NOTE_RE='^csampler: note: [0-9.]+% of the threads. CPU was the switch onto a CPU'

# steal_ticks: the time this guest's CPUs were stolen by its host, in
# clock ticks (/proc/stat)
steal_ticks() { awk '$1 == "cpu" { print $9 + 0; exit }' /proc/stat; }

# check_span MODE LABEL [ARGS...]: pingpong MODE for 4 s, attached at 999 Hz
# (csampler ARGS) from before its start to its end
check_span() {
	local mode=$1 label=$2 F="$T/$1-$2.folded" line in run all n share with fixture tol steal0 steal1 stolen
	shift 2
	start_fixture pingpong "$mode" 4 wait
	start_sampling_csampler -v -F 999 -d 30 -o "$F" -p "$FIXTURE_PID" "$@"
	steal0=$(steal_ticks)
	kill -USR2 "$FIXTURE_PID"
	CS_STATUS=0
	wait "$BG_CSAMPLER" || CS_STATUS=$?
	steal1=$(steal_ticks)
	assert_eq "$mode ($label): exit status ($(cat "$T/cs.err"))" "$CS_STATUS" 0
	grep -q '^total ' "$T/pingpong.out" || fail "$mode ($label): no account: $(cat "$T/pingpong.out")"
	# (its threads' two clocks: without them the span below would read -1)
	grep -q '^thread ' "$T/pingpong.out" || fail "$mode ($label): no thread clocks: $(cat "$T/pingpong.out")"
	if [ "$label" = perf ]; then
		line=$(grep -Eo "$PERF_DIAG_RE" "$T/cs.err") ||
			fail "$mode ($label): no switch-in span in -v's line: $(cat "$T/cs.err")"
		in=$(echo "$line" | sed -E "s/$PERF_DIAG_RE/\\1/")
		run=$(echo "$line" | sed -E "s/$PERF_DIAG_RE/\\2/")
		all=$in
		placed=$(echo "$line" | sed -E "s/$PERF_DIAG_RE/\\3/")
	else
		line=$(grep -Eo "$DIAG_RE" "$T/cs.err") ||
			fail "$mode ($label): no switch-in span in -v's line: $(cat "$T/cs.err")"
		in=$(echo "$line" | sed -E "s/$DIAG_RE/\\1/")
		run=$(echo "$line" | sed -E "s/$DIAG_RE/\\2/")
		all=$(echo "$line" | sed -E "s/$DIAG_RE/\\3/")
		placed=$(echo "$line" | sed -E "s/$DIAG_RE/\\4/")
		n=$(echo "$line" | sed -E "s/$DIAG_RE/\\5/")
		want=2; [ "$mode" = nap ] && want=1
		[ "$n" -ge "$want" ] || fail "$mode ($label): task clocks of $n threads, $want expected: $line"
	fi
	assert_within "$mode ($label): CPU of the threads measured, s" "$run" 0.5 100
	share=$(awk -v a="$in" -v r="$run" 'BEGIN { printf "%.1f\n", 100 * a / r }')
	with=$(awk -v a="$all" -v r="$run" 'BEGIN { printf "%.1f\n", 100 * a / r }')
	spread=$(awk -v a="$in" -v p="$placed" -v r="$run" 'BEGIN { printf "%.1f\n", (a > p) ? 100 * (a - p) / r : 0 }')
	fixture=$(awk '$1 == "thread" { c += $3; r += $4 } END { printf "%.1f\n", (c > 0) ? 100 * (c - r) / c : -1 }' "$T/pingpong.out")
	note "$mode ($label): span $share% of the CPU ($with% with csampler's stops; the fixture's own $fixture%), $spread% not put where the threads arrived"
	# a span is never under 0: where the fixture's task clock ran ahead of
	# its CPU clock (steal time on a guest: the CPU clock leaves it out,
	# the task clock keeps it; a full check read -1.8% for the napper beside
	# the loops, and csampler's own reads of the same clocks 0.0), the
	# span is 0 and csampler's (clamped so) is judged against that
	if awk -v f="$fixture" 'BEGIN { exit !(f < 0) }'; then
		note "$mode ($label): the fixture's task clock ran $(awk -v f="$fixture" 'BEGIN { print -f }')% ahead of its CPU clock (steal $(steal_ticks) ticks since boot): span 0"
		fixture=0.0
	fi
	# (time stolen from this guest by its host is out of the fixture's CPU
	# clock and in its task clock, so its own span is short by what was
	# stolen from its threads: at most all the guest's, counted here in
	# its share of their CPU. CI once read the epoll pair's own span 1.7%
	# and csampler's 4.5%, where it is 3.9-4.3% on the quiet machine, on
	# a day its groups ran a fifth slower; steal was not read then.)
	stolen=$(awk -v a="$steal0" -v b="$steal1" -v r="$run" -v hz="$(getconf CLK_TCK)" \
		'BEGIN { printf "%.1f\n", (r > 0 && b > a) ? 100 * (b - a) / hz / r : 0 }')
	[ "$stolen" = 0.0 ] || note "$mode ($label): $stolen% of the threads' CPU stolen by the host during the run (the guest's steal time, all CPUs)"
	tol=$(awk -v f="$fixture" -v s="$stolen" 'BEGIN { print 1.5 + f / 10 + s }')
	assert_within "$mode ($label): switch-in span with csampler's stops, % (the fixture's own $fixture%)" \
		"$with" "$(awk -v f="$fixture" -v t="$tol" 'BEGIN { print f - t }')" \
		"$(awk -v f="$fixture" -v t="$tol" 'BEGIN { print f + t }')"
	if awk -v s="$spread" 'BEGIN { exit !(s > 5) }'; then
		grep -Eq "$NOTE_RE" "$T/cs.err" || fail "$mode ($label): span $spread% spread, no note: $(cat "$T/cs.err")"
		note "$mode ($label): the note: $(grep -E "$NOTE_RE" "$T/cs.err" | cut -c1-90)"
	else
		grep -Eq "$NOTE_RE" "$T/cs.err" && fail "$mode ($label): span $spread% spread, a note: $(cat "$T/cs.err")"
	fi
	if awk -v s="$share" 'BEGIN { exit !(s > 5) }'; then
		# at least half of the span put where the threads arrived; and
		# no more than the span by over the span's own tolerance, in
		# points of the threads' CPU: the span is told as it grows, and
		# a thread's span can shrink after a part of it was told (its
		# arrivals' share of our own stops grows), so the parts told
		# can run ahead of the span read at the end (CI read 105.9% of
		# the span once, about 0.4 points)
		assert_within "$mode ($label): switch-in span put where the threads arrived, % of the span" \
			"$(awk -v a="$in" -v p="$placed" 'BEGIN { printf "%.1f\n", 100 * p / a }')" 50 1000
		assert_within "$mode ($label): span put where the threads arrived, % of the CPU (span $share% +- $tol)" \
			"$(awk -v p="$placed" -v r="$run" 'BEGIN { printf "%.1f\n", 100 * p / r }')" 0 \
			"$(awk -v s="$share" -v t="$tol" 'BEGIN { print s + t }')"
	fi
	# each phase within the larger of 3 points and the span left spread,
	# of its own CPU clock's share
	local total name c got tol2 bound
	total=$(folded_total "$F")
	[ "$total" -gt 0 ] || fail "$mode ($label): no samples"
	bound=$(awk -v s="$spread" 'BEGIN { print (s > 3) ? s : 3 }')
	awk '$1 == "phase" { n++; name[n] = $2; cpu[n] = $3 } $1 == "total" { all = $2 }
		END { for (i = 1; i <= n; i++) printf "%s %.1f\n", name[i], 100 * cpu[i] / all }' \
		"$T/pingpong.out" >"$T/phases.want"
	while read -r name c; do
		got=$(pct "$(folded_count "$F" ";$name(;|\$)")" "$total")
		tol2=$(awk -v se="$(share_se 3 "$c" "$total")" -v b="$bound" 'BEGIN { print b + se }')
		assert_within "$mode ($label): $name (own CPU clock $c%, +- $tol2)" "$got" \
			"$(awk -v c="$c" -v t="$tol2" 'BEGIN { print c - t }')" \
			"$(awk -v c="$c" -v t="$tol2" 'BEGIN { print c + t }')"
	done <"$T/phases.want"
	wait "$FIXTURE_PID" 2>/dev/null
}

check_span epoll host
busy_pids=
for i in 1 2; do
	awk 'BEGIN { for (;;) ; }' &
	busy_pids="$busy_pids $!"
done
FIXTURE_PIDS="$FIXTURE_PIDS$busy_pids"
check_span epoll busy
check_span nap busy
# the kernel's samples (root), beside the same loops
if "$CSAMPLER" --backend=perf -F 99 -d 0.1 -o "$T/probe.folded" -- true >/dev/null 2>"$T/probe.err"; then
	check_span epoll perf --backend=perf
else
	note "perf events not permitted here: --backend=perf not checked ($(head -1 "$T/probe.err"))"
fi
kill $busy_pids 2>/dev/null
exit 0
