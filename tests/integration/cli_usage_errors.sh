#!/bin/sh
# cli_usage_errors: each malformed option, value or combination, given to the
# real program, prints exactly its one-line reason and the --help hint on
# stderr, nothing on stdout, and exits 64. Nothing is attached: the refusals
# come before (the PID used, 4194303, is valid to the parser but should not
# exist, so a refusal that went missing shows as a different status).
. "$TESTS_SRCDIR/lib.sh"

P=4194303
HINT="Try 'csampler --help' for more information."
failures=0

# check 'ARGS (shell words)' 'EXACT FIRST LINE'
check() {
	words=$1 want=$2
	eval "set -- $words"
	CS_STATUS=0
	timeout -k 5 30 "$CSAMPLER" "$@" >"$T/out" 2>"$T/err" </dev/null || CS_STATUS=$?
	first=$(sed -n 1p "$T/err")
	second=$(sed -n 2p "$T/err")
	lines=$(wc -l <"$T/err")
	if [ "$CS_STATUS" != 64 ] || [ "$first" != "$want" ] || [ "$second" != "$HINT" ] ||
	   [ "$lines" != 2 ] || [ -s "$T/out" ]; then
		echo "FAIL: csampler $words"
		echo "  status $CS_STATUS (want 64), stderr:"
		sed 's/^/    /' "$T/err"
		echo "  want: $want"
		[ -s "$T/out" ] && echo "  stdout not empty: $(head -c 200 "$T/out")"
		failures=$((failures + 1))
	fi
}

check ""                          "csampler: nothing to profile: give -p PID or a command to run"
check "-v"                        "csampler: nothing to profile: give -p PID or a command to run"
check "--"                        "csampler: no command after '--'"
check "-p $P prog"                "csampler: give either -p PID or a command to run, not both (command: 'prog')"
check "-p abc"                    "csampler: invalid process id 'abc'"
check "-p 0"                      "csampler: invalid process id '0'"
check "-p -5"                     "csampler: invalid process id '-5'"
check "-p 4194305"                "csampler: invalid process id '4194305'"
check "-p $P -p 2"                "csampler: only one -p PID at a time"
check "-p $P -d x"                "csampler: invalid duration 'x' (examples: 30, 30s, 2m, 1.5s, 500ms)"
check "-p $P -d ''"               "csampler: invalid duration '' (examples: 30, 30s, 2m, 1.5s, 500ms)"
check "-p $P -d 10x"              "csampler: invalid duration '10x' (examples: 30, 30s, 2m, 1.5s, 500ms)"
check "-p $P -d -1"               "csampler: invalid duration '-1' (examples: 30, 30s, 2m, 1.5s, 500ms)"
check "-p $P --duration=1e3"      "csampler: invalid duration '1e3' (examples: 30, 30s, 2m, 1.5s, 500ms)"
check "-p $P -d 0"                "csampler: duration must be greater than 0 (without -d, csampler runs until the target exits or Ctrl-C)"
check "-p $P -d 9000h"            "csampler: duration '9000h' is too long (at most 366 days)"
check "-p $P -F 0"                "csampler: invalid rate '0': expected a whole number of Hz from 1 to 10000"
check "-p $P -F 10001"            "csampler: invalid rate '10001': expected a whole number of Hz from 1 to 10000"
check "-p $P --rate 99.5"         "csampler: invalid rate '99.5': expected a whole number of Hz from 1 to 10000"
check "-p $P -f png"              "csampler: invalid format 'png': expected pprof, folded, svg, text or speedscope"
check "-p $P -o ''"               "csampler: empty file name for --output"
check "-p $P -o a -o a"           "csampler: output file 'a' given twice"
check "-p $P -o - -o x.svg -o -"  "csampler: standard output ('-o -') given twice"
check "-p $P -o 1 -o 2 -o 3 -o 4 -o 5 -o 6 -o 7 -o 8 -o 9 -o 10 -o 11 -o 12 -o 13 -o 14 -o 15 -o 16 -o 17" \
                                  "csampler: too many --output files (at most 16)"
check "-p $P -f svg -o a.folded"  "csampler: --format svg applies to no output: every --output file name has its own format extension ('a.folded' is folded)"
check "-p $P -o out.json"         "csampler: unknown output file extension '.json' in 'out.json': use one of .pb.gz, .pb, .pprof, .folded, .collapsed, .svg, .txt, .speedscope.json, or name the format with --format"
check "-p $P -f folded"            "csampler: --format folded applies to no output: the default file is pprof; name one with --output"
check "--dump prog"               "csampler: --dump needs -p PID: it snapshots a running process"
check "--dump -p $P -o x"         "csampler: --dump cannot be combined with --output: it prints one snapshot of every thread to standard output"
check "--dump -p $P -d 3"         "csampler: --dump cannot be combined with --duration: it prints one snapshot of every thread to standard output"
check "--dump --top -p $P"        "csampler: --dump cannot be combined with --top: it prints one snapshot of every thread to standard output"
check "--top -o x -p $P"          "csampler: --top cannot be combined with --output: it shows a live view instead of writing a profile"
check "--top -f svg -p $P"        "csampler: --top cannot be combined with --format: it writes no file"
check "--attach-mode per-sample -- true" "csampler: --attach-mode=per-sample works with -p PID only, without --children: between samples it could not see the program's exec"
check "--attach-mode=per-sample --children -p $P" "csampler: --attach-mode=per-sample works with -p PID only, without --children: between samples it could not see new children"
check "--top --threads -p $P"     "csampler: --top cannot be combined with --threads: it ranks functions over all threads"
check "--top --thread-group a=b -p $P" "csampler: --top cannot be combined with --thread-group: it ranks functions over all threads"
check "-q -v -p $P"               "csampler: --quiet and --verbose contradict each other"
check "-p $P --addresses --no-inline" "csampler: --no-inline has no effect with --addresses (addresses are not symbolized)"
check "-p $P --annotate"          "csampler: --annotate only changes folded output, and no output is folded"
check "-p $P --annotate -o x.svg" "csampler: --annotate only changes folded output, and no output is folded"
check "-p $P --thread-group 'x[=y'" "csampler: invalid regular expression 'x[' in --thread-group: Invalid regular expression"
check "-p $P --thread-group 'a)|(b=y'" "csampler: invalid regular expression 'a)|(b' in --thread-group: Unmatched ( or \\("
check "-p $P --thread-group noeq" "csampler: invalid --thread-group 'noeq': expected REGEX=NAME"
check "-p $P --thread-group =y"   "csampler: invalid --thread-group '=y': empty regular expression"
check "-p $P --thread-group x="   "csampler: invalid --thread-group 'x=': empty group name"
check "-p $P --max-depth 3"       "csampler: invalid --max-depth '3': expected a number from 4 to 65536"
check "-p $P --max-stacks 15"     "csampler: invalid --max-stacks '15': expected a number from 16 to 10000000"
check "-p $P --stack-window 1k"   "csampler: invalid --stack-window '1k': expected a size from 4k to 8m"
check "-p $P --stack-window 9m"   "csampler: invalid --stack-window '9m': expected a size from 4k to 8m"
check "-p $P --attach-mode sometimes" "csampler: invalid --attach-mode 'sometimes': expected persistent or per-sample"
check "-p $P --realtime=100"      "csampler: invalid --realtime priority '100': expected a number from 0 to 99"
check "-p $P --realtime 50"       "csampler: give the priority as --realtime=50"
check "--bogus"                   "csampler: unknown option '--bogus'"
check "-x"                        "csampler: unknown option '-x'"
check "-qx"                       "csampler: unknown option '-x'"
check "-p"                        "csampler: option '-p' requires an argument"
check "--pid"                     "csampler: option '--pid' requires an argument"
check "-p $P --idle=1"            "csampler: option '--idle' takes no argument"
check "--t -p $P"                 "csampler: option '--t' is ambiguous (--tid, --threads, --thread-group, --top)"

[ "$failures" = 0 ] || fail "$failures command line(s) not refused as expected"

# --help and --version: stdout, status 0, nothing on stderr.
run_csampler --help
assert_eq "--help status" "$CS_STATUS" 0
assert_eq "--help first line" "$(sed -n 1p "$T/cs.out")" "Usage: csampler [OPTION]... -p PID"
assert_eq "--help stderr" "$(cat "$T/cs.err")" ""
wide=$(awk 'length($0) > 79' "$T/cs.out")
assert_eq "--help lines wider than 79 columns" "$wide" ""
run_csampler -V
assert_eq "--version status" "$CS_STATUS" 0
assert_match "--version" "$(cat "$T/cs.out")" '^csampler [0-9]+\.[0-9]+\.[0-9]+$'
exit 0
