/* symlookup: symbolize addresses of a live process with the real procmaps
 * and symbolize rooms, for the sym_*.sh integration tests (exact frames and
 * lines, independent of sampling).
 *
 *   symlookup [-n] [-r] PID ADDR [LEN]
 *
 * Without -r: one line for ADDR (hex, looked up as an activation address).
 * With -r: every byte address in [ADDR, ADDR+LEN), one line per distinct
 * frame chain, sorted by first address. -n collapses inline chains
 * (--no-inline). A line lists the frames innermost first:
 *
 *   FUNCTION@FILE:LINE[ (inlined)] ; FUNCTION@FILE:LINE ...
 *
 * FILE is the basename; "??:0" when unknown; "[jit]" marks perf-map frames.
 * The last line says "module PATH build-id HEX|-". Exit 0, 1 on bad usage,
 * 2 when the process cannot be read. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "address.h"
#include "procmaps.h"
#include "symbolize.h"

#define MAX_FRAMES 64
#define MAX_RANGE (1u << 20)
#define MAX_CHAINS 4096

static void format_chain(const struct symbol_frame *f, size_t n, char *buf, size_t size)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < n && used < size; i++) {
		const char *file = f[i].file != NULL ? strrchr(f[i].file, '/') : NULL;
		file = file != NULL ? file + 1 : f[i].file != NULL ? f[i].file : "??";
		int w = snprintf(buf + used, size - used, "%s%s@%s:%d%s%s", i > 0 ? " ; " : "",
				 f[i].function, file, f[i].line, f[i].inlined ? " (inlined)" : "",
				 f[i].jit ? " [jit]" : "");
		if (w < 0)
			break;
		used += (size_t)w;
	}
}

int main(int argc, char **argv)
{
	struct symbolize_options opt = { 0 };
	bool range = false;
	int c;
	while ((c = getopt(argc, argv, "nr")) != -1) {
		if (c == 'n')
			opt.no_inline = true;
		else if (c == 'r')
			range = true;
		else
			return 1;
	}
	if (argc - optind < (range ? 3 : 2)) {
		fprintf(stderr, "usage: symlookup [-n] [-r] PID ADDR [LEN]\n");
		return 1;
	}
	pid_t pid = (pid_t)strtol(argv[optind], NULL, 10);
	uint64_t addr = strtoull(argv[optind + 1], NULL, 16);
	uint64_t len = range ? strtoull(argv[optind + 2], NULL, 0) : 1;
	if (len == 0 || len > MAX_RANGE)
		return 1;
	struct procmaps *pm = procmaps_new(pid);
	if (pm == NULL || procmaps_refresh(pm) < 0) {
		perror("symlookup: procmaps");
		return 2;
	}
	procmaps_load_perf_map(pm);
	struct symbolizer *s = symbolizer_new(pm, &opt);
	if (s == NULL) {
		perror("symlookup: symbolizer");
		return 2;
	}
	char (*chains)[2048] = malloc(MAX_CHAINS * sizeof *chains);
	if (chains == NULL)
		return 2;
	size_t nchains = 0;
	char buf[2048];
	for (uint64_t a = addr; a < addr + len; a++) {
		struct symbol_frame f[MAX_FRAMES];
		size_t n = symbolizer_lookup(s, a | ADDR_ACTIVATION, f, MAX_FRAMES);
		format_chain(f, n, buf, sizeof buf);
		size_t i = 0;
		while (i < nchains && strcmp(chains[i], buf) != 0)
			i++;
		if (i == nchains && nchains < MAX_CHAINS) {
			memcpy(chains[nchains++], buf, sizeof buf);
			printf("%s\n", buf);
		}
	}
	struct symbol_module m;
	if (symbolizer_module(s, addr | ADDR_ACTIVATION, &m))
		printf("module %s build-id %s\n", m.path, m.build_id != NULL ? m.build_id : "-");
	free(chains);
	symbolizer_free(s);
	procmaps_free(pm);
	return 0;
}
