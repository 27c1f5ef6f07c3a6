#!/bin/sh
# target_no_eintr_fork: a process whose thread "forker" forks a child every
# 0.5 ms (each exits at once, reaped with WNOHANG), beside threads blocked
# in each call of the blockers fixture (100 us of work, 3 ms waits), sees
# no EINTR because of csampler in any mode (on-CPU at 999 and 99 Hz,
# --idle, per-sample attaching, --dump; --children at the end) and by any way out (the duration,
# an output error, SIGINT, SIGTERM, SIGHUP; SIGKILL within its documented
# window; --top's quit: target_no_eintr_top). A child's
# SIGCHLD, which the kernel drops for a process nobody traces, is queued
# while the forking thread is traced, and one that comes while it is
# stopped wakes another thread, which returned EINTR when the forking one
# took the signal first (1 to 12 in 3 s at 999 Hz; 77 to 278 with
# --attach-mode=per-sample, which has nothing to catch it with). So a
# thread with children is never stopped: it is let go, and its samples are
# counted without a stack, "[not stopped: it has child processes]", its
# CPU the kernel's; a traced one is let go at its fork, before the child
# runs (a forker that waits for each child at once, below). -v says so;
# --dump reads it in place or says why not.
TEST_TIMEOUT=300
. "$TESTS_SRCDIR/lib.sh"
need_root

. "$TESTS_SRCDIR/blockers_lib.sh"

PLACE='\[not stopped: it has child processes\]'
start_fixture blockers 900 100 3 500
FORKER=$(thread_named forker) || harness "no forker thread in blockers"
sleep 0.3
check_clean "before profiling"

forker_cpu() { cut -d' ' -f1 "/proc/$FIXTURE_PID/task/$FORKER/schedstat"; }
# the least CPU the forker had in any 2 s of the bracket W0..W1 (ns of
# wall time), in samples' worth at HZ: its schedstat every 0.1 s (in
# $T/forker.trace), the interval from each reading to the last within 2 s
# of it, for the readings the sampled 2 s can start at (so one of them
# lies inside the 2 s sampled, whatever the host did to the forker)
forker_least_2s() {
	awk -v w0="$1" -v w1="$2" -v hz="$3" 'NF == 2 { n++; t[n] = $1; c[n] = $2 }
		END { m = -1
			for (i = 1; i <= n; i++) {
				if (t[i] < w0 || t[i] > w1 - 1.8e9) continue
				j = i
				while (j < n && t[j + 1] - t[i] <= 2e9) j++
				if (m < 0 || c[j] - c[i] < m) m = c[j] - c[i]
			}
			printf "%.0f\n", (m < 0) ? 0 : m / 1e9 * hz }' "$T/forker.trace"
}

for args in "-F 999" "-F 99" "--idle -F 999" "--attach-mode=per-sample -F 999"; do
	# (the bracket opens once csampler samples: an attach slowed by a
	# loaded host or a sanitizer build is outside it)
	CS_STATUS=0
	# shellcheck disable=SC2086
	start_sampling_csampler -v $args --threads -d 2 -o "$T/out.folded" -p "$FIXTURE_PID"
	c0=$(forker_cpu) w0=$(date +%s%N)
	cpu_trace_start "/proc/$FIXTURE_PID/task/$FORKER/schedstat" "$T/forker.trace"
	wait "$BG_CSAMPLER" || CS_STATUS=$?
	c1=$(forker_cpu) w1=$(date +%s%N)
	cpu_trace_stop
	[ "$CS_STATUS" = 124 ] && fail "csampler timed out ($args): $(cat "$T/cs.err")"
	assert_eq "status ($args): $(tail -n 3 "$T/cs.err")" "$CS_STATUS" 0
	check_clean "-d 2 $args"
	assert_folded_has "$T/out.folded" "^forker-$FORKER;$PLACE [0-9]+\$"
	assert_match "-v's count of samples not stopped ($args)" "$(grep 'periods taken' "$T/cs.err")" \
		' [1-9][0-9]* not stopped \(threads with child processes\), '
	case "$args" in
	*per-sample*) ;;
	*) assert_match "the -v line ($args)" "$(grep 'child processes' "$T/cs.err")" \
		"^csampler: let threads go [0-9]+ times? while they had child processes" ;;
	esac
	case "$args" in
	*--idle*) ;;
	*)	# the forker's samples, all without a stack, are its CPU (the
		# kernel's account of the 2 s sampled): at most what its CPU in
		# the bracket (the run, from its first sample to after the exit)
		# is worth, 3 standard errors allowed, and at least 60% of the
		# least it had in any 2 s of the bracket (the sanitizer build's
		# attach and exit are slower: 55 for 94 once; a share of the
		# bracket by wall time was not enough under ASAN on a loaded
		# host, where the forker's CPU was not even: 19 for a bound of 20)
		hz=${args##*-F }
		got=$(awk -v re="^forker-$FORKER;" '$0 ~ re { n += $NF } END { print n + 0 }' "$T/out.folded")
		want=$(awk -v c="$((c1 - c0))" -v hz="$hz" 'BEGIN { printf "%.0f\n", c / 1e9 * hz }')
		# (a CPU worth fewer than 8 samples cannot be judged: CI's mawk
		# stage at load 10 gave the forker 74 ms in the -F 99 bracket;
		# the run's other checks stand)
		if [ "$want" -lt 8 ]; then
			note "the forker's samples ($args): its $((c1 - c0)) ns of CPU are too little to judge $got by"
			continue
		fi
		se=$(awk -v w="$want" "$AWK_ROOT"' BEGIN { printf "%.0f\n", 3 * root(w) + 1 }')
		least=$(forker_least_2s "$w0" "$w1" "$hz")
		assert_within "the forker's samples ($args; its CPU in the bracket is worth $want, in its least 2 s $least)" \
			"$got" "$(awk -v l="$least" 'BEGIN { printf "%.0f\n", l * 0.6 }')" \
			$((want + se)) ;;
	esac
done

# --dump: the forker is read where it waits, or said not stopped
run_csampler --dump -p "$FIXTURE_PID"
assert_eq "--dump status" "$CS_STATUS" 0
check_clean "--dump"
awk '/^Thread forker / { cur = 1; next } /^Thread / { cur = 0 }
	cur && (/ in forker / || /not stopped, it has child processes/) { found = 1 }
	END { exit !found }' "$T/cs.out" ||
	fail "--dump: the forker is neither unwound nor said not stopped: $(grep -A2 '^Thread forker' "$T/cs.out")"

# an output error
run_csampler -q -F 999 -d 1 -o "$T/no/such/dir/out.folded" -p "$FIXTURE_PID"
assert_eq "output error status" "$CS_STATUS" 69
check_clean "output error"

# ended by a signal, and last SIGKILL (its documented window)
for sig in INT TERM HUP KILL; do
	start_bg_csampler -F 999
	cs=$BG_CS
	sleep 1.5
	kill -"$sig" "$cs"
	wait_exit "$cs" 30 "csampler after SIG$sig" "$FIXTURE_PID"
	case "$sig" in
	KILL) check_after_kill "SIGKILL of csampler" ;;
	*) assert_eq "status after SIG$sig" "$WAIT_STATUS" 0
	   check_clean "SIG$sig"
	   assert_folded_has "$T/sig.folded" "^$PLACE [0-9]+\$" ;;
	esac
done
kill -TERM "$FIXTURE_PID"
wait "$FIXTURE_PID"
st=$?
[ "$KILL_EINTR" = 0 ] && assert_eq "fixture status (3 = it saw EINTR)" "$st" 0
note "$(grep '^eintr' "$T/blockers.out" | tail -n 1)"

# A thread that forks and waits at once (as system() does) has no child at
# nearly every moment, so csampler seizes it at attach (and again after it
# was loose): it is let go at its next fork, before the child runs, so its
# child's SIGCHLD finds it untraced. Let go only at that SIGCHLD, as
# before, a thread the queued signal woke returned EINTR once in 20
# attaches (2 s, --idle -F 999, two busy loops beside it, a fork every
# 2 ms; the build with fork events: 0 in 80), and the SIGCHLD came for
# csampler in 9 runs of 20 (0 of 20 with them). Here a fork every 20 ms,
# ten at a time, then 250 ms asleep, where csampler traces it again (it
# was loose for 100 ms without a child): so it is let go at a fork about
# once a burst, 4 to 7 times a run, quiet and beside four busy loops (12
# runs each). (Traced again only when seized for a sample, it was caught
# inside the fork that ended its quiet, which the kernel does not report:
# once at a fork in a run at most, and 0 in 3 runs in CI's busiest stage.)
start_fixture blockers 900 100 3 -20000
thread_named forker >/dev/null || harness "no forker thread in blockers"
sleep 0.3
check_clean "before profiling the forker that waits"
at_forks=0
for args in "-F 999" "--idle -F 999" "--idle -F 999"; do
	# shellcheck disable=SC2086
	run_csampler -v $args --threads -d 2 -o "$T/wait.folded" -p "$FIXTURE_PID"
	assert_eq "forker that waits, $args: status: $(tail -n 3 "$T/cs.err")" "$CS_STATUS" 0
	check_clean "forker that waits, $args"
	n=$(awk '/^csampler: let threads go [0-9]+ times? while/ {
		for (i = 2; i + 2 <= NF; i++) if ($i == "at" && $(i + 1) == "a" && $(i + 2) == "fork") print $(i - 1) }' "$T/cs.err")
	at_forks=$((at_forks + ${n:-0}))
done
assert_within "forker that waits: threads let go at a fork in 3 runs (-v)" "$at_forks" 3 1000000
kill -TERM "$FIXTURE_PID"
wait "$FIXTURE_PID"
assert_eq "the fixture whose forker waits: status (3 = it saw EINTR)" "$?" 0

# --children: the forker stays traced (its forks are reported only so), and
# each child's end, reaped by csampler, queues a SIGCHLD for the process:
# reaped with every thread of it running, that signal woke a thread that
# waits, or was found pending by one entering sigtimedwait, and the forker
# took it first (2 to 17 EINTR in 3 s at 999 Hz, in every kind of call).
# The ends are now reaped with the process's threads held, as --idle holds
# them, and at csampler's exit too. Measured (3 s at 999 and 99 Hz, quiet,
# beside two and beside six busy loops): 0 EINTR in 40 runs of 40. The
# bound allows 2 in the two runs here for CI's heavier load (sanitizers,
# load 10 and more), where a build whose exit left stops owed saw 4 and 5.
start_fixture blockers 900 100 3 500
sleep 0.3
check_clean "before profiling with --children"
for args in "-F 999" "--idle -F 999"; do
	# shellcheck disable=SC2086
	run_csampler -v --children $args -d 2 -o "$T/ch.folded" -p "$FIXTURE_PID"
	assert_eq "--children $args status: $(tail -n 3 "$T/cs.err")" "$CS_STATUS" 0
	assert_untraced_running "$FIXTURE_PID"
	# the children were followed (the fixture has 17 threads), and their
	# ends reaped with the fixture's threads held
	seen=$(sed -n 's/.* samples, \([0-9]*\) threads seen,.*/\1/p' "$T/cs.err")
	assert_within "--children $args: threads seen, children included" "${seen:-0}" 25 1000000
	held=$(sed -n 's/^csampler: reaped \([0-9]*\) child process.* stopped .*/\1/p' "$T/cs.err")
	assert_within "--children $args: children reaped with the fixture's threads held" "${held:-0}" 10 1000000
done
sleep 0.05
line=$(grep '^eintr' "$T/blockers.out" | tail -n 1)
assert_eq "--children: odd results ($line)" "$(echo "$line" | awk '{ print $4 }')" 0
assert_within "--children: EINTR in the two runs ($line)" "$(echo "$line" | awk '{ print $2 }')" 0 2
exit 0
