#!/bin/sh
# top_tmux: --top driven in an 80x24 tmux pane shows the hot fixture's
# functions with self and total shares and seconds (leaf_a within 3 seconds
# of its first screen); the keys work: t/s sort by total/self, l shows
# source lines, p freezes the rows while sampling goes on, r empties the
# window, n shows full C++ names instead of shortened ones, ? lists the
# keys (r among them) in place of the rows, T a row per thread; a line
# wider than the pane ends
# in "..."; the header says the CPUs the threads kept busy; 'q' quits with
# status 0 and Ctrl-C does too, each leaving the target running and
# untraced.
. "$TESTS_SRCDIR/lib.sh"
need_root
need_cmd tmux

SOCK=csampler-test-$$
# tmux [ARGS]: our own server (socket), no user configuration.
tm() { env -u TMUX tmux -L "$SOCK" -f /dev/null "$@"; }
trap 'tm kill-server 2>/dev/null; cleanup' EXIT

start_fixture hot
PID=$FIXTURE_PID

# top_session NAME: start csampler --top -p PID in an 80x24 pane; its exit
# status goes to $T/NAME.status.
top_session() {
	tm new-session -d -s "$1" -x 80 -y 24 \
		"TERM=screen '$CSAMPLER' --top -p ${2:-$PID} 2>'$T/$1.err'; echo \$? >'$T/$1.status'; sleep 60" ||
		harness "cannot start tmux"
}
screen_of() { tm capture-pane -p -t "$1"; }

# wait_screen NAME ERE TENTHS: wait until the pane shows a line matching ERE.
wait_screen() {
	local i
	for i in $(seq 1 "$3"); do
		screen_of "$1" | grep -Eq -- "$2" && return 0
		sleep 0.1
	done
	return 1
}

# wait_status NAME: wait for csampler in session NAME to exit; prints its status.
wait_status() {
	local i
	for i in $(seq 1 100); do
		[ -s "$T/$1.status" ] && { cat "$T/$1.status"; return 0; }
		sleep 0.1
	done
	fail "csampler --top did not exit (screen: $(screen_of "$1"))"
}

ROW='^ +[0-9]+\.[0-9] +[0-9]+\.[0-9] +[0-9]+\.[0-9]{2} +[0-9]+\.[0-9]{2}  '

# 1. The screen, then 'q'.
top_session one
wait_screen one "^csampler --top  pid $PID  " 100 ||
	fail "no --top screen (screen: $(screen_of one); stderr: $(cat "$T/one.err" 2>/dev/null))"
# (10 s: in CI's sanitizer stage the fixture had no CPU in the first 3)
wait_screen one "${ROW}leaf_a\$" 100 || fail "leaf_a not shown within 10 s: $(screen_of one)"
wait_screen one "${ROW}leaf_b\$" 20 || fail "leaf_b not shown: $(screen_of one)"
screen=$(screen_of one)
note "screen:"; printf '%s\n' "$screen" | sed 's/^/#   /'
assert_match "header" "$screen" "threads 1  [0-9]\.[0-9]{2} CPUs busy \([0-9.]+ samples/s at 99 Hz\)  window [0-9]+s  samples [0-9]+"
assert_match "column titles" "$screen" '^  SELF%  TOTAL%   SELF s  TOTAL s  FUNCTION$'
# The callers of the leaves are there with their total share. work_round's
# own code (it shuffles the order of its calls) is a few instructions per
# round, so its self share is small but may be more than zero: one sample
# of the first screen's ten (under ASan, 10 samples a second) is 10%.
assert_match "work_round row" "$screen" '^ +([0-9]|1[0-9])\.[0-9] +([5-9][0-9]|100)\.[0-9] +[0-9.]+ +[0-9.]+  work_round$'
# Rows are sorted by self time: the hottest is a leaf (leaf_a has 50% of the
# CPU, but one second of samples may rank it second to leaf_b's 30%).
first=$(printf '%s\n' "$screen" | grep -E -- "$ROW" | head -1 | awk '{print $NF}')
case "$first" in leaf_a|leaf_b|leaf_c) ;; *) fail "hottest row is '$first', not a leaf" ;; esac
lines=$(printf '%s\n' "$screen" | wc -l)
[ "$lines" -le 24 ] || fail "the screen has $lines lines in a 24-line pane"

assert_match "keys" "$screen" 'sorted by self  q quit  s/t sort  l lines  n full names  p pause  \? keys$'

# the keys: t sorts by total (the thread's root has it all), s by self again
tm send-keys -t one t
wait_screen one 'sorted by total' 20 || fail "'t' did not sort by total: $(screen_of one)"
first=$(screen_of one | grep -E -- "$ROW" | head -1)
assert_match "first row by total" "$first" '^ +[0-9.]+ +(99\.[0-9]|100\.0) '
tm send-keys -t one s
wait_screen one 'sorted by self' 20 || fail "'s' did not sort by self: $(screen_of one)"
# l: source lines of the leaves
tm send-keys -t one l
wait_screen one 'SOURCE LINE$' 20 || fail "'l' did not switch to source lines: $(screen_of one)"
wait_screen one "${ROW}hot\.c:[0-9]+ in leaf_[abc]\$" 20 || fail "no source line rows: $(screen_of one)"
tm send-keys -t one l
wait_screen one 'FUNCTION$' 20 || fail "'l' did not switch back: $(screen_of one)"
# p: the rows stay frozen while paused (the fixture's shares move each second)
tm send-keys -t one p
wait_screen one '^PAUSED' 20 || fail "'p' did not pause: $(screen_of one)"
rows1=$(screen_of one | grep -E -- "$ROW")
sleep 2.5
rows2=$(screen_of one | grep -E -- "$ROW")
assert_eq "rows while paused" "$rows2" "$rows1"
tm send-keys -t one p
wait_screen one 'sorted by self  q quit' 20 || fail "'p' did not resume: $(screen_of one)"
# r: an empty window, filled again: "(collecting samples)" for its first
# second, or, where the screen was not caught in that second (a loaded
# machine), a window shorter than before the reset
# (the header a pause froze is redrawn at the next second: wait for a
# window of 3 s or more, which a loaded machine may show late)
win_secs() { screen_of one | sed -n 's/.*  window \([0-9]*\)s  samples.*/\1/p'; }
wait_screen one '  window ([3-9]|[1-9][0-9])s  samples' 100 ||
	fail "the window before the reset is $(win_secs) s: $(screen_of one)"
before=$(win_secs)
tm send-keys -t one r
reset=no
for i in $(seq 1 30); do
	screen_of one | grep -Eq '\(collecting samples\)' && { reset=yes; break; }
	now=$(win_secs)
	[ -n "$now" ] && [ "$now" -lt "$before" ] && { reset=yes; break; }
	sleep 0.1
done
[ "$reset" = yes ] || fail "'r' did not empty the window (${before} s before): $(screen_of one)"
wait_screen one "${ROW}leaf_a\$" 30 || fail "no leaf_a after the reset: $(screen_of one)"

# 'T': a row per thread (the fixture's one: all its samples), then back
tm send-keys -t one T
wait_screen one 'THREAD$' 20 || fail "'T' did not switch to threads: $(screen_of one)"
wait_screen one "^ +(99\.[0-9]|100\.0) +(99\.[0-9]|100\.0) +[0-9.]+ +[0-9.]+  hot-$PID\$" 30 ||
	fail "no row for the thread hot-$PID: $(screen_of one)"
tm send-keys -t one T
wait_screen one 'FUNCTION$' 20 || fail "a second 'T' did not switch back: $(screen_of one)"

# '?' lists the keys in place of the rows; again, the rows come back
tm send-keys -t one '?'
wait_screen one '^  q        quit \(csampler detaches' 20 || fail "'?' did not list the keys: $(screen_of one)"
screen_of one | grep -Eq "${ROW}" && fail "'?' left rows on the screen: $(screen_of one)"
tm send-keys -t one '?'
wait_screen one "${ROW}leaf_[abc]\$" 30 || fail "a second '?' did not bring the rows back: $(screen_of one)"
# a pane narrower than a line: the line is cut with "..." at its end
tm resize-window -t one -x 30
wait_screen one '^csampler --top  pid [0-9]+ .{1,13}\.\.\.$' 20 ||
	fail "a line cut at 30 columns does not end in '...': $(screen_of one)"
tm resize-window -t one -x 80

tm send-keys -t one q
assert_eq "exit status after q" "$(wait_status one)" 0
assert_untraced_running "$PID"
kill -0 "$PID" 2>/dev/null || fail "the fixture died"
grep -q '^csampler: [0-9]* samples in ' "$T/one.err" || fail "no summary: $(cat "$T/one.err")"

# 2. Ctrl-C quits the same way.
top_session two
wait_screen two "${ROW}leaf_a\$" 100 || fail "second session shows no leaf_a: $(screen_of two)"
tm send-keys -t two C-c
assert_eq "exit status after Ctrl-C" "$(wait_status two)" 0
assert_untraced_running "$PID"
kill -0 "$PID" 2>/dev/null || fail "the fixture died"

# 3. C++ names shortened, and in full with n
[ -x "$PROGS/cxxtpl" ] || skip "cxxtpl not built (no g++): the C fixture checked, C++ names not"
start_fixture cxxtpl
top_session three "$FIXTURE_PID"
wait_screen three "${ROW}ns::Type<\.\.\.>::method\$" 50 ||
	fail "no shortened ns::Type<...>::method row: $(screen_of three)"
tm send-keys -t three n
wait_screen three "${ROW}ns::Type<int>::method\(int\)\$" 20 ||
	fail "'n' did not show the full name: $(screen_of three)"
tm send-keys -t three q
assert_eq "exit status after q (cxxtpl)" "$(wait_status three)" 0
assert_untraced_running "$FIXTURE_PID"
exit 0
