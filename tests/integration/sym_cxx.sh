#!/bin/sh
# sym_cxx: C++ template names come out demangled and fully qualified, also
# where DWARF gives no linkage name (inlined std::function internals and a
# lambda, progs/cxxlambda.cc).
. "$TESTS_SRCDIR/lib.sh"
need_root
need_cmd nm
[ -x "$PROGS/cxxtpl" ] || skip "cxxtpl not built (no g++)"

start_fixture cxxtpl 30
bin=$(readlink -f "$PROGS/cxxtpl")
base=$(awk -v b="$bin" '$6 == b && $3 ~ /^0+$/ { split($1, r, "-"); print r[1]; exit }' "/proc/$FIXTURE_PID/maps")
[ -n "$base" ] || harness "no mapping of $bin"
off=$(nm "$PROGS/cxxtpl" | awk '$3 == "_ZN2ns4TypeIiE6methodEi" { print $1 }')
[ -n "$off" ] || harness "no ns::Type<int>::method symbol"
"$PROGS/symlookup" "$FIXTURE_PID" "$(printf '%x' $((0x$base + 0x$off)))" >"$T/one" || fail "symlookup failed"
grep -q '^ns::Type<int>::method(int)@cxxtpl.cc:[1-9][0-9]*$' "$T/one" || fail "method: $(cat "$T/one")"

run_csampler -F 199 -d 2 -o "$T/out.folded" -p "$FIXTURE_PID"
assert_eq "exit status" "$CS_STATUS" 0
assert_folded_has "$T/out.folded" ';main;int ns::drive<ns::Type<int> >\(ns::Type<int>&, int\);ns::Type<int>::method\(int\) [0-9]+$'
grep -q '_ZN' "$T/out.folded" && fail "mangled names in the profile"
kill "$FIXTURE_PID"

# frames whose DWARF has only a bare name (inlined template functions, a
# lambda's operator()) are qualified by their scopes
start_fixture cxxlambda 30
run_csampler -F 199 -d 2 -o "$T/lambda.folded" -p "$FIXTURE_PID"
assert_eq "exit status" "$CS_STATUS" 0
assert_folded_has "$T/lambda.folded" ';app::Worker::run\([^;]*\);std::function<[^;]*>::operator\(\)\([^;]*;std::_Function_handler<[^;]*>::_M_invoke;std::__invoke_r<[^;]*>;std::__invoke_impl<[^;]*>;main::\{lambda\}::operator\(\) [0-9]+$'
exit 0
