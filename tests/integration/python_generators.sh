#!/bin/sh
# python_generators: a generator's and a coroutine's frames where the
# interpreter runs them (issue 46), on every CPython present
# (python_each). tests/progs/pygens.py runs consume() (sum over a
# generator, produce, whose every item is work()) and drive() (send into
# a coroutine, coro_outer, that calls coro_inner, that calls work()). In
# every sample in work(), its Python frames from <module> down are
# consume, produce, work or drive, coro_outer, coro_inner, work: the
# generator's frame under its consumer, across the C of sum and of send
# (a loop of their own, 3.11: an entry frame; 3.12+: the loop's own frame
# before it), never left over, cut or out of place. At least 99% of them
# (a sample may stop a frame being set up or torn down); both shapes seen
# from 3.5 on (2.7 has no coroutine).
. "$TESTS_SRCDIR/lib.sh"
need_root
python_each >"$T/pythons"
[ -s "$T/pythons" ] || skip "no CPython (Debian's python3.11, pyenv's, or scripts/sid-root's)"
while read -r label root py; do
	python_file "$root" "$TESTS_SRCDIR/progs/pygens.py"
	run_csampler -F 499 -o "$T/$label.folded" -- chroot "$root" "$py" "$PY_FILE" 1
	assert_eq "$label: exit status" "$CS_STATUS" 0
	# each sample in work(): its Python frames, by the names pygens.py has
	awk '{ c = $NF; sub(/ [0-9]+$/, ""); n = split($0, f, ";"); s = ""
		for (i = 1; i <= n; i++)
			if (f[i] ~ /^(<module>|consume|produce|drive|coro_outer|coro_inner|work)$/)
				s = s (s == "" ? "" : ";") f[i]
		if (s !~ /;work$/) next
		all += c
		if (s == "<module>;consume;produce;work") gen += c
		else if (s == "<module>;drive;coro_outer;coro_inner;work") coro += c
		else { bad += c; if (nbad++ < 3) print "# odd: " s " " c }
	} END { printf "%d %d %d %d\n", all, gen, coro, bad }' "$T/$label.folded" >"$T/shapes"
	grep '^# odd' "$T/shapes"
	read -r all gen coro bad <<EOS
$(tail -n 1 "$T/shapes")
EOS
	note "$label: $all samples in work(): $gen through the generator, $coro through the coroutine, $bad otherwise"
	[ "$all" -gt 0 ] || fail "$label: no sample in work(): $(sort -t' ' -k2 -nr "$T/$label.folded" | head -2)"
	[ $((bad * 100)) -le "$all" ] ||
		fail "$label: $bad of $all samples in work() do not have the generator's or the coroutine's frames in place"
	[ "$gen" -gt 0 ] || fail "$label: no sample through the generator"
	case $label in
	*-2.7) ;;
	*) [ "$coro" -gt 0 ] || fail "$label: no sample through the coroutine" ;;
	esac
done <"$T/pythons"
exit 0
