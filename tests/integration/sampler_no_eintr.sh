#!/bin/sh
# sampler_no_eintr: sampling never interrupts a blocked thread. Threads
# blocked in epoll_wait and sigtimedwait (which a ptrace interrupt would end
# with EINTR) see no EINTR while csampler samples at 999 Hz, in the default
# on-CPU mode and in --idle mode, in both attach modes; the spinning thread
# is sampled, the thread that never wakes only in --idle mode.
. "$TESTS_SRCDIR/lib.sh"
need_root

# last_eintr: the fixture's latest "eintr EPOLL SIGWAIT" line.
last_eintr() { grep '^eintr' "$T/epollwait.out" | tail -n 1 | cut -d' ' -f2-; }

for args in "" "--idle" "--attach-mode=per-sample" "--idle --attach-mode=per-sample"; do
	start_fixture epollwait 60
	pid=$FIXTURE_PID
	sleep 0.3
	assert_eq "before profiling ($args)" "$(last_eintr)" "0 0"
	"$CSAMPLER" -q $args --threads -F 999 -d 3 -o "$T/out.folded" -p "$pid" 2>"$T/cs.err" &
	cs=$!
	sleep 2.5
	# read while csampler is still sampling (it detaches at 3 s)
	during=$(last_eintr)
	wait "$cs" || fail "csampler failed ($args): $(cat "$T/cs.err")"
	assert_eq "EINTR seen during sampling ($args)" "$during" "0 0"
	assert_folded_has "$T/out.folded" '^spin-[0-9]+;.*spin_step [0-9]+$'
	case "$args" in
	*--idle*)
		assert_folded_has "$T/out.folded" '^epoll-[0-9]+;'
		assert_folded_has "$T/out.folded" '^sigwait-[0-9]+;' ;;
	*)
		# (the sigwait thread wakes once a second and may be caught running)
		grep -q '^epoll-' "$T/out.folded" && fail "on-CPU mode sampled the blocked epoll thread" ;;
	esac
	note "$args: EINTR after detach: $(last_eintr) (epoll_wait sigtimedwait)"
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null
done
exit 0
