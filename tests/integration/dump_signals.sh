#!/bin/sh
# dump_signals: --dump ended by SIGINT or SIGTERM at any moment, 30 times,
# on the blockers fixture (a thread in each kind of blocking call, 100 us of
# work then a 3 ms wait): the signal is held until the target is let go, so
# csampler is never killed in a stop round (the kernel would let go, as
# they were, threads our interrupt had woken with EINTR: 3 EINTR in 1 of
# 140 such runs), and it exits 0 having printed the snapshot (it died by
# the signal in 158 of 160 runs). After each, the target is untraced and
# running and has seen no EINTR. (CSAMPLER_STRESS=light: 10 times,
# stress_rounds)
TEST_TIMEOUT=180
. "$TESTS_SRCDIR/lib.sh"
need_root
. "$TESTS_SRCDIR/blockers_lib.sh"

comm=$(basename "$CSAMPLER" | cut -c1-15)
# (it outlives the test's longest limit, 3 x 180 s on a loaded host: one of
# 200 s ended under run 27 of a sanitizer run, "no such process")
start_fixture blockers 900 100 3
sleep 0.3
check_clean "before"
i=0
runs=$(stress_rounds 30 10)
while [ $i -lt "$runs" ]; do
	i=$((i + 1))
	sig=INT
	[ $((i % 2)) = 0 ] && sig=TERM
	"$CSAMPLER" --dump -p "$FIXTURE_PID" >"$T/dump.out" 2>"$T/dump.err" &
	cs=$!
	FIXTURE_PIDS="$FIXTURE_PIDS $cs"
	# (once it holds its stop signals, or once it traces the target,
	# whichever it does first: the signal then comes in the attach, the
	# stop round, the detach or the printing; however long csampler takes
	# to start on a loaded machine)
	k=0
	while [ $k -lt 500 ] && kill -0 "$cs" 2>/dev/null; do
		k=$((k + 1))
		# (csampler's own mask, its name and mask from one read of its
		# status: bash's child starts with INT, TERM and CHLD blocked,
		# unblocks them, then runs csampler; the mask read before the
		# exec and the name after it made a SIGTERM kill csampler
		# before it held its signals, twice in CI)
		st=$(cat "/proc/$cs/status" 2>/dev/null)
		blk=$(echo "$st" | sed -n 's/^SigBlk:[[:space:]]*//p')
		[ "$(echo "$st" | sed -n 's/^Name:[[:space:]]*//p')" = "$comm" ] && [ -n "$blk" ] &&
			[ $((0x$blk & 0x4000)) != 0 ] && break
		[ "$(tracer_tgid "$FIXTURE_PID")" = "$cs" ] && break
		sleep 0.01
	done
	kill -"$sig" "$cs" 2>/dev/null
	st=0
	wait "$cs" || st=$?
	assert_eq "--dump ended by SIG$sig, run $i: exit status ($(cat "$T/dump.err"))" "$st" 0
	grep -q "^Thread spin " "$T/dump.out" || fail "--dump ended by SIG$sig, run $i: no snapshot: $(head -3 "$T/dump.out")"
	check_clean "--dump ended by SIG$sig, run $i"
done
note "$(grep '^eintr' "$T/blockers.out" | tail -n 1)"
exit 0
