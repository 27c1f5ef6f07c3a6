/* options_help: --help's text (the man page, csampler(1), says more). */
#include "config.h"

#include <stdio.h>

#include "options.h"

static void print_help_serving(FILE *out);

void options_print_help(FILE *out)
{
	fputs(
"Usage: csampler [OPTION]... -p PID\n"
"       csampler [OPTION]... [--] PROGRAM [ARG]...\n"
"Sample the call stacks of a running native Linux program (or of PROGRAM,\n"
"started under csampler) and write a profile: pprof, folded stacks, an SVG\n"
"flame graph or a text report.\n"
"\n"
"Target:\n"
"  -p, --pid=PID            profile the running process PID, all its threads\n"
"  -t, --tid=TID            sample only thread TID (repeatable; threads of one\n"
"                           process, which -p may name)\n"
"  -i, --input=FILE         read a pprof profile recorded before (csampler's,\n"
"                           Go's, pprof-rs's) and write it as each -o asks\n"
"      --diff               with -i BASE -i NEW: a differential flame graph (red\n"
"                           grew, blue shrank), folded BASE NEW counts, or a\n"
"                           text table of the largest changes\n"
"  PROGRAM [ARG]...         run PROGRAM and profile it; csampler exits with its\n"
"                           status\n"
"      --children           follow child processes (fork, vfork, clone) and\n"
"                           their execs\n"
"      --attach-mode=MODE   persistent (default): stay attached for the run;\n"
"                           per-sample: attach around each sample only, for\n"
"                           targets that receive many signals (-p only)\n"
"      --backend=BACKEND    ptrace (default): interrupt the running threads;\n"
"                           perf: the kernel samples them (perf_event cpu-clock)\n"
"                           without stopping them, cheaper with many threads;\n"
"                           needs root (CAP_PERFMON and CAP_BPF);\n"
"                           auto: perf where permitted, else ptrace\n"
"\n"
"Sampling:\n"
"  -d, --duration=TIME      stop after TIME: 30, 30s, 2m, 1h, 1.5s, 500ms\n"
"                           (default: until the target exits or Ctrl-C)\n"
"  -F, --rate=HZ            sampling rate, 1 to 10000 (default 99)\n"
"      --idle               wall-clock profile: count blocked threads too\n"
"                           (default: only threads running on a CPU)\n"
"      --max-depth=N        frames kept per stack, 4 to 65536 (default 1024)\n"
"      --max-stacks=N       distinct stacks kept in memory, 16 to 10000000\n"
"                           (default 65536); the rest go to a temporary file\n"
"      --stack-window=SIZE  stack bytes copied per sample, 4k to 8m\n"
"                           (default 64k); deeper stacks are marked truncated\n"
"      --realtime[=PRIO]    sample with SCHED_FIFO priority PRIO, 1 to 99\n"
"                           (default 1, where permitted), so ticks are on\n"
"                           time; 0: normal priority\n"
"\n"
"Output:\n"
"  -o, --output=FILE        write the profile to FILE (repeatable); '-' is\n"
"                           standard output (default: csampler-PID-DATE.pb.gz)\n"
"      --interval=TIME      write one profile per TIME (whole seconds) until the\n"
"                           run ends, each FILE named by its start: FILE holds\n"
"                           strftime fields, e.g. 'prof-%Y%m%dT%H%M%S.pb.gz'\n"
"  -f, --format=FORMAT      pprof, folded, svg, text or speedscope, for each\n"
"                           FILE without an extension (default pprof; folded\n"
"                           for '-')\n"
"      --threads            put a root frame NAME-TID on every stack\n"
"      --thread-group=REGEX=NAME\n"
"                           count threads whose whole name matches the extended\n"
"                           regular expression REGEX as one thread NAME\n"
"                           (repeatable; the first match wins)\n"
"      --label=KEY=VALUE    a label on every sample (pprof), in the SVG's and\n"
"                           text report's title: service=api (repeatable)\n"
"      --no-inline          do not show inlined functions as frames of their own\n"
"      --addresses          keep raw addresses, do not symbolize\n"
"      --annotate           folded output: mark inlined frames _[i], JIT _[j]\n"
"\n",
	      out);
	print_help_serving(out);
}

/* --help from "Serving" on. */
static void print_help_serving(FILE *out)
{
	fputs(
"Serving (see 'Profiling in production' in csampler(1)):\n"
"      --serve=[ADDR:]PORT  answer GET /debug/pprof/profile?seconds=N with a\n"
"                           profile of the next N seconds (go tool pprof URL,\n"
"                           Parca, Grafana Alloy) until the target exits or\n"
"                           SIGTERM; ADDR defaults to 127.0.0.1; unix:PATH\n"
"                           serves on a Unix socket (mode 0600)\n"
"      --serve-token-file=FILE\n"
"                           require 'Authorization: Bearer TOKEN', TOKEN the\n"
"                           first line of FILE\n"
"      --serve-max-seconds=N\n"
"                           longest profile a request may ask for (default 300)\n"
"\n"
"Display:\n"
"      --dump               print the stack of every thread of PID once (like\n"
"                           pstack) and exit\n"
"      --top                live view of the hottest functions; q quits\n"
"  -q, --quiet              print nothing but errors (no progress, no summary)\n"
"  -v, --verbose            tell more (repeat for more detail)\n"
"\n"
"Misc:\n"
"  -h, --help               show this help and exit\n"
"  -V, --version            show the version and exit\n"
"\n"
"File extensions: .pb .pb.gz .pprof (pprof, gzipped), .folded .collapsed,\n"
".svg, .txt, .speedscope.json (a per-thread timeline).  View pprof files with\n"
"'go tool pprof -http=: FILE', speedscope files at https://www.speedscope.app.\n"
"Exit status: 0 on success, 64 for a usage error, 1 or 65-73 when profiling\n"
"failed; with PROGRAM, the program's own status.  See csampler(1).\n",
	      out);
}
