#!/bin/sh
# sampler_no_alloc: after warm-up, a tick allocates nothing, thread churn
# included: libc's malloc, calloc and realloc are probed (perf uprobes) in
# csampler while it samples the churn fixture (threads created and joined
# without end), with call chains; no allocation may have
# sampler_tick_locked (the tick proper, never inlined) in its chain. The probes do see csampler allocate: its
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
counts=$(awk '
	/^ *probe_libc:/ { n++; inside = 0; next }
	/sampler_tick_locked/ { if (!inside) tick++; inside = 1 }
	/build_profile|symbolizer_|write_output/ { later = 1 }
	END { printf "%d %d %d\n", n, tick, later }' "$T/alloc.txt")
set -- $counts
note "$1 allocations after the warm-up, $2 in a tick ($(grep -c . "$T/alloc.txt") lines of chains)"
[ "$1" -gt 100 ] || harness "only $1 allocations seen: the probes or the call chains do not work"
[ "$3" = 1 ] || harness "no call chain reaches csampler's symbolization: the chains are too short to tell"
if [ "$2" != 0 ]; then
	awk 'function done() { if (!shown && chain ~ /sampler_tick_locked/) { print chain; shown = 1; exit } chain = "" }
		/^ *probe_libc:/ { done(); next } { chain = chain " <- " $NF } END { done() }' \
		"$T/alloc.txt" >"$T/first.txt"
	fail "$2 allocations inside a tick, e.g.:$(cut -c1-400 "$T/first.txt")"
fi
exit 0
