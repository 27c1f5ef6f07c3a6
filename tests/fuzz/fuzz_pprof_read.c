/* libFuzzer harness for pprof_read (-i takes pprof files from anywhere):
 * the input is read as a profile, gzipped or not; one read back must hold
 * samples whose locations, lines, functions, mappings and threads are
 * within its tables and whose counts add up to its total, and must be
 * written by every writer (to /dev/null) without fault; bare addresses get
 * lines from a stand-in resolver in half the runs. Built and run by
 * make fuzz; replayed over corpus/pprof_read/ by make check. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* A stand-in for resymbolize (no files read while fuzzing): an odd address
 * gets two lines, an inlined frame and its caller; an even one none. */
static size_t fake_lines(void *ctx, struct profile *p, uint32_t mapping, uint64_t address,
			 struct profile_line *lines, size_t max)
{
	(void)ctx;
	if (mapping >= p->nmappings || !(address & 1) || max < 2)
		return 0;
	lines[0].function = profile_add_function(p, "inlined", "inlined", "a.c", 1);
	lines[1].function = profile_add_function(p, "caller", "caller", "a.c", 9);
	lines[0].line = 3;
	lines[1].line = 12;
	return lines[0].function == PROFILE_NONE || lines[1].function == PROFILE_NONE ? 0 : 2;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256];
	struct pprof_read_resolve resolve = { .fn = fake_lines };
	struct pprof_read_info info;
	struct profile *p = pprof_read(data, size, 64, size & 1 ? &resolve : NULL, &info, err,
				       sizeof err);
	if (strnlen(info.varying, sizeof info.varying) == sizeof info.varying)
		abort();
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
