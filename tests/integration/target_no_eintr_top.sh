#!/bin/sh
# target_no_eintr_top: no blocked thread of the blockers fixture sees EINTR
# because of csampler --top (in a tmux pane) quit with 'q', in three shapes
# (long waits; 100 us of work then a 3 ms wait; the same beside a thread
# that forks every 0.5 ms: target_no_eintr_fork); every thread is
# untraced and running afterwards.
TEST_TIMEOUT=120
. "$TESTS_SRCDIR/lib.sh"
need_root
need_cmd tmux
. "$TESTS_SRCDIR/blockers_lib.sh"

SOCK=csampler-test-$$
tm() { env -u TMUX tmux -L "$SOCK" -f /dev/null "$@"; }
trap 'tm kill-server 2>/dev/null; cleanup' EXIT


# top_quit: --top in a tmux pane, quit with 'q' once it shows the spinner.
top_quit() {
	local i
	rm -f "$T/top.status"
	tm new-session -d -s top -x 100 -y 30 \
		"TERM=screen '$CSAMPLER' --top -p $FIXTURE_PID 2>'$T/top.err'; echo \$? >'$T/top.status'; sleep 30" ||
		harness "cannot start tmux"
	for i in $(seq 1 50); do
		tm capture-pane -p -t top | grep -q 'spin_forever' && break
		sleep 0.1
	done
	tm send-keys -t top q
	for i in $(seq 1 100); do
		[ -s "$T/top.status" ] && break
		sleep 0.1
	done
	assert_eq "--top quit: status" "$(cat "$T/top.status" 2>/dev/null)" 0
	tm kill-session -t top 2>/dev/null
}

for shape in "0 200" "100 3" "100 3 500"; do
	start_fixture blockers 900 $shape
	check_clean "before profiling ($shape)"
	for rep in 1 2; do
		top_quit
		check_clean "--top quit, run $rep ($shape)"
	done
	kill -TERM "$FIXTURE_PID"
	wait "$FIXTURE_PID"
	assert_eq "fixture status ($shape: 3 = it saw EINTR)" "$?" 0
done
exit 0
