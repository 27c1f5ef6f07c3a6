#!/bin/sh
# perf_backend_unprivileged: without CAP_PERFMON and CAP_BPF (dropped with
# setpriv), --backend=perf is refused in one line naming the cause and the
# fix, status 67, no output written, the target let go; --backend=auto
# falls back to ptrace and says so.
. "$TESTS_SRCDIR/lib.sh"
need_root
need_cmd setpriv
DROP="--inh-caps=-perfmon,-bpf,-sys_admin --bounding-set=-perfmon,-bpf,-sys_admin"
# shellcheck disable=SC2086
setpriv $DROP true 2>/dev/null || skip "setpriv cannot drop CAP_PERFMON here (a kernel or util-linux without it)"

start_fixture hot
pid=$FIXTURE_PID
CSAMPLER_WRAPPER="setpriv $DROP" run_csampler --backend=perf -d 1 -o "$T/no.folded" -p "$pid"
assert_eq "no CAP_PERFMON: exit status" "$CS_STATUS" 67
assert_match "no CAP_PERFMON: message" "$(cat "$T/cs.err")" \
	"^csampler: --backend=perf needs root \\(CAP_PERFMON and CAP_BPF\\): the kernel refused .*; use --backend=ptrace\$"
[ "$(grep -c . "$T/cs.err")" = 1 ] || fail "more than one line: $(cat "$T/cs.err")"
[ -e "$T/no.folded" ] && fail "an output was written"
assert_untraced_running "$pid"

CSAMPLER_WRAPPER="setpriv $DROP" run_csampler --backend=auto -d 1 -o "$T/auto-nocap.folded" -p "$pid"
assert_eq "--backend=auto without CAP_PERFMON: exit status" "$CS_STATUS" 0
assert_match "--backend=auto without CAP_PERFMON: start line" "$(head -1 "$T/cs.err")" "; backend: ptrace\$"
assert_folded_has "$T/auto-nocap.folded" 'leaf_[abc]'
assert_untraced_running "$pid"
exit 0
