#!/bin/sh
# fault_children_memory: --children on a shell loop that starts about 900
# short-lived processes (sh, cat). Each process's symbolizer loaded libc's
# debug information anew (the debug file is compressed: ~10 MB a process):
# 5.7 GB at 499 Hz (940 MB and 3 s to symbolize 90 samples at 99 Hz). A
# binary's addresses are now looked up where it was loaded first (and once
# per file offset), so csampler stays under 400 MB (about 200 MB), and
# most samples still get a named leaf. And file descriptors: each process
# held its maps file, its root and each binary it mapped for the whole run
# (3000 vfork children held 18288), so with 'ulimit -n 256' the run ran
# out. Now a gone process closes its maps file, and a binary or root many
# processes share is opened once: the same loop under 'ulimit -n 256'
# needs no more, and its samples are named. And a soak: each such process
# at the default rate kept 25-37 KB for good (879 MB for 24,000): a gone
# process with no sample now drops its mappings, buffers and vDSO copy
# (one copy is shared), and at most 32 gone processes keep a symbolizer
# through the build: about 3000 processes (1000 rounds; they had kept 75-110
# MB over the 80 MB csampler needs anyway) stay under 130 MB (92-100 MB on
# a slower host beside the quick group: gone processes are let go later).
# (1,300 rounds of a shell loop: 70 s alone, 215-250 s beside the quick
# group on a slower host, more than 360 s there under the sanitizers)
TEST_TIMEOUT=240
. "$TESTS_SRCDIR/lib.sh"
need_root
need_cmd python3

# peak_rss ROUNDS LIMIT-MB ARGS...: csampler --children ARGS on the loop of
# ROUNDS rounds exits 0 with a peak RSS under LIMIT-MB (with PEAK_NOFILE=N,
# under 'ulimit -n N')
peak_rss() {
	local rounds=$1 limit=$2 status maxrss
	shift 2
	# (AddressSanitizer's shadow and quarantine take several times more)
	ldd "$CSAMPLER" 2>/dev/null | grep -q libasan && limit=$((limit * 5))
	python3 -c '
import resource, subprocess, sys
nofile = int(sys.argv[2])
def limit():
    if nofile:
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
rc = subprocess.call(sys.argv[3:], stdout=subprocess.DEVNULL, stderr=open(sys.argv[1], "w"),
                     preexec_fn=limit)
print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
' "$T/cs.err" "${PEAK_NOFILE:-0}" "$CSAMPLER" -q --children "$@" -- \
		sh -c "for i in \$(seq $rounds); do x=\$(echo \$i | cat | cat); done" >"$T/rusage" ||
		harness "python3 failed"
	read -r status maxrss <"$T/rusage"
	assert_eq "status ($rounds rounds $*)" "$status" 0
	note "$rounds rounds ($*): csampler's peak RSS $((maxrss / 1024)) MB (limit $limit MB)"
	[ "$maxrss" -lt $((limit * 1024)) ] ||
		fail "$rounds rounds: peak RSS $((maxrss / 1024)) MB, expected under $limit MB"
}

# (one run for both: the debug information loaded once, and the
# descriptors under 'ulimit -n 256')
PEAK_NOFILE=256 peak_rss 300 400 -F 499 -o "$T/c.folded"
grep -q 'out of file descriptors\|Too many open files' "$T/cs.err" &&
	fail "ulimit -n 256: ran out of descriptors: $(head -3 "$T/cs.err")"
total=$(folded_total "$T/c.folded")
named=$(awk '{ c = $NF; st = $0; sub(/ [0-9]+$/, "", st); n = split(st, f, ";");
	       if (f[n] !~ /^(0x|\[)/) s += c } END { print s + 0 }' "$T/c.folded")
note "ulimit -n 256: $named of $total samples have a named leaf"
[ "$total" -gt 0 ] || fail "no samples: $(cat "$T/cs.err")"
[ $((named * 2)) -ge "$total" ] || fail "only $named of $total samples have a named leaf: $(head -5 "$T/c.folded")"

# about 3000 processes at the default rate (CSAMPLER_STRESS=light: about
# 900, stress_rounds; CI's sanitizer stage, where the limit is five times
# as loose anyway, took 114 s of CPU for this test)
peak_rss "$(stress_rounds 1000 300)" 130 -o "$T/soak.folded"
assert_folded_has "$T/soak.folded" ';(main|__libc_start_call_main);'

exit 0
