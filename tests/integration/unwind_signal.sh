#!/bin/sh
# unwind_signal: samples taken inside a signal handler unwind through the
# signal trampoline (__restore_rt) into the interrupted code and on to main:
# main;main_loop;main_spin;__restore_rt;on_alarm;handler_spin.
. "$TESTS_SRCDIR/lib.sh"
need_root

# The trampoline is named __restore_rt only from libc's full symbol table
# (Debian: libc6-dbg); without it, any one frame stands in its place, and
# the test ends in a SKIP saying the name was not checked.
tramp='[^;]+'
need_cmd readelf
libc=$(awk '$NF ~ /\/libc\.so\.6$/ { print $NF; exit }' /proc/self/maps)
if [ -n "$libc" ]; then
	id=$(readelf -nW "$libc" 2>/dev/null | awk '/Build ID:/ { print $NF; exit }')
	if [ -n "$id" ] && [ -f "/usr/lib/debug/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug" ]; then
		tramp='__restore_rt'
	fi
fi
note "trampoline frame expected as /$tramp/"

start_fixture sighandler 60
run_csampler -F 199 -d 4 -o "$T/out.folded" -p "$FIXTURE_PID"
assert_eq "exit status" "$CS_STATUS" 0
F=$T/out.folded
assert_folded_has "$F" "(^|;)main;main_loop;main_spin;$tramp;on_alarm;handler_spin [0-9]+\$"

# every sample in the handler reaches main through the trampoline (the
# alarm may come in main's own calls too: its fflush's write, say)
counts=$(AWK_RE="(^|;)main;([^;]+;)*$tramp;on_alarm(;|\$)" awk '
	{ c = $NF; s = $0; sub(/ [0-9]+$/, "", s)
	  if (s ~ /(^|;)on_alarm(;|$)/) { h += c; if (s ~ ENVIRON["AWK_RE"]) w += c } }
	END { print h + 0, w + 0 }' "$F")
set -- $counts
note "$2 of $1 samples in the handler unwound to main through the trampoline"
[ "$1" -gt 0 ] || fail "no samples in the signal handler: $(head -3 "$F")"
awk -v h="$1" -v w="$2" 'BEGIN { exit !(100 * w >= 99 * h) }' ||
	fail "handler stacks not unwound through the trampoline: $(grep on_alarm "$F" | sort -t' ' -k2 -rn | head -3)"
assert_untraced_running "$FIXTURE_PID"
[ "$tramp" = __restore_rt ] ||
	skip "no debug symbols of libc (Debian libc6-dbg): stacks checked through the trampoline, its name not"
exit 0
