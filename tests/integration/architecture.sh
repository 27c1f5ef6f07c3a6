#!/bin/sh
# architecture: the checkable claims of doc/internals.md hold on src/
# (scripts/check-architecture: only target calls ptrace and waits for
# tracees; no room below the modes includes options.h; file and function
# sizes; no import circle across rooms; no layer includes one above it,
# every file in a layer's folder). And the
# checker finds each kind of breach in a small tree made to break them, so
# a checker that no longer looks cannot pass.
. "$TESTS_SRCDIR/lib.sh"

CHECK=$TESTS_SRCDIR/../scripts/check-architecture
[ -x "$CHECK" ] || harness "no scripts/check-architecture"
"$CHECK" "$TESTS_SRCDIR/../src" >"$T/real.out" 2>&1 ||
	fail "src/ breaks internals.md's claims: $(cat "$T/real.out")"

# a tree that breaks every claim once
B=$T/broken
mkdir -p "$B"
printf '#include "beta.h"\nvoid alpha(void);\n' >"$B/alpha.h"
printf '#include "alpha.h"\nvoid beta(void);\n' >"$B/beta.h"
printf '#include "options.h"\nvoid gamma_(void);\n' >"$B/gamma.h"
printf 'void options(void);\n' >"$B/options.h"
{
	printf '#include "alpha.h"\n#include <sys/ptrace.h>\n'
	printf 'void alpha(void)\n{\n\tptrace(PTRACE_CONT, 0, 0, 0);\n}\n'
	printf 'static int long_one(void)\n{\n'
	i=0; while [ $i -lt 90 ]; do printf '\t(void)0;\n'; i=$((i + 1)); done
	printf '\treturn 0;\n}\n'
	i=0; while [ $i -lt 720 ]; do printf '/* filler */\n'; i=$((i + 1)); done
} >"$B/alpha.c"
printf '#include "beta.h"\nvoid beta(void)\n{\n}\n' >"$B/beta.c"
"$CHECK" "$B" >"$T/broken.out" 2>&1 && fail "the checker passed a tree that breaks every claim: $(cat "$T/broken.out")"
for what in 'alpha.c calls ptrace' 'gamma.h includes options.h' 'alpha.c has [0-9]+ lines' \
	    'alpha.c:long_one has 9[0-9] lines' 'import circle across rooms: (alpha -> beta -> alpha|beta -> alpha -> beta)'; do
	grep -Eq "check-architecture: $what" "$T/broken.out" ||
		fail "the checker did not say '$what': $(cat "$T/broken.out")"
done
# a tree in folders by layer: a lower layer that includes a higher one's
# header, and a file in no layer's folder (the modes' options.h is allowed)
Y=$T/layered
mkdir -p "$Y/base" "$Y/modes" "$Y/cli" "$Y/misc"
printf 'void high(void);\n' >"$Y/modes/high.h"
printf '#include "high.h"\nvoid low(void);\n' >"$Y/base/low.h"
printf 'struct options;\n' >"$Y/cli/options.h"
printf '#include "options.h"\n#include "low.h"\nvoid high(void)\n{\n}\n' >"$Y/modes/high.c"
printf 'void stray(void);\n' >"$Y/misc/stray.h"
"$CHECK" "$Y" >"$T/layered.out" 2>&1 && fail "the checker passed a tree that breaks the layers: $(cat "$T/layered.out")"
for what in 'base/low.h includes modes/high.h' 'misc/stray.h is in no layer'; do
	grep -Eq "check-architecture: $what" "$T/layered.out" ||
		fail "the checker did not say '$what': $(cat "$T/layered.out")"
done
grep -q 'high.c includes cli/options.h' "$T/layered.out" &&
	fail "the checker refused the modes' options.h: $(cat "$T/layered.out")"
note "$(wc -l <"$T/broken.out") breaches found in the broken tree, $(wc -l <"$T/layered.out") in the layered one, none in src/"
exit 0
