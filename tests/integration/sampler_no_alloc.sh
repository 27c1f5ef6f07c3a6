#!/bin/sh
# sampler_no_alloc: after warm-up, a tick allocates nothing, thread churn
# included: libc's malloc, calloc and realloc are probed (perf uprobes) in
# csampler while it samples the churn fixture (threads created and joined
# without end), with call chains; no allocation may have
# sampler_tick_locked (the tick proper) in its chain, except the unwinder
# building the table of a code mapping it reaches for the first time (a
# rarely run one, such as ld.so's TLS setup, can first show up after the
# warm-up): those happen at most once per mapping, so they are bounded by
# the fixture's executable mappings. The probes do see csampler allocate: its
# symbolization after sampling does, through frames the chains reach.
# Skips where uprobes are not available, and under AddressSanitizer or
# valgrind, which replace malloc.
. "$TESTS_SRCDIR/lib.sh"
need_root
need_cmd perf
[ -z "${CSAMPLER_WRAPPER:-}" ] || skip "csampler runs under $CSAMPLER_WRAPPER, which replaces malloc"
ldd "$CSAMPLER" | grep -q libasan && skip "AddressSanitizer replaces malloc"
LIBC=$(ldd "$CSAMPLER" | awk '$1 == "libc.so.6" {print $3}')
[ -f "$LIBC" ] || harness "no libc.so.6 in ldd $CSAMPLER"

G=csnoalloc$$
perf probe -q -x "$LIBC" -a "${G}m=malloc" -a "${G}c=calloc" -a "${G}r=realloc" 2>"$T/probe.err" ||
	skip "perf cannot place uprobes on libc: $(tail -1 "$T/probe.err")"
trap 'perf probe -q -d "probe_libc:${G}*" 2>/dev/null; cleanup' EXIT

start_fixture churn 100000000 8
"$CSAMPLER" -q -F 499 -d 5 -o "$T/out.folded" -p "$FIXTURE_PID" 2>"$T/cs.err" &
cs=$!
# past the warm-up (the first threads, the maps, the unwinder's caches)
sleep 1.5
perf record -q -e "probe_libc:${G}m" -e "probe_libc:${G}c" -e "probe_libc:${G}r" \
	--call-graph dwarf,32768 -p "$cs" -o "$T/alloc.data" >"$T/perf.out" 2>&1 ||
	harness "perf record: $(tail -2 "$T/perf.out")"
wait "$cs" || fail "csampler failed: $(cat "$T/cs.err")"
churned=$(folded_count "$T/out.folded" 'short_thread_work')
[ "$churned" -gt 0 ] || fail "no samples of the churning threads: $(head -3 "$T/out.folded")"

perf script -i "$T/alloc.data" -F event,ip,sym 2>/dev/null >"$T/alloc.txt"
code_maps=$(awk '$2 ~ /x/' "/proc/$FIXTURE_PID/maps" | wc -l)
# One line per allocation event: its chain's symbols, innermost first
# (perf prints "ADDR SYM" or "ADDR SYM (inlined)").
awk '
	function done() { if (n) print chain; chain = "" }
	/^ *probe_libc:/ { done(); n++; next }
	NF >= 2 { chain = chain " <- " $2 }
	END { done() }' "$T/alloc.txt" >"$T/chains.txt"
counts=$(awk '
	{ n++ }
	/ sampler_tick_locked/ { if (/ module_build/) build++; else tick++ }
	/ build_profile| symbolizer_| write_output/ { later = 1 }
	END { printf "%d %d %d %d\n", n, tick, build, later }' "$T/chains.txt")
set -- $counts
note "$1 allocations after the warm-up, $2 in a tick, $3 building the unwind table of a newly reached code mapping (the fixture has $code_maps)"
[ "$1" -gt 20 ] || harness "only $1 allocations seen: the probes or the call chains do not work"
[ "$4" = 1 ] || harness "no call chain reaches csampler's symbolization: the chains are too short to tell"
[ "$2" = 0 ] ||
	fail "$2 allocations inside a tick, e.g.:$(grep ' sampler_tick_locked' "$T/chains.txt" | grep -v ' module_build' | head -1 | cut -c1-400)"
# a build allocates libelf's descriptor and section table, the table copy and
# its header: a handful per mapping, never one per tick
[ "$3" -le $((code_maps * 8)) ] ||
	fail "$3 allocations building unwind tables in ticks, more than 8 for each of the $code_maps code mappings: $(grep ' module_build' "$T/chains.txt" | head -1 | cut -c1-400)"
exit 0
