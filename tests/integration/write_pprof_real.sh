#!/bin/sh
# write_pprof_real: pprof's conventions on profiles of real processes, as
# `go tool pprof` reads them (issue 17, points 2-4):
# - the first mapping is the main program (pprof's "File:" line, and the
#   binary it looks symbols up in first), also when every stack starts in
#   a library (-p, and --addresses);
# - a caller's location is its call instruction (the return address - 1),
#   so a tool that looks the address up again lands on the call: every
#   caller address of the program is the last byte of a call instruction
#   (objdump), every leaf address the start of an instruction;
# - a mapping's has_* flags say what was resolved: a stripped copy of the
#   program claims no functions, so pprof looks it up again in the
#   unstripped program under PPROF_BINARY_PATH and names its functions
#   (standalone pprof, built from Debian's sources: `go tool pprof` cannot
#   look up a C program's binary); the program with its symbols claims
#   functions, files and lines.
. "$TESTS_SRCDIR/lib.sh"
need_root
need_cmd objdump
need_cmd strip
need_go

# pprof_file PROFILE: the "File:" line's program
pprof_file() {
	"$GO" tool pprof -symbolize=none -top "$1" 2>"$T/pprof.err" | sed -n 's/^File: //p'
}

# 1. the main program first: dlopener spends its first 30 s in its plugin,
# so every stack starts in libplugin.so (that mapping came first)
start_fixture dlopener 30
DL=$FIXTURE_PID
run_csampler -F 499 -d 1 -o "$T/dl.pb.gz" -p "$DL"
assert_eq "exit status ($(cat "$T/cs.err"))" "$CS_STATUS" 0
assert_eq "File: of a program running in its plugin (-p)" "$(pprof_file "$T/dl.pb.gz")" dlopener
run_csampler -F 499 -d 1 --addresses -o "$T/dladdr.pb.gz" -p "$DL"
assert_eq "exit status ($(cat "$T/cs.err"))" "$CS_STATUS" 0
assert_eq "File: with --addresses" "$(pprof_file "$T/dladdr.pb.gz")" dlopener
kill "$DL"
# launched: the program, not csampler (whose image the child had before
# its exec; it was "File: csampler")
run_csampler -F 499 -o "$T/launched.pb.gz" -- "$PROGS/dlopener" 0.3
assert_eq "exit status ($(cat "$T/cs.err"))" "$CS_STATUS" 0
assert_eq "File: of a launched program" "$(pprof_file "$T/launched.pb.gz")" dlopener
start_fixture hot 30
run_csampler -F 499 -d 1 --addresses -o "$T/addr.pb.gz" -p "$FIXTURE_PID"
assert_eq "exit status ($(cat "$T/cs.err"))" "$CS_STATUS" 0

# 2. caller locations are call sites: -raw lists the samples' location ids
# (leaf first), the locations (id: address M=mapping ...) and the mappings
# (id: start/limit/offset file ...); the program's code addresses, as file
# addresses (address - start + offset: its text is mapped at that offset),
# are checked against objdump's instructions.
"$GO" tool pprof -symbolize=none -raw "$T/addr.pb.gz" >"$T/raw" 2>"$T/pprof.err" ||
	fail "go tool pprof -raw: $(cat "$T/pprof.err")"
bin=$(readlink -f "$PROGS/hot")
objdump -d -w --no-show-raw-insn "$bin" >"$T/objdump" || harness "objdump"
perl -e '
	my ($objdump, $raw, $bin) = @ARGV;
	my (%kind, %role, %addr, %map, $prog, $start, $off, $call);
	open(my $o, "<", $objdump) or die;
	while (<$o>) {          # "    1139:\tcall   1150 <leaf_a>"
		next unless /^ +([0-9a-f]+):\t(\S+)/;
		my $a = hex $1;
		$kind{$a - 1} = "end" if $call;
		$kind{$a} = "insn";
		$call = $2 =~ /^call/;
	}
	open(my $r, "<", $raw) or die;
	my $part = "";
	while (<$r>) {
		if (/^(Samples|Locations|Mappings)/) { $part = $1; next }
		if ($part eq "Samples" && /^\s+\d+\s+\d+:\s+([\d ]+)/) {
			my @ids = split " ", $1;
			$role{$ids[$_]} = $_ ? "caller" : "leaf" for 0 .. $#ids;
		} elsif ($part eq "Locations" && /^\s+(\d+): (0x[0-9a-f]+) (M=\d+)/) {
			($addr{$1}, $map{$1}) = (hex $2, $3);
		} elsif ($part eq "Mappings" && /^(\d+): (0x[0-9a-f]+)\/0x[0-9a-f]+\/(0x[0-9a-f]+) (\S+)/ && $4 eq $bin) {
			($prog, $start, $off) = ("M=$1", hex $2, hex $3);
		}
	}
	my (%n, @bad);
	for my $id (keys %addr) {
		next unless defined $prog && $map{$id} eq $prog && $role{$id};
		my $fa = $addr{$id} - $start + $off;
		my $want = $role{$id} eq "leaf" ? "insn" : "end";
		$n{$role{$id}}++;
		push @bad, sprintf("%s 0x%x (%s)", $role{$id}, $fa, $kind{$fa} // "inside an instruction")
			if ($kind{$fa} // "") ne $want;
	}
	print join(" ", $n{leaf} // 0, $n{caller} // 0, @bad), "\n";
' "$T/objdump" "$T/raw" "$bin" >"$T/check" || harness "perl"
set -- $(cat "$T/check")
note "the program's leaf locations: $1, caller locations: $2"
[ "$1" -gt 0 ] && [ "$2" -gt 0 ] || fail "no leaf or caller location of the program: $(cat "$T/check")"
[ "$#" = 2 ] || fail "locations not at an instruction (leaf) or a call's last byte (caller):$(cut -d' ' -f3- "$T/check")"

# 3. has_* flags: the program with its symbols claims functions, files and
# lines; a stripped copy claims nothing, and pprof names its functions from
# the unstripped one (same build-id) under PPROF_BINARY_PATH
grep -Eq "^[0-9]+: 0x[0-9a-f/x]+ $bin [0-9a-f]+ \[FN\]\[FL\]\[LN\]" "$T/raw" &&
	fail "--addresses: the program's mapping claims functions: $(grep " $bin " "$T/raw")"
run_csampler -F 499 -d 1 -o "$T/sym.pb.gz" -p "$FIXTURE_PID"
"$GO" tool pprof -symbolize=none -raw "$T/sym.pb.gz" >"$T/symraw" 2>"$T/pprof.err" ||
	fail "go tool pprof -raw: $(cat "$T/pprof.err")"
grep -Eq "^[0-9]+: 0x[0-9a-f/x]+ $bin [0-9a-f]+ \[FN\]\[FL\]\[LN\]" "$T/symraw" ||
	fail "the program's mapping does not claim functions, files and lines: $(grep " $bin " "$T/symraw")"
kill "$FIXTURE_PID"

mkdir "$T/stripped" "$T/full" || harness "mkdir"
strip -o "$T/stripped/hot" "$bin" || harness "strip"
cp "$bin" "$T/full/hot" || harness "cp"
"$T/stripped/hot" 30 >"$T/stripped.out" 2>&1 &
SP=$!
FIXTURE_PIDS="$FIXTURE_PIDS $SP"
for i in $(seq 1 100); do grep -q '^ready' "$T/stripped.out" && break; sleep 0.05; done
run_csampler -F 499 -d 1 -o "$T/stripped.pb.gz" -p "$SP"
assert_eq "exit status ($(cat "$T/cs.err"))" "$CS_STATUS" 0
# (it would spin on while pprof is built and run, taking the CPU from the
# tests beside it: 1 s of CPU alone, more on a loaded machine)
kill "$SP"
"$GO" tool pprof -symbolize=none -raw "$T/stripped.pb.gz" >"$T/straw" 2>"$T/pprof.err" ||
	fail "go tool pprof -raw: $(cat "$T/pprof.err")"
line=$(grep -E "^[0-9]+: 0x[0-9a-f/x]+ $T/stripped/hot " "$T/straw")
[ -n "$line" ] || fail "no mapping of the stripped program: $(sed -n '/^Mappings/,$p' "$T/straw")"
case $line in *"[FN]"*|*"[FL]"*|*"[LN]"*) fail "the stripped program's mapping claims symbols: $line" ;; esac
# `go tool pprof` looks binaries up with Go's own object reader, which
# knows no build-id and no file offset (it is for Go programs); standalone
# pprof uses binutils, as a C or C++ user runs it: built here from Debian's
# golang-github-google-pprof-dev, offline.
src=/usr/share/gocode/src/github.com/google/pprof
[ -d "$src" ] || skip "standalone pprof: needs golang-github-google-pprof-dev (scripts/install-deps)"
GO111MODULE=off GOPATH=/usr/share/gocode "$GO" build -o "$T/pprof" github.com/google/pprof \
	>"$T/gobuild.err" 2>&1 || fail "cannot build standalone pprof: $(cat "$T/gobuild.err")"
PPROF_BINARY_PATH=$T/full "$T/pprof" -symbolize=local -top "$T/stripped.pb.gz" >"$T/sttop" 2>"$T/pprof.err" ||
	fail "pprof -top: $(cat "$T/pprof.err")"
for f in leaf_a leaf_b leaf_c; do
	grep -Eq " $f\$" "$T/sttop" || fail "pprof did not name $f from PPROF_BINARY_PATH: $(cat "$T/sttop" "$T/pprof.err")"
done
exit 0
