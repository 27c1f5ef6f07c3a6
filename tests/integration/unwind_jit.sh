#!/bin/sh
# unwind_jit: stacks through the JIT-compiled code of real runtimes (code in
# anonymous memory, without CFI): node, then Java (a SKIP without either).
# csampler follows their frame pointers to the thread's root (node: at
# least 90% of the samples; node hot in V8's builtins, which have no CFI
# either: 95%); a stack it cannot follow is marked
# [truncated] (none ends short of its root unmarked: rbp 0 in JIT code is
# no root), and the summary's truncated count is the stacks marked so.
. "$TESTS_SRCDIR/lib.sh"
need_root

# (a program still in ld.so: its entry code, _start falling through to
# _dl_start_user, which runs the libraries' initializers (_dl_init), is
# the outermost frame, named by its code, or ld-linux-x86-64.so.2+0xOFF
# where it is not)
ROOTS="main start_thread __libc_start_call_main _start _dl_start _dl_start_user clone3 clone"

# check_stacks WHAT MIN_COMPLETE_PERCENT: $T/out.folded and $T/cs.err
check_stacks() {
	local counts total marked short said
	: >"$T/short.txt"
	assert_eq "$1: exit status ($(cat "$T/cs.err"))" "$CS_STATUS" 0
	counts=$(awk -v roots="$ROOTS" '
		BEGIN { n = split(roots, r, " "); for (i = 1; i <= n; i++) root[r[i]] = 1 }
		{ c = $NF; st = $0; sub(/ [0-9]+$/, "", st); k = split(st, f, ";"); total += c
		  if (f[1] == "[truncated]") { marked += c; next }
		  ok = f[1] ~ /^ld-linux[^;]*[+]0x/; for (i = 1; i <= k; i++) if (f[i] in root) ok = 1
		  if (!ok) { short += c; print substr(st, 1, 300) >ex } }
		END { printf "%d %d %d\n", total, marked, short }' ex="$T/short.txt" "$T/out.folded")
	total=${counts%% *} counts=${counts#* }
	marked=${counts%% *} short=${counts#* }
	note "$1: $total samples, $marked marked [truncated], $short short of a root unmarked"
	[ "$total" -gt 0 ] || fail "$1: no samples"
	[ "$short" = 0 ] || fail "$1: $short samples end short of a root without [truncated]: $(head -2 "$T/short.txt")"
	said=$(sed -n 's/^csampler: [0-9]* samples, .*, \([0-9]*\) truncated,.*/\1/p' "$T/cs.err")
	assert_eq "$1: the summary's truncated count" "$said" "$marked"
	[ $(((total - marked) * 100)) -ge $((total * $2)) ] ||
		fail "$1: only $((total - marked)) of $total stacks reach their root (less than $2%)"
}

need_cmd node
# (to node's end, not -d 2: beside two busy loops and the quick group, a
# run of 2 s had no sample, node still loading)
run_csampler -v -F 199 -o "$T/out.folded" -- node -e '
	function leaf(n) { let x = 0; for (let i = 0; i < n; i++) x = (x * 31 + i) | 0; return x; }
	function mid(n) { return leaf(n) + 1; }
	const end = Date.now() + 3000; let s = 0;
	while (Date.now() < end) s += mid(20000);
	console.log(s);'
check_stacks node 90

# node hot in V8's builtins (sort, Map, JSON: code embedded in node's text
# without CFI, reached by indirect calls): 5% of the stacks were whole
# (bad-frame in Builtins_ArrayTimSort, Builtins_MergeAt...)
run_csampler -v -F 199 -o "$T/out.folded" -- node -e '
	const end = Date.now() + 2500; const m = new Map(); let acc = 0;
	while (Date.now() < end) {
		const a = [];
		for (let i = 0; i < 2000; i++) a.push((i * 7919) % 1000);
		a.sort((x, y) => x - y);
		for (let i = 0; i < 500; i++) m.set("k" + (i % 200), i);
		acc += JSON.stringify(a.slice(0, 50)).length + m.size;
	}
	console.log(acc);'
check_stacks "node builtins" 95
assert_folded_has "$T/out.folded" ';Builtins_JSEntry;.*;Builtins_ArrayPrototypeSort;Builtins_ArrayTimSort(;| )'

command -v java >/dev/null 2>&1 || skip "java not installed (Debian openjdk-17-jre-headless): node checked, Java not"
cat >"$T/Spin.java" <<'JAVA'
public class Spin {
  static long leaf(long x) { for (int i = 0; i < 20000; i++) x = x * 6364136223846793005L + i; return x; }
  static long mid(long x) { return leaf(x) + 1; }
  public static void main(String[] a) throws Exception {
    long s = 0, end = System.currentTimeMillis() + 4000;
    while (System.currentTimeMillis() < end) { for (int k = 0; k < 50; k++) s += mid(s); Thread.sleep(2); }
    System.out.println(s);
  }
}
JAVA
run_csampler -v -F 199 -d 4 -o "$T/out.folded" -- java "$T/Spin.java"
check_stacks Java 50
exit 0
