#!/bin/sh
# write_folded: the folded output of mkprofile's known profile, exact, and the
# same file fed to Debian's flamegraph.pl: totals kept, the hostile thread name
# "a;b\n999 77" and the JIT name "evil;frame\n7 8" forge no line, frame or
# count. Also "-" (stdout) and the --threads / --annotate variants.
. "$TESTS_SRCDIR/lib.sh"

"$PROGS/mkprofile" "$T/p.folded" "$T/p.collapsed" || fail "mkprofile failed"
"$PROGS/mkprofile" -t "$T/t.folded" || fail "mkprofile -t failed"
"$PROGS/mkprofile" -a - >"$T/a.folded" || fail "mkprofile -a - failed"

cat >"$T/want" <<'END'
[truncated];compute;square;add_one 5
main;run_workers;compute;square;add_one 50
start_thread;worker_main;[libc.so.6+0x1234] 7
start_thread;worker_main;interp_loop;LazyCompile:*fib app.js:3;evil:frame7_8 13
start_thread;worker_main;ns::Matrix<double>::multiply(ns::Matrix<double> const&) 30
start_thread;worker_main;std::vector<int, std::allocator<int> >::push_back(int const&) 20
END
cmp "$T/want" "$T/p.folded" || fail "folded output differs: $(diff "$T/want" "$T/p.folded")"
cmp -s "$T/p.folded" "$T/p.collapsed" || fail ".collapsed differs from .folded"

cat >"$T/want" <<'END'
a:b999 77-4245;start_thread;worker_main;[libc.so.6+0x1234] 7
a:b999 77-4245;start_thread;worker_main;interp_loop;LazyCompile:*fib app.js:3;evil:frame7_8 13
app-4242;main;run_workers;compute;square;add_one 50
pool;[truncated];compute;square;add_one 5
worker-1-4243;start_thread;worker_main;ns::Matrix<double>::multiply(ns::Matrix<double> const&) 30
worker-2-4244;start_thread;worker_main;std::vector<int, std::allocator<int> >::push_back(int const&) 20
END
cmp "$T/want" "$T/t.folded" || fail "thread view differs: $(diff "$T/want" "$T/t.folded")"
assert_folded_has "$T/a.folded" '^main;run_workers;compute;square_\[i\];add_one_\[i\] 50$'
assert_folded_has "$T/a.folded" ';interp_loop;LazyCompile:\*fib app\.js:3_\[j\];evil:frame7_8_\[j\] 13$'

# every line is "frames COUNT", the counts add up, no name smuggled a count
for f in p t a; do
	assert_eq "lines of $f.folded" "$(wc -l <"$T/$f.folded" | tr -d ' ')" 6
	assert_eq "total of $f.folded" "$(folded_total "$T/$f.folded")" 125
	grep -Evq '^[^ ;][^;]*(;[^;]+)* [0-9]+$' "$T/$f.folded" && fail "malformed line in $f.folded"
	grep -Eq ' [0-9.]+ [0-9]+$' "$T/$f.folded" && fail "a line of $f.folded ends in two numbers"
done

# Debian's flamegraph.pl reads it: same total, same frames, nothing forged
FLAMEGRAPH_PL=${FLAMEGRAPH_PL:-/usr/share/perl5/Devel/NYTProf/flamegraph.pl}
[ -r "$FLAMEGRAPH_PL" ] || skip "needs flamegraph.pl (libdevel-nytprof-perl)"
need_cmd perl
for f in p t; do
	perl "$FLAMEGRAPH_PL" "$T/$f.folded" >"$T/$f.fg.svg" 2>"$T/fg.err" ||
		fail "flamegraph.pl failed on $f.folded: $(cat "$T/fg.err")"
	[ -s "$T/fg.err" ] && fail "flamegraph.pl complained: $(cat "$T/fg.err")"
	grep -q '<title>all (125 samples, 100%)</title>' "$T/$f.fg.svg" ||
		fail "flamegraph.pl total of $f.folded is not 125: $(grep -o '<title>all[^<]*' "$T/$f.fg.svg")"
done
grep -q '<title>a:b999 77-4245 (20 samples, 16.00%)</title>' "$T/t.fg.svg" ||
	fail "hostile thread frame not 20 samples in flamegraph.pl's graph"
grep -q '<title>evil:frame7_8 (13 samples, 10.40%)</title>' "$T/p.fg.svg" ||
	fail "hostile JIT frame not 13 samples in flamegraph.pl's graph"
grep -q '<title>add_one (50 samples, 40.00%)</title>' "$T/p.fg.svg" ||
	fail "inline leaf add_one not 50 samples in flamegraph.pl's graph"
assert_eq "frames in flamegraph.pl's thread graph" \
	"$(grep -c '<title>.* ([0-9]* samples, [0-9.]*%)</title>' "$T/t.fg.svg")" 27
exit 0
