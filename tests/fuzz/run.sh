#!/bin/sh
# tests/fuzz/run.sh NAME SECONDS CORPUS: run the libFuzzer harness
# fuzz/fuzz_NAME (built by make fuzz, from the build's tests directory) for
# SECONDS over a copy of its corpus in fuzz/work/NAME plus CORPUS; print
# its lines at once when it ends (make fuzz runs several side by side):
# "  FUZZ     NAME for SECONDS s" and its stats, or its log's tail and a
# non-zero status on a crash (fuzz/crash-NAME-* then holds the input).
set -u
name=$1 seconds=$2 corpus=$3
mkdir -p "fuzz/work/$name" || exit 1
if ./fuzz/fuzz_"$name" -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 \
	-artifact_prefix="fuzz/crash-$name-" "fuzz/work/$name" "$corpus" >"fuzz/fuzz_$name.log" 2>&1; then
	printf '  FUZZ     %s for %s s\n%s\n' "$name" "$seconds" \
		"$(grep -E '^stat::(number_of_executed_units|new_units_added)' "fuzz/fuzz_$name.log" | tr '\n' ' ')"
else
	printf '  FUZZ     %s CRASHED (fuzz/crash-%s-*)\n%s\n' "$name" "$name" "$(tail -40 "fuzz/fuzz_$name.log")"
	exit 1
fi
