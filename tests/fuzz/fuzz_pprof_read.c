/* libFuzzer harness for pprof_read (-i takes pprof files from anywhere):
 * the input is read as a profile, gzipped or not; one read back must hold
 * samples whose locations, lines, functions, mappings and threads are
 * within its tables and whose counts add up to its total, and must be
 * written by every writer (to /dev/null) without fault. Built and run by
 * make fuzz; replayed over corpus/pprof_read/ by make check. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "pprof_read.h"
#include "write.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct walk {
	const struct profile *p;
	uint64_t total;
};

static int check_sample(void *ctx, const struct profile_sample *s)
{
	struct walk *w = ctx;
	if (s->thread >= w->p->nthreads)
		abort();
	for (uint32_t i = 0; i < s->nlocs; i++) {
		const struct profile_location *l;
		if (s->locs[i] >= w->p->nlocations)
			abort();
		l = &w->p->locations[s->locs[i]];
		if (l->mapping != PROFILE_NONE && l->mapping >= w->p->nmappings)
			abort();
		if (l->nlines && ((size_t)l->first_line + l->nlines > w->p->nlines))
			abort();
		for (uint32_t k = 0; k < l->nlines; k++)
			if (w->p->lines[l->first_line + k].function >= w->p->nfunctions)
				abort();
	}
	w->total += s->count;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256];
	struct profile *p = pprof_read(data, size, 64, err, sizeof err);
	if (!p)
		return 0;
	struct walk w = { .p = p };
	if (profile_foreach_sample(p, check_sample, &w) != 0 || w.total != p->total_samples)
		abort();
	FILE *out = fopen("/dev/null", "w");
	if (out) {
		struct write_options wo = { .threads = true, .annotate = true };
		write_folded(p, out, &wo);
		write_text(p, out, &wo);
		write_svg(p, out, &wo);
		write_speedscope(p, out, &wo);
		write_pprof(p, out, &wo);
		fclose(out);
	}
	profile_free(p);
	return 0;
}
