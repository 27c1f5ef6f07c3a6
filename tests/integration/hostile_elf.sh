#!/bin/sh
# hostile_elf: code running from mapped, executable, malformed ELF files
# (header tables past the end of the file, a 4 GiB build-id note, a symbol
# table running off the end; progs/maleelf.c). The symbolizer survives and
# names each frame module+0xOFFSET (the loop sits at file offset 0x805-0x809);
# the counts add up; the target runs on untraced.
# --idle samples every thread at every tick, so each one is seen however
# loaded the machine is.
. "$TESTS_SRCDIR/lib.sh"
need_root

mkdir "$T/elf" || harness "mkdir"
start_fixture maleelf "$T/elf"
run_csampler --idle -F 499 -d 2 -o "$T/out.folded" -o "$T/out.txt" -o "$T/out.pb.gz" -p "$FIXTURE_PID"
assert_eq "exit status ($(cat "$T/cs.err"))" "$CS_STATUS" 0
F=$T/out.folded
reported=$(sed -nE 's/^csampler: wrote .* \(folded stacks, ([0-9]+) samples?\).*/\1/p' "$T/cs.err")
assert_eq "samples in the output" "$(folded_total "$F")" "$reported"
for f in bad_tables bad_notes bad_symtab; do
	n=$(folded_count "$F" "(^|;)\\[?$f\\.elf\\+0x80[5-9]\\]?\$")
	note "$f.elf: $n samples"
	[ "$n" -gt 0 ] || fail "no frame $f.elf+0x80N: $(cat "$F")"
done
grep -q 'bad_notes\.elf+0x80' "$T/out.txt" || fail "the text report does not name the module"
if [ -n "${GO:-}" ] && "$GO" version >/dev/null 2>&1; then
	"$GO" tool pprof -raw "$T/out.pb.gz" >"$T/raw.txt" 2>/dev/null ||
		fail "go tool pprof cannot read the profile"
	grep -q 'bad_symtab.elf' "$T/raw.txt" || fail "pprof has no mapping for bad_symtab.elf"
fi
assert_untraced_running "$FIXTURE_PID"
exit 0
