# lib.sh: helpers for the integration scenarios (tests/integration/*.sh).
#
# Source it first: `. "$TESTS_SRCDIR/lib.sh"`. It gives each test its own
# scratch directory ($T, removed at exit), a whole-test timeout
# (TEST_TIMEOUT seconds, default 120), and kills every fixture it started.
# Exit statuses follow automake: 0 pass, 1 fail, 77 skip, 99 harness error.

set -u

: "${CSAMPLER:?run through make check (CSAMPLER unset)}"
: "${PROGS:?run through make check (PROGS unset)}"
: "${TEST_TIMEOUT:=120}"

TEST_NAME=$(basename "$0" .sh)
TEST_STARTED=$(date +%s%N)
T=$(mktemp -d "${TMPDIR:-/tmp}/csampler-test.$TEST_NAME.XXXXXX") || exit 99
FIXTURE_PIDS=""

# Every process the test starts inherits CSAMPLER_TEST_TAG: a PID is killed
# only while it is still one of ours (tests run side by side and PIDs are
# reused within seconds where pid_max is 32768: a stale PID may be another
# test's csampler by now).
CSAMPLER_TEST_TAG=$T
export CSAMPLER_TEST_TAG
# ours PID: PID is alive and was started by this test (its environment has
# the tag, or, when that cannot be read, as for a process whose main thread
# has exited, this shell is its parent)
ours() {
	tr '\0' '\n' 2>/dev/null <"/proc/$1/environ" | grep -qxF "CSAMPLER_TEST_TAG=$T" ||
		[ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f2)" = "$$" ]
}
# kill_ours SIGNAL PID...: send SIGNAL to each PID that is still ours
kill_ours() {
	local sig=$1 p
	shift
	for p in "$@"; do ours "$p" && kill -"$sig" "$p" 2>/dev/null; done
	return 0
}

cleanup() {
	kill_ours CONT $FIXTURE_PIDS
	kill_ours KILL $FIXTURE_PIDS
	[ -n "${WATCHDOG_PID:-}" ] && kill "$WATCHDOG_PID" 2>/dev/null
	wait 2>/dev/null
	# (scripts/check names the slowest tests from these lines; the CPU is
	# the test's own and its waited-for children's, from times, in this
	# shell: what a group run side by side on a few CPUs pays for it)
	{ times >"$T/times"; } 2>/dev/null
	cpu=$(awk '
		{ for (i = 1; i <= NF; i++) { split($i, p, "m"); s += p[1] * 60 + p[2] } }
		END { printf "%.1f", s }' "$T/times" 2>/dev/null)
	rm -rf "$T" ${PY_ROOT_DIRS:-}
	echo "# $TEST_NAME took $(awk -v a="$TEST_STARTED" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }') s, ${cpu:-?} s of CPU"
}
trap cleanup EXIT
trap 'echo "FAIL: $TEST_NAME interrupted"; exit 99' INT TERM

# The whole test may not take longer than TEST_TIMEOUT seconds of a machine
# that runs nothing else: while the load average is above the CPUs, each
# second counts as CPUs/load of one, up to 3 times as long in all (the
# quick group runs three tests per CPU: on a slower host fault_children,
# 50 s alone, took 409 s of its 400; a hang is still caught, later).
(
	ncpu=$(nproc 2>/dev/null || echo 1)
	left=$((TEST_TIMEOUT * 100)) wall=0
	while [ "$left" -gt 0 ] && [ "$wall" -lt $((TEST_TIMEOUT * 3)) ]; do
		sleep 2
		wall=$((wall + 2))
		read -r load _ </proc/loadavg 2>/dev/null || load=0.00
		# (load x 100 from "7.74": no awk each tick)
		case $load in *.*) l=${load%.*} f=${load#*.}00 ;; *) l=$load f=00 ;; esac
		f=${f%"${f#??}"}
		l=$((l * 100 + ${f#0}))
		if [ "$l" -gt $((ncpu * 100)) ]; then
			left=$((left - 200 * ncpu * 100 / l))
		else
			left=$((left - 200))
		fi
	done
	stretched=""
	[ "$wall" -gt $((TEST_TIMEOUT + 2)) ] && stretched=" ($wall s by the clock: the machine was loaded)"
	echo "FAIL: $TEST_NAME timed out after ${TEST_TIMEOUT}s$stretched" >&2
	kill -TERM $$
) &
WATCHDOG_PID=$!

skip()    { echo "SKIP: $TEST_NAME: $*"; exit 77; }
fail()    { echo "FAIL: $TEST_NAME: $*"; exit 1; }
harness() { echo "ERROR: $TEST_NAME: $*"; exit 99; }
note()    { echo "# $*"; }

# AWK_ROOT: an awk function root(x), the square root, for programs that
# prepend it: busybox's awk (Debian's) has no math functions (sqrt, exp,
# log, ^: "Math support is not compiled in"); Newton's method instead.
AWK_ROOT='function root(x,  r, i) { if (x <= 0) return 0; r = (x > 1) ? x : 1
	for (i = 0; i < 64; i++) r = (r + x / r) / 2; return r }'


# stress_rounds FULL LIGHT: how many times a stress test repeats its race
# (a signal at a random moment, a hang among thousands of processes):
# FULL, or LIGHT where CSAMPLER_STRESS=light (.ci/run's later stages, which
# look for memory errors and other awks: its first stage runs every round,
# and its share of the suite's CPU was a third).
stress_rounds() {
	case "${CSAMPLER_STRESS:-}" in
	light) echo "$2" ;;
	*) echo "$1" ;;
	esac
}

# python_each: the CPython interpreters present, a line each, "LABEL ROOT
# PATH": Debian's python3.11, pyenv's 2.7 and 3.6 to 3.13 (the newest of
# each under $PYENV_ROOT, else ~/.pyenv), and Debian sid's 3.13, 3.14 and
# 3.15 in the root scripts/sid-root makes (scripts/install-deps); the tests
# run each as chroot ROOT PATH (ROOT / for the others). CSAMPLER_PYTHONS,
# where set, keeps only the labels it lists (.ci/run's later stages take
# one interpreter of each way csampler reads frames).
python_each() {
	case " ${CSAMPLER_PYTHONS:-} " in
	"  ") python_present ;;
	*) python_present | while read -r label rest; do
		case " $CSAMPLER_PYTHONS " in *" $label "*) echo "$label $rest" ;; esac
	done ;;
	esac
}
python_present() {
	local v p pyroot sid
	[ -x /usr/bin/python3.11 ] && echo "debian-3.11 / /usr/bin/python3.11"
	pyroot=${PYENV_ROOT:-$HOME/.pyenv}
	for v in 2.7 3.6 3.7 3.8 3.9 3.10 3.11 3.12 3.13; do
		p=$(ls -d "$pyroot"/versions/"$v".*/bin/python"$v" 2>/dev/null | tail -n 1)
		[ -n "$p" ] && [ -x "$p" ] && echo "pyenv-$v / $p"
	done
	sid=${CSAMPLER_SID_ROOT:-/var/cache/csampler/sid}
	for v in 3.13 3.14 3.15; do
		[ -x "$sid/usr/bin/python$v" ] && echo "sid-$v $sid /usr/bin/python$v"
	done
	return 0
}
# python_file ROOT FILE: PY_FILE, FILE's path as the interpreters of ROOT
# see it (a copy in ROOT, removed at the test's end, where ROOT is not /)
python_file() {
	PY_FILE=$2
	[ "$1" = / ] && return 0
	local d="/tmp/csampler-test.$$"
	mkdir -p "$1$d" && cp "$2" "$1$d/" || harness "cannot copy $2 into $1"
	case " ${PY_ROOT_DIRS:-} " in *" $1$d "*) ;; *) PY_ROOT_DIRS="${PY_ROOT_DIRS:-} $1$d" ;; esac
	PY_FILE="$d/$(basename "$2")"
}

# need_root: ptrace of arbitrary processes and seccomp helpers need root.
need_root() { [ "$(id -u)" = 0 ] || skip "needs root (ptrace of unrelated processes)"; }
need_cmd()  { command -v "$1" >/dev/null 2>&1 || skip "needs $1"; }
# need_flamegraph: $FLAMEGRAPH_PL is Brendan Gregg's flamegraph.pl (Debian's
# libdevel-nytprof-perl ships it), with perl to run it, or the test skips.
need_flamegraph() {
	FLAMEGRAPH_PL=${FLAMEGRAPH_PL:-/usr/share/perl5/Devel/NYTProf/flamegraph.pl}
	[ -r "$FLAMEGRAPH_PL" ] || skip "needs flamegraph.pl (Debian libdevel-nytprof-perl)"
	need_cmd perl
}
# need_go: $GO is the go command (or the test skips); go then works offline
# in the scratch directory and leaves nothing in $HOME. Its build cache is
# the build tree's tests/go-cache, shared by the tests (go locks it): one
# each, Go's runtime and packages were compiled again by every build_go,
# 110 compiles and 43 s of CPU in the quick group.
need_go() {
	[ -n "${GO:-}" ] && [ -x "$GO" ] || GO=$(command -v go) || skip "needs go (golang-go)"
	HOME=$T/home GOCACHE=${TESTS_BUILDDIR:-$T}/go-cache GOPATH=$T/gopath GOFLAGS= \
		GOTOOLCHAIN=local GOPROXY=off GOTELEMETRY=off
	export HOME GOCACHE GOPATH GOFLAGS GOTOOLCHAIN GOPROXY GOTELEMETRY
	mkdir -p "$HOME"
}
# build_go NAME [GO BUILD FLAGS...]: tests/progs/NAME.go built as $T/NAME
# (after need_go), without a module; the build's errors make a harness
# failure.
build_go() {
	local name=$1; shift
	cp "$TESTS_SRCDIR/progs/$name.go" "$T/" || harness "no $name.go"
	(cd "$T" && GO111MODULE=off "$GO" build "$@" -o "$name" "$name.go") >"$T/build.err" 2>&1 ||
		harness "go build $*: $(cat "$T/build.err")"
}

# start_fixture NAME [ARGS...]: start $PROGS/NAME in the background with its
# stdout in $T/NAME.out; wait for its "ready PID" line; sets FIXTURE_PID.
# With CSAMPLER_FIXTURE_NICE (scripts/check's quick group, whose tests do
# not judge shares) it runs at that nice value.
start_fixture() {
	local name=$1; shift
	[ -x "$PROGS/$name" ] || harness "fixture $name not built"
	# (emptied here, not only by the child's redirection: a test's second
	# fixture of a name, its child not yet run on a busy host, had the
	# first one's "ready" read as its own, and no threads yet)
	: >"$T/$name.out"
	${CSAMPLER_FIXTURE_NICE:+nice -n "$CSAMPLER_FIXTURE_NICE"} "$PROGS/$name" "$@" >"$T/$name.out" 2>"$T/$name.err" &
	FIXTURE_PID=$!
	FIXTURE_PIDS="$FIXTURE_PIDS $FIXTURE_PID"
	local i
	for i in $(seq 1 200); do
		grep -q '^ready' "$T/$name.out" 2>/dev/null && return 0
		kill -0 "$FIXTURE_PID" 2>/dev/null || harness "fixture $name died: $(cat "$T/$name.err")"
		sleep 0.05
	done
	harness "fixture $name never said ready"
}

# start_named_target: a sleeping process with a known, unique command name
# (comm is cut at 15 bytes), for completions to offer: sets NAME and TARGET.
start_named_target() {
	NAME=csq$$
	cp /bin/sleep "$T/$NAME" || harness "cannot copy sleep"
	"$T/$NAME" 300 &
	TARGET=$!
	FIXTURE_PIDS="$FIXTURE_PIDS $TARGET"
	wait_state "$TARGET" "SR"
}

# check_completions SHELL COMPLETE: what every shell's completion offers, by
# COMPLETE "LINE" (writes the candidates to $T/reply): options, formats for
# -f, PIDs for -p (start_named_target's), the program after "--".
check_completions() {
	local sh=$1 complete=$2
	$complete "csampler --dur"
	assert_eq "$sh: csampler --dur" "$(cat "$T/reply")" "--duration"
	$complete "csampler -f "
	assert_eq "$sh: csampler -f" "$(tr '\n' ' ' <"$T/reply")" "folded pprof speedscope svg text "
	$complete "csampler -p "
	grep -qx "$TARGET" "$T/reply" || fail "$sh: '-p ' did not offer $TARGET"
	$complete "csampler -o x.svg -- ech"
	grep -qx echo "$T/reply" || fail "$sh: '-- ech' did not offer echo"
}

# option_value OPT: a value csampler accepts for OPT (nothing for a flag).
option_value() {
	case "$1" in
	-p|--pid|-t|--tid) echo 4194300 ;;
	-d|--duration|--interval|--serve-max-seconds) echo 2 ;;
	-F|--rate) echo 99 ;;
	-o|--output) echo "$T/mode2.svg" ;;
	-i|--input) echo "$T/none2.pb.gz" ;;
	-f|--format) echo folded ;;
	--thread-group) echo 'a=b' ;;
	--label) echo 'k=v' ;;
	--max-depth) echo 64 ;;
	--max-stacks) echo 1000 ;;
	--stack-window) echo 64k ;;
	--attach-mode) echo persistent ;;
	--backend) echo ptrace ;;
	--serve) echo 127.0.0.1:0 ;;
	--serve-token-file) echo "$T/none.token" ;;
	esac
}

# check_mode_completions SH COMPLETE [PARTIAL]: in each mode (--dump, -i,
# --top, --serve), every option COMPLETE offers for "csampler MODE PARTIAL"
# (PARTIAL: "-", or "--" for a shell that completes commands after "-") is
# one csampler takes there: run with a process (or an input) that does not
# exist, it fails for that (65, 66), never with a usage error (64). (--diff
# takes a second -i; --help and --version end any line; --top runs in a
# terminal, util-linux's script.)
check_mode_completions() {
	local sh=$1 complete=$2 partial=${3:--} mode opt st bad=
	for mode in "--dump -p 4194300" "-i $T/none.pb.gz -o $T/mode.folded" "--top -p 4194300" \
		    "--serve 127.0.0.1:0 -p 4194300"; do
		$complete "csampler $mode $partial"
		grep -q -- '^-' "$T/reply" || fail "$sh: no option offered after 'csampler $mode $partial'"
		for opt in $(sed -n 's/=$//; /^-/p' "$T/reply" | sort -u); do
			case "$mode:$opt" in
			*:--diff|*:-h|*:--help|*:-V|*:--version|*:--|-i*:-i|-i*:--input) continue ;;
			esac
			st=0
			case "$mode" in
			--top*) command -v script >/dev/null || continue
				# shellcheck disable=SC2046
				TERM=xterm timeout -k 2 10 script -qec "$CSAMPLER $mode $opt $(option_value "$opt")" \
					/dev/null >"$T/mode.err" 2>&1 </dev/null || st=$? ;;
			*)	# shellcheck disable=SC2046
				"$CSAMPLER" $mode "$opt" $(option_value "$opt") >"$T/mode.out" 2>"$T/mode.err" \
					</dev/null || st=$? ;;
			esac
			[ "$st" = 64 ] && bad="$bad
$sh: after '$mode', $opt is offered and refused: $(grep csampler: "$T/mode.err" | head -n 1)"
		done
	done
	[ -z "$bad" ] || fail "options offered that csampler refuses:$bad"
}

# proc_state PID: the one-letter State from /proc/PID/status (R S D T t Z ...).
proc_state() { awk '/^State:/ {print $2}' "/proc/$1/status" 2>/dev/null; }

# describe_stuck PID [TARGET]: what PID (and every thread of TARGET) is
# doing, for the message of a test that gives up waiting on it.
describe_stuck() {
	local pid=$1 target=${2:-} task
	echo "# pid $pid: state $(proc_state "$pid") wchan $(cat "/proc/$pid/wchan" 2>/dev/null)"
	sed 's/^/#   /' "/proc/$pid/stack" 2>/dev/null
	[ -n "$target" ] || return 0
	for task in /proc/"$target"/task/*; do
		echo "# target thread ${task##*/}: state $(proc_state "$target/task/${task##*/}")" \
			"tracer $(awk '/^TracerPid:/ {print $2}' "$task/status" 2>/dev/null)" \
			"wchan $(cat "$task/wchan" 2>/dev/null) $(grep '^SigQ' "$task/status" 2>/dev/null)"
	done
}

# wait_exit PID SECONDS WHAT [TARGET]: wait for the child PID to end, at most
# SECONDS; then its status is in WAIT_STATUS. A child still running by then
# fails the test with what it and TARGET are doing (instead of the whole test
# timing out with nothing said).
wait_exit() {
	local pid=$1 secs=$2 what=$3 target=${4:-} i s
	for i in $(seq 1 $((secs * 20))); do
		s=$(proc_state "$pid")
		[ -z "$s" ] || [ "$s" = Z ] && break
		sleep 0.05
	done
	s=$(proc_state "$pid")
	if [ -n "$s" ] && [ "$s" != Z ]; then
		describe_stuck "$pid" "$target"
		fail "$what: still running after ${secs}s"
	fi
	WAIT_STATUS=0
	wait "$pid" || WAIT_STATUS=$?
}
# tracer_pid PID: TracerPid from /proc/PID/status (a thread id).
tracer_pid() { awk '/^TracerPid:/ {print $2}' "/proc/$1/status" 2>/dev/null; }
# tracer_tgid PID: the process whose thread traces PID (csampler traces from
# a thread of its own), or 0.
tracer_tgid() {
	local tp
	tp=$(tracer_pid "$1")
	case "$tp" in ''|0) echo 0; return ;; esac
	awk '/^Tgid:/ {print $2}' "/proc/$tp/status" 2>/dev/null || echo 0
}

# wait_traced PID WHAT: wait (up to 10 s) until PID is traced, as csampler's
# attach makes it; fails naming WHAT if it never is.
wait_traced() {
	local i
	for i in $(seq 1 1000); do
		[ "$(tracer_pid "$1")" != 0 ] && return 0
		sleep 0.01
	done
	fail "$2: $1 was never traced"
}

# wait_ticking PID: until csampler PID has made its sampling clock (its
# timerfd is open), after its "sampling" line; a failure after 20 s.
wait_ticking() {
	wait_sampling "$1"
	wait_clock "$1" || fail "csampler $1 made no sampling clock: $(cat "$T/cs.err")"
}

# wait_clock PID: until csampler PID has made its sampling clock (its
# output and options were checked before it), for runs without the
# "sampling" line (-q); false after 20 s or when PID ended.
wait_clock() {
	local i
	for i in $(seq 1 400); do
		ls -l /proc/"$1"/fd 2>/dev/null | grep -q 'timerfd' && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# wait_state PID LETTERS [SECONDS]: wait until PID's state is one of LETTERS.
wait_state() {
	local pid=$1 want=$2 secs=${3:-10} i s
	for i in $(seq 1 $((secs * 20))); do
		s=$(proc_state "$pid")
		case "$want" in *"$s"*) [ -n "$s" ] && return 0 ;; esac
		sleep 0.05
	done
	fail "pid $pid state '$(proc_state "$pid")' never became one of '$want'"
}

# wait_all_stopped PID [STATES]: every thread of PID in one of STATES
# (default T, group-stop; tT for a traced process): a SIGSTOP stops each
# thread when it next runs, which on a busy machine can be well after the
# main one. Fails after 10 s.
wait_all_stopped() {
	local pid=$1 states=${2:-T} i running
	for i in $(seq 1 200); do
		running=$(find /proc/"$pid"/task -mindepth 2 -maxdepth 2 -name status 2>/dev/null |
			xargs awk -v ok="$states" '/^State:/ && index(ok, $2) == 0 { n++ } END { print n + 0 }')
		[ "$running" = 0 ] && return 0
		sleep 0.05
	done
	fail "pid $pid: $running threads never stopped"
}

# assert_untraced_running PID: every thread of PID is not ptrace-stopped and
# has TracerPid 0 (one awk over every thread's status: 10,000 threads take
# a fraction of a second).
assert_untraced_running() {
	local bad
	# a thread that exited between the listing and the read has no status:
	# awk skips a file it cannot open
	bad=$(find /proc/"$1"/task -mindepth 2 -maxdepth 2 -name status 2>/dev/null |
		xargs awk '
			FNR == 1 { split(FILENAME, p, "/"); tid = p[5] }
			/^State:/ { st[tid] = $2 }
			/^TracerPid:/ { tp[tid] = $2 }
			END {
				for (t in st) {
					if (!(t in tp)) continue
					if (st[t] == "t") { print "thread " t " left in tracing stop"; exit }
					if (st[t] == "T") { print "thread " t " left stopped"; exit }
					if (tp[t] != 0) { print "thread " t " still traced by " tp[t]; exit }
				}
			}' 2>/dev/null)
	[ -z "$bad" ] || fail "$bad"
}

# run_csampler ARGS...: run csampler with a timeout; stdout/stderr in
# $T/cs.out / $T/cs.err; sets CS_STATUS.
# start_watchdir DIR: record DIR's inotify events ("create NAME",
# "moved_from NAME", "delete NAME", ...) into $T/events until stop_watchdir.
start_watchdir() {
	local i=0
	"$PROGS/watchdir" "$1" 60 >"$T/events" 2>"$T/watch.err" &
	WATCHDIR_PID=$!
	FIXTURE_PIDS="$FIXTURE_PIDS $WATCHDIR_PID"
	until grep -q '^ready' "$T/events" 2>/dev/null; do
		i=$((i + 1)); [ $i -lt 100 ] || harness "watchdir never ready: $(cat "$T/watch.err")"
		sleep 0.05
	done
}
# stop_watchdir: the events so far are all in $T/events.
stop_watchdir() {
	sleep 0.3
	kill -TERM "$WATCHDIR_PID"
	wait "$WATCHDIR_PID" 2>/dev/null
}

run_csampler() {
	CS_STATUS=0
	# CSAMPLER_WRAPPER (e.g. "valgrind -q --error-exitcode=1") runs csampler
	# under a checker: make check-valgrind sets it.
	timeout -k 5 "${CS_TIMEOUT:-60}" ${CSAMPLER_WRAPPER:-} "$CSAMPLER" "$@" >"$T/cs.out" 2>"$T/cs.err" || CS_STATUS=$?
	[ "$CS_STATUS" = 124 ] && fail "csampler timed out: $(cat "$T/cs.err")"
	return 0
}

# folded_total FILE: sum of the counts of a folded file.
# vdso_named_unnamed PID FOLDED: the '[vdso]+0xN' frames of FOLDED (a
# profile of PID) that a symbol of PID's vdso covers, one per line: a frame
# csampler should have named. A kernel's vdso may hold code no dynamic
# symbol covers (a firecracker guest's 6.18, kvm-clock: the clock read
# at its text's start is a static function), which nobody can name.
vdso_named_unnamed() {
	local line start end
	line=$(grep ' \[vdso\]$' "/proc/$1/maps") || return 0
	start=${line%%-*}; end=${line#*-}; end=${end%% *}
	dd if="/proc/$1/mem" of="$T/vdso.img" bs=4096 skip=$((0x$start / 4096)) \
		count=$(((0x$end - 0x$start) / 4096)) 2>/dev/null || harness "cannot copy the vdso of $1"
	readelf -W --dyn-syms "$T/vdso.img" >"$T/vdso.syms" 2>/dev/null || harness "readelf on the vdso"
	# (hex by hand: mawk has no strtonum)
	awk 'function hex(s,   i, v) { s = tolower(s); sub(/^0x/, "", s); v = 0
			for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return v }
		FNR == NR { if ($4 == "FUNC") { n++; lo[n] = hex($2); hi[n] = hex($2) + $3 }; next }
		{ k = split($0, f, ";"); for (i = 1; i <= k; i++) {
			x = f[i]; sub(/ [0-9]+$/, "", x)
			if (x !~ /^\[vdso\]\+0x[0-9a-f]+$/) continue
			a = x; sub(/^\[vdso\]\+/, "", a); a = hex(a)
			for (j = 1; j <= n; j++) if (a >= lo[j] && a < hi[j]) { print x; break } } }' \
		"$T/vdso.syms" "$2" | sort -u
}

folded_total() { awk '{s += $NF} END {print s + 0}' "$1"; }

# folded_count FILE REGEX: samples of the stacks whose frames match REGEX.
# (A regex reaches awk through the environment, never -v: -v processes
# escape sequences, and gawk and busybox awk make "\[" a "[" where mawk
# keeps it.)
folded_count() { AWK_RE=$2 awk '{c = $NF; st = $0; sub(/ [0-9]+$/, "", st); if (st ~ ENVIRON["AWK_RE"]) s += c} END {print s + 0}' "$1"; }

# assert_folded_has FILE STACK-REGEX: some line's stack matches the ERE.
assert_folded_has() {
	local file=$1 re=$2
	[ -s "$file" ] || fail "folded file $file is empty or missing"
	grep -Eq -- "$re" "$file" || fail "no stack in $file matches /$re/ (first lines: $(head -3 "$file"))"
}

# share_se K PCT N: K standard errors, in percentage points, of a share of
# PCT % estimated from N samples (K x 100 x sqrt(p(1-p)/N)); 100 if N is 0.
share_se() {
	awk -v k="$1" -v w="$2" -v n="$3" "$AWK_ROOT"'
	BEGIN { printf "%.1f\n", (n > 0) ? k * 100 * root((w / 100) * (1 - w / 100) / n) : 100 }'
}

# assert_share FILE REGEX EXPECTED_PCT TOLERANCE: the share of samples whose
# stack matches REGEX is EXPECTED_PCT +- TOLERANCE percentage points. A
# TOLERANCE of "Kse" is K standard errors of that share over the samples
# the file has (sqrt(p(1-p)/n)): a busy machine gives fewer samples, and
# the test keeps the same confidence.
assert_share() {
	local file=$1 re=$2 want=$3 tol=$4 total part why=""
	total=$(folded_total "$file")
	part=$(folded_count "$file" "$re")
	[ "$total" -gt 0 ] || fail "no samples in $file"
	case "$tol" in *se) why=" (${tol%se} standard errors)"; tol=$(share_se "${tol%se}" "$want" "$total") ;; esac
	AWK_RE=$re awk -v p="$part" -v t="$total" -v w="$want" -v tol="$tol" -v why="$why" 'BEGIN {
		re = ENVIRON["AWK_RE"]
		pct = 100 * p / t; d = pct - w; if (d < 0) d = -d
		printf "# share of /%s/: %.1f%% (%d of %d), expected %s +- %s%s\n", re, pct, p, t, w, tol, why
		exit (d <= tol) ? 0 : 1 }' || fail "share of /$re/ out of tolerance"
}

# run_burst FOLDED RATE BURST-ARGS...: launch the burst fixture under
# csampler at RATE Hz (with $BURST_CS_ARGS, e.g. a backend) into FOLDED; sets the fixture's own accounting
# (TRUTH_WORK, TRUTH_WAIT, TRUTH_STEADY, TRUTH_PROCESS, in ns) and TOTAL,
# the samples of FOLDED. With BURST_REFERENCE=perf, perf record -e
# cpu-clock -p on the same run (once csampler samples it) is the reference
# for where too: BURST_PERF_WORK, burst_work's share of its samples ('' if
# perf ended before it sampled the fixture).
run_burst() {
	local folded=$1 rate=$2 truth
	shift 2
	BURST_PERF_WORK=
	if [ "${BURST_REFERENCE:-}" = perf ]; then
		launch_bg_csampler burst ${BURST_CS_ARGS:-} -F "$rate" -o "$folded" -- "$PROGS/burst" "$@"
		FIXTURE_PID=$LAUNCHED_PID
		phases_perf_start "$rate"
		CS_STATUS=0
		wait "$BG_CSAMPLER" || CS_STATUS=$?
		if wait "$PERF_REF_PID"; then
			perf script -i "$T/phases.perf" -F comm,ip,sym >"$T/burst.script" 2>/dev/null ||
				harness "perf script: $(head -3 "$T/burst.script")"
			# (a sample: its header line, then a tab-led line per frame)
			BURST_PERF_WORK=$(awk '/^\t/ { if ($2 == "burst_work") got = 1; next }
				NF { w += got; n++; got = 0 } END { w += got; if (n > 0) printf "%.1f\n", 100 * w / n }' \
				"$T/burst.script")
		else
			note "burst $*: perf record -p ended before it sampled the fixture: no reference"
		fi
	else
		run_csampler ${BURST_CS_ARGS:-} -F "$rate" -o "$folded" -- "$PROGS/burst" "$@"
	fi
	assert_eq "exit status (burst $*)" "$CS_STATUS" 0
	truth=$(grep '^truth ' "$T/cs.out") || fail "burst $*: no truth line: $(cat "$T/cs.out" "$T/cs.err")"
	set -- $truth   # truth work_ns W wait_ns B steady_ns S process_ns P
	TRUTH_WORK=$3 TRUTH_WAIT=$5 TRUTH_STEADY=$7 TRUTH_PROCESS=$9
	TOTAL=$(folded_total "$folded")
	[ "$TOTAL" -gt 0 ] || fail "burst $*: no samples"
	note "burst $*: $(grep -E '^csampler: [0-9]+ samples' "$T/cs.err")"
}

# check_burst RATE CPU-LOW CPU-HIGH MODE ON OFF THREADS SECONDS: launch the
# burst fixture (run_burst) and check its split against the kernel's
# accounting: burst_work's share within 5 points (or 3 standard errors of
# its samples, if more) of the work W (the time in
# the blocking calls B counting on either side: it lies between the work
# and the wait), the blocking calls' share at most B + 5, and the samples
# x period between CPU-LOW and CPU-HIGH % of the process's CPU.
check_burst() {
	local rate=$1 low=$2 high=$3 F
	shift 3
	F="$T/$1-$2-$3-$4.folded"
	run_burst "$F" "$rate" "$@"
	local w b tol what="$1 $2/$3 x$4"
	w=$(pct "$TRUTH_WORK" "$TRUTH_PROCESS")
	b=$(pct "$TRUTH_WAIT" "$TRUTH_PROCESS")
	# (5 points, or 3 standard errors of that share over the samples there
	# are where they are few: a loaded machine or a sanitizer build)
	tol=$(awk -v se="$(share_se 3 "$w" "$TOTAL")" 'BEGIN { print (se > 5) ? se : 5 }')
	# (with a perf reference, its share widens the range where it lies
	# outside: the kernel's own samples, which --backend=perf reads too)
	local pw=${BURST_PERF_WORK:-$w}
	[ -z "$BURST_PERF_WORK" ] || note "$what: burst_work by perf record's samples on the same run: $pw (by its own account: $w)"
	assert_within "$what: burst_work (+- $tol)" "$(pct "$(folded_count "$F" ';burst_work(;|$)')" "$TOTAL")" \
		"$(awk -v w="$w" -v p="$pw" -v t="$tol" 'BEGIN { print ((p < w) ? p : w) - t }')" \
		"$(awk -v w="$w" -v b="$b" -v p="$pw" -v t="$tol" 'BEGIN { print ((p > w + b) ? p : w + b) + t }')"
	assert_within "$what: blocking calls" "$(pct "$(folded_count "$F" ';block_once(;|$)')" "$TOTAL")" \
		0 "$(awk -v b="$b" 'BEGIN { print b + 5 }')"
	assert_within "$what: sampled CPU, % of the process's" \
		"$(awk -v n="$TOTAL" -v p="$TRUTH_PROCESS" -v r="$rate" 'BEGIN { printf "%.1f\n", 100 * n * (1e9 / r) / p }')" \
		"$low" "$high"
}

# phases_want ACCOUNT: pingpong's own account (its output) as a line a
# phase: NAME, its share of the CPU by the CPU clock, and by the thread's
# CPU clock split as its task-clock splits it (percent).
phases_want() {
	awk '
		$1 == "phase" { n++; name[n] = $2; cpu[n] = $3; run[n] = $4 }
		$1 == "thread" { tcpu[$2] = $3; trun[$2] = $4 }
		$1 == "total" { all = $2 }
		END { for (i = 1; i <= n; i++) { th = name[i]; sub(/_.*/, "", th)
			r = (trun[th] > 0) ? tcpu[th] / all * run[i] / trun[th] : cpu[i] / all
			printf "%s %.1f %.1f\n", name[i], 100 * cpu[i] / all, 100 * r } }' "$1"
}

# check_phases MODE RATE HOW [POINTS]: the pingpong fixture in MODE (epoll,
# socket, nap, sync, calls) for 4 s, sampled at RATE Hz with
# $PHASES_CS_ARGS (e.g. a backend), launched (HOW launch) or attached to its
# threads already made (HOW attach: they start once csampler samples; with
# $PHASES_CPU, the fixture and csampler both kept to that CPU); each
# phase's share of the samples within POINTS (default 3) points, and 3
# standard errors of that share over the samples there are (the sampling's
# own noise), of the fixture's own account of it. The kernel keeps
# two: its CPU clock (CLOCK_THREAD_CPUTIME_ID, schedstat's), which also
# charges a woken thread the time from its wake-up to its switch in (an
# idle CPU's exit from idle, or the end of the task it preempts: about 20
# us a wake-up on this 2-CPU VM, schedstat 36 us a 100 us nap where the
# thread's task-clock says 14 us), and its task-clock, the time the thread
# was on a CPU, which is all a clock can sample; a thread's share then is
# its CPU clock's total split as its task-clock splits it. Where the two
# differ, a phase is judged against the range between them. With
# $PHASES_ASSERTED (an extended regex of phase names) only those are
# asserted, the others noted. With PHASES_REFERENCE=perf, perf record -e
# cpu-clock -p on the same run (a launched fixture from once csampler
# samples it) is the reference for where too: each phase's share of its thread's perf samples, of the thread's
# CPU clock, widens the range where it lies outside (the kernel's samples
# and its accounts can differ: phases_perf_reference).
check_phases() {
	local mode=$1 rate=$2 how=$3 points=${4:-3} F="$T/phases-$1-$2-$3.folded" truth cs i perf_ref=
	if [ "$how" = launch ] && [ "${PHASES_REFERENCE:-}" = perf ]; then
		# (perf record -p on the launched fixture, once csampler samples it)
		launch_bg_csampler pingpong ${PHASES_CS_ARGS:-} -F "$rate" -o "$F" -- "$PROGS/pingpong" "$mode" 4
		FIXTURE_PID=$LAUNCHED_PID
		phases_perf_start "$rate"
		perf_ref=$PERF_REF_PID
		CS_STATUS=0
		wait "$BG_CSAMPLER" || CS_STATUS=$?
		truth=$T/cs.out
	elif [ "$how" = launch ]; then
		run_csampler ${PHASES_CS_ARGS:-} -F "$rate" -o "$F" -- "$PROGS/pingpong" "$mode" 4
		truth=$T/cs.out
	else
		start_fixture pingpong "$mode" 4 wait
		truth=$T/pingpong.out
		[ -z "${PHASES_CPU:-}" ] || taskset -a -p -c "$PHASES_CPU" "$FIXTURE_PID" >/dev/null ||
			harness "cannot pin the fixture to CPU $PHASES_CPU"
		: >"$T/cs.out"; : >"$T/cs.err"   # (wait_sampling reads this run's)
		${PHASES_CPU:+taskset -c "$PHASES_CPU"} ${CSAMPLER_WRAPPER:-} "$CSAMPLER" ${PHASES_CS_ARGS:-} \
			-F "$rate" -o "$F" -p "$FIXTURE_PID" >"$T/cs.out" 2>"$T/cs.err" &
		cs=$!
		wait_sampling "$cs"
		if [ "${PHASES_REFERENCE:-}" = perf ]; then
			phases_perf_start "$rate"
			perf_ref=$PERF_REF_PID
		fi
		kill -USR2 "$FIXTURE_PID"
		CS_STATUS=0
		wait "$cs" || CS_STATUS=$?
	fi
	assert_eq "pingpong $mode at $rate Hz ($how): exit status ($(cat "$T/cs.err"))" "$CS_STATUS" 0
	grep -q '^total ' "$truth" || fail "pingpong $mode: no account: $(cat "$truth" "$T/cs.err")"
	local total
	total=$(folded_total "$F")
	[ "$total" -gt 0 ] || fail "pingpong $mode at $rate Hz: no samples"
	note "pingpong $mode at $rate Hz ($how): $(grep -E '^csampler: [0-9]+ samples' "$T/cs.err")"
	phases_want "$truth" >"$T/phases.want"
	if [ -n "$perf_ref" ]; then
		if wait "$perf_ref"; then
			phases_perf_reference "$truth"
		elif [ "$how" = launch ]; then
			# (a launched fixture does not wait for it: at load 40, perf
			# started after the fixture's 4 s)
			note "pingpong $mode at $rate Hz ($how): perf record -p ended before it sampled the fixture: no reference"
		else
			harness "perf record: $(tail -3 "$T/perf.err")"
		fi
	fi
	local name c r p got tol lo hi
	while read -r name c r p; do
		got=$(pct "$(folded_count "$F" ";$name(;|\$)")" "$total")
		tol=$(awk -v se="$(share_se 3 "$c" "$total")" -v p="$points" 'BEGIN { print p + se }')
		if [ -n "${PHASES_ASSERTED:-}" ] && ! echo "$name" | grep -Eq "^($PHASES_ASSERTED)\$"; then
			note "$mode at $rate Hz ($how): $name (own account: $c by its CPU clock, $r by its time on a CPU; not asserted): $got"
			continue
		fi
		lo=$(awk -v c="$c" -v r="$r" -v p="${p:-$c}" -v t="$tol" 'BEGIN { m = (c < r) ? c : r; if (p < m) m = p; print m - t }')
		hi=$(awk -v c="$c" -v r="$r" -v p="${p:-$c}" -v t="$tol" 'BEGIN { m = (c > r) ? c : r; if (p > m) m = p; print m + t }')
		assert_within "$mode at $rate Hz ($how): $name (own account: $c by its CPU clock, $r by its time on a CPU${p:+; perf record -p on the same run: $p}; +- $tol)" \
			"$got" "$lo" "$hi"
	done <"$T/phases.want"
}

# start_sampling_csampler ARGS...: csampler ARGS in the background, output
# in $T/cs.out and $T/cs.err (run_csampler's timeout and wrapper), until it
# samples; its pid in BG_CSAMPLER (wait for it: its status is csampler's,
# 124 where the timeout ended it).
start_sampling_csampler() {
	: >"$T/cs.out"; : >"$T/cs.err"   # (wait_sampling reads this run's)
	timeout -k 5 "${CS_TIMEOUT:-60}" ${CSAMPLER_WRAPPER:-} "$CSAMPLER" "$@" >"$T/cs.out" 2>"$T/cs.err" &
	BG_CSAMPLER=$!
	wait_sampling "$BG_CSAMPLER"
}

# launch_bg_csampler NAME ARGS...: csampler ARGS (which launch the program
# NAME) in the background, output in $T/cs.out and $T/cs.err, until it
# samples; its pid in BG_CSAMPLER (wait for it), the launched program's in
# LAUNCHED_PID (for a profiler beside it on the same run).
launch_bg_csampler() {
	local name=$1 i
	shift
	start_sampling_csampler "$@"
	# (timeout's child is csampler, whose child is the program)
	LAUNCHED_PID=$(for i in $(pgrep -P "$BG_CSAMPLER"); do pgrep -P "$i" -x "$name"; done | head -1)
	[ -n "$LAUNCHED_PID" ] || fail "no $name under csampler $BG_CSAMPLER: $(cat "$T/cs.err")"
}

# wait_sampling PID: until csampler PID (output in $T/cs.err) says it
# samples; a failure if it ends or 20 s pass first.
wait_sampling() {
	local i
	for i in $(seq 1 400); do
		grep -q '^csampler: sampling' "$T/cs.err" && return 0
		kill -0 "$1" 2>/dev/null || break
		sleep 0.05
	done
	# (its exit status, when it ended: once in CI it ended before a word,
	# and nothing told how)
	kill -0 "$1" 2>/dev/null && i=running || { wait "$1"; i="exit status $?"; }
	fail "csampler never sampled ($i): $(cat "$T/cs.err")"
}

# phases_perf_start RATE: perf record -e cpu-clock -p $FIXTURE_PID at RATE Hz
# (DWARF call chains), until the fixture exits, into $T/phases.perf; its
# pid in PERF_REF_PID, once its events are open.
phases_perf_start() {
	command -v perf >/dev/null 2>&1 || skip "needs perf (linux-perf) for the reference"
	perf record -q -e cpu-clock -F "$1" --call-graph dwarf,8192 -p "$FIXTURE_PID" \
		-o "$T/phases.perf" >/dev/null 2>"$T/perf.err" &
	PERF_REF_PID=$!
	local i
	for i in $(seq 1 200); do
		ls -l /proc/"$PERF_REF_PID"/fd 2>/dev/null | grep -q 'perf_event' && break
		kill -0 "$PERF_REF_PID" 2>/dev/null || harness "perf record ended: $(tail -3 "$T/perf.err")"
		sleep 0.05
	done
}

# phases_perf_reference TRUTH: a fourth column in $T/phases.want, each
# phase's share by perf record's samples on the same run: its share of its
# thread's samples (the thread by its name, the phase's first word) times
# the thread's share of the process's CPU by its CPU clock (TRUTH's thread
# and total lines), as csampler scales each thread to the kernel's account.
phases_perf_reference() {
	perf script -i "$T/phases.perf" -F comm,ip,sym >"$T/phases.script" 2>/dev/null ||
		harness "perf script: $(head -3 "$T/phases.script")"
	awk -v want="$T/phases.want" -v truth="$1" '
		BEGIN { while ((getline l < want) > 0) { split(l, f, " "); n++; name[n] = f[1]; line[n] = l; is[f[1]] = 1 }
			while ((getline l < truth) > 0) { split(l, f, " ")
				if (f[1] == "thread") tcpu[f[2]] = f[3]; if (f[1] == "total") all = f[2] } }
		/^\t/ { if (!got && ($2 in is)) { ph[$2]++; got = 1 }; next }
		NF { th = $1; thn[th]++; got = 0 }
		END { for (i = 1; i <= n; i++) { t = name[i]; sub(/_.*/, "", t)
			if (thn[t] > 0 && all > 0) printf "%s %.1f\n", line[i], 100 * tcpu[t] / all * ph[name[i]] / thn[t]
			else print line[i] } }' "$T/phases.script" >"$T/phases.ref" &&
		mv "$T/phases.ref" "$T/phases.want"
}

# pct PART WHOLE: PART as a percentage of WHOLE, one decimal (0 if WHOLE is 0)
pct() { awk -v p="$1" -v w="$2" 'BEGIN { printf "%.1f\n", (w > 0) ? 100 * p / w : 0 }'; }

# assert_within WHAT VALUE LOW HIGH: LOW <= VALUE <= HIGH (numbers; a value
# that is not a number is a harness fault, never a pass)
assert_within() {
	printf '%s %s %s\n' "$2" "$3" "$4" | grep -Eq '^-?[0-9]+(\.[0-9]+)?( -?[0-9]+(\.[0-9]+)?){2}$' ||
		harness "$1: not numbers: '$2' '$3' '$4'"
	awk -v g="$2" -v lo="$3" -v hi="$4" 'BEGIN { exit !(g >= lo && g <= hi) }' ||
		fail "$1: $2, expected $3 to $4"
	note "$1: $2 (expected $3 to $4)"
}

# cpu_ns PID...: the CPU time the live threads of the PIDs have used, in ns
# (the kernel's schedstat; threads that ended are not counted).
cpu_ns() {
	local p
	for p in "$@"; do cat /proc/"$p"/task/*/schedstat 2>/dev/null; done | awk '{s += $1} END {printf "%.0f\n", s}'
}
# cpu_mark PID...: remember the PIDs' CPU time and the time now; then,
# after the window, cpu_window PID... (not in a subshell: it sets variables)
# sets CPU_SPENT, the seconds of CPU they used since the mark, and
# CPU_RATE, the CPUs they used on average (1.000 for one busy thread with a
# CPU to itself; less on a busy machine).
cpu_mark() { CPU_MARK_CPU=$(cpu_ns "$@"); CPU_MARK_WALL=$(date +%s%N); }
cpu_window() {
	local c1 w1
	c1=$(cpu_ns "$@") w1=$(date +%s%N)
	CPU_SPENT=$(awk -v c="$((c1 - CPU_MARK_CPU))" 'BEGIN { printf "%.3f\n", c / 1e9 }')
	CPU_RATE=$(awk -v c="$((c1 - CPU_MARK_CPU))" -v w="$((w1 - CPU_MARK_WALL))" \
		'BEGIN { printf "%.3f\n", (w > 0) ? c / w : 0 }')
}
# cpu_trace_start SCHEDSTAT FILE: a line "NS-NOW CPU-NS" in FILE every 0.1 s,
# from the schedstat file SCHEDSTAT (a process's or a thread's), until
# cpu_trace_stop (killed with the fixtures otherwise): how a target's CPU
# went over a run, for bounds from the least or the most of it in a span.
cpu_trace_start() {
	(while :; do
		echo "$(date +%s%N) $(cut -d' ' -f1 "$1" 2>/dev/null)"
		sleep 0.1
	done) >"$2" 2>/dev/null &
	CPU_TRACER=$!
	FIXTURE_PIDS="$FIXTURE_PIDS $CPU_TRACER"
}
cpu_trace_stop() {
	kill "$CPU_TRACER" 2>/dev/null
	wait "$CPU_TRACER" 2>/dev/null
}
# assert_samples WHAT N HZ CPU-SECONDS LOW HIGH: N samples at HZ of a
# target that used CPU-SECONDS of CPU in the window (its own report) are LOW
# to HIGH % of CPU-SECONDS x HZ, the samples that CPU time is worth: judged
# against the kernel's accounting, never against wall time, so a busy
# machine does not fail it.
assert_samples() {
	local due
	due=$(awk -v c="$4" -v hz="$3" 'BEGIN { printf "%.0f\n", c * hz }')
	[ "$due" -gt 0 ] || fail "$1: the target used no CPU ($4 s) in the window"
	assert_within "$1 (its $4 s of CPU are worth $due)" "$2" \
		"$(awk -v d="$due" -v p="$5" 'BEGIN { printf "%.0f\n", d * p / 100 }')" \
		"$(awk -v d="$due" -v p="$6" 'BEGIN { printf "%.0f\n", d * p / 100 }')"
}
# assert_window_samples WHAT N HZ SECONDS THREADS LOW HIGH [MAPS]: N samples at HZ
# of a window of SECONDS inside cpu_mark..cpu_window, of a target with
# THREADS busy threads: at least LOW % of what its average rate over the
# bracket is worth (CPU_RATE x SECONDS x HZ; less 3 standard errors in the
# part of its CPUs it did not get), at most HIGH % of what the
# bracket's whole CPU or THREADS whole CPUs for SECONDS are worth, the
# smaller (the window is inside the bracket).
assert_window_samples() {
	local lo hi
	# (a target that gets a fraction of a CPU gets it unevenly: the window
	# may hold less of it than the bracket's average; 3 standard errors of
	# a count that size, in the part of a CPU it did not get, are allowed
	# below: none when it had its CPUs, as on a quiet machine)
	lo=$(awk -v r="$CPU_RATE" -v s="$4" -v hz="$3" -v p="$6" -v t="$5" "$AWK_ROOT"'
	BEGIN {
		lo = r * s * hz * p / 100; f = r / t; if (f > 1) f = 1
		lo -= 3 * root(lo) * (1 - f); if (lo < 0) lo = 0
		printf "%.0f\n", lo }')
	# (a thread counted fewer than 8 periods keeps its sampled count, not
	# scaled to the kernel's: a count that small may be 3 standard errors
	# above what its CPU is worth; with MAPS, the count is split over that
	# many maps each scaled alone, --interval's: the test of smallness is
	# each one's share. profile_interval at load 19: 26 samples in 5 maps
	# for 0.203 s of CPU at 99 Hz)
	hi=$(awk -v c="$CPU_SPENT" -v s="$4" -v t="$5" -v hz="$3" -v p="$7" -v maps="${8:-1}" "$AWK_ROOT"'
		BEGIN { m = s * t; if (c < m) m = c; hi = m * hz * p / 100
			 if (hi / maps < 16) hi += 3 * root(hi); printf "%.0f\n", hi }')
	[ "$hi" -gt 0 ] || fail "$1: the target used no CPU in the window"
	assert_within "$1 (the target ran at $CPU_RATE CPUs, $CPU_SPENT s of CPU in the bracket)" "$2" "$lo" "$hi"
}

# reported_cpu FILE: the seconds of CPU a fixture reported on its "cpu NS"
# line (hot prints it at exit); fails if there is none.
reported_cpu() {
	awk '$1 == "cpu" && $2 ~ /^[0-9]+$/ { printf "%.3f\n", $2 / 1e9; found = 1 } END { exit !found }' "$1" ||
		fail "no cpu line in $1: $(cat "$1")"
}

# assert_eq WHAT GOT WANT
assert_eq() { [ "$2" = "$3" ] || fail "$1: got '$2', expected '$3'"; }
# assert_match WHAT TEXT ERE
assert_match() { printf '%s' "$2" | grep -Eq -- "$3" || fail "$1: '$2' does not match /$3/"; }

# start_server ARGS...: csampler ARGS (with --serve 0 or unix:PATH) in the
# background, its stderr in $T/srv.err; waits for the line saying where it
# serves. Sets SERVER_PID, SERVER_URL (http://127.0.0.1:PORT, or
# http://localhost for a Unix socket) and SERVED_PID (the process served,
# killed at the end of the test like a fixture).
start_server() {
	local i
	# (the redirections below happen in the child: a previous server's
	# lines must not be read as this one's)
	rm -f "$T/srv.out" "$T/srv.err"
	${CSAMPLER_WRAPPER:-} "$CSAMPLER" "$@" >"$T/srv.out" 2>"$T/srv.err" &
	SERVER_PID=$!
	FIXTURE_PIDS="$FIXTURE_PIDS $SERVER_PID"
	for i in $(seq 1 400); do
		SERVER_URL=$(sed -n 's|^csampler: serving \(http://[^/]*\)/debug/pprof/ for .*|\1|p' "$T/srv.err")
		if [ -n "$SERVER_URL" ]; then
			# a launched program outlives a server stopped by a signal
			SERVED_PID=$(sed -n 's|^csampler: serving .* for process \([0-9]*\) .*|\1|p' "$T/srv.err")
			FIXTURE_PIDS="$FIXTURE_PIDS $SERVED_PID"
			return 0
		fi
		kill -0 "$SERVER_PID" 2>/dev/null || fail "csampler $* exited: $(cat "$T/srv.err")"
		sleep 0.05
	done
	fail "csampler $* never said where it serves: $(cat "$T/srv.err")"
}

# http_get PATH OUT [CURL-ARGS...]: GET $SERVER_URL$PATH, the body in OUT;
# sets HTTP_STATUS and HTTP_TYPE (the Content-Type), and HTTP_HEADERS (a file).
http_get() {
	local path=$1 out=$2 w
	shift 2
	w=$(curl -sS --max-time 120 -D "$T/headers" -o "$out" -w '%{http_code} %{content_type}' \
		"$@" "$SERVER_URL$path" 2>"$T/curl.err") || w="000 $(cat "$T/curl.err")"
	HTTP_STATUS=${w%% *}
	HTTP_TYPE=${w#* }
	HTTP_HEADERS=$T/headers
}

# pprof_raw_total FILE: the samples of a pprof profile as go tool pprof
# -raw reads it (needs need_go); fails if it does not parse.
pprof_raw_total() {
	"$GO" tool pprof -raw "$1" >"$T/raw" 2>"$T/pprof.err" ||
		fail "go tool pprof -raw $1: $(cat "$T/pprof.err")"
	awk '/^Samples:/ {s = 1; next} /^Locations/ {s = 0} s && /^ *[0-9]+ +[0-9]+:/ {n += $1} END {print n + 0}' "$T/raw"
}
