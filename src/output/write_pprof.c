/* write_pprof: the profile as pprof's protobuf (proto/profile.proto),
 * always gzipped.
 *
 * The profile is already shaped like pprof, so the message mirrors it: ids
 * are indexes + 1, strings go through one deduplicated string table whose
 * entry 0 is "". Sample values are [samples/count, cpu/nanoseconds] (wall/
 * nanoseconds for a wall-clock profile), the time being count * period, so
 * every view agrees with the folded counts. Each sample carries the labels thread (name), pid and tid
 * (numbers; no tid for a group of threads), the user's --label ones, and
 * truncated="true" when its
 * stack did not reach the root; such a stack also ends in a "[truncated]"
 * root frame (a location of its own, without a mapping), as in the other
 * formats, so pprof's graphs and flame graph do not show its outermost
 * frame as a root.
 *
 * Streamed, so memory does not grow with the samples: protobuf merges
 * concatenated messages of one type (repeated fields append, absent scalars
 * stay), so the output is one Profile message with everything but the
 * samples (tables bounded by the code seen), then one Profile message per
 * chunk of SAMPLES_PER_CHUNK samples holding only those, each packed by
 * protobuf-c and fed to one gzip stream. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "array.h"
#include "profile.pb-c.h"
#include "write_internal.h"

/* ---- building the message ----------------------------------------------- */

/* Everything the message points into, freed together. */
struct pprof_build {
	Perftools__Profiles__Profile msg;
	struct intern strings;
	Perftools__Profiles__ValueType value_types[3], *sample_type[2];
	int64_t comment[1];
	Perftools__Profiles__Mapping *mappings, **mapping_ptrs;
	Perftools__Profiles__Function *functions, **function_ptrs;
	Perftools__Profiles__Line *lines, **line_ptrs;
	Perftools__Profiles__Location *locations, **location_ptrs;
	Perftools__Profiles__Label *labels;      /* label_width per thread */
	Perftools__Profiles__Label **label_ptrs; /* label_width per thread */
	size_t label_width;                      /* 4 + the user's labels */
	size_t *nlabels;                         /* per thread, without truncated */
	uint64_t truncated_loc;                  /* the "[truncated]" location's id, 0: none */
	bool failed;                             /* out of memory on the way */
};

static void *alloc_array(size_t n, size_t size, bool *failed)
{
	void *a = calloc(n ? n : 1, size);
	if (!a)
		*failed = true;
	return a;
}

static void pprof_build_free(struct pprof_build *b)
{
	intern_free(&b->strings);
	free(b->mappings);
	free(b->mapping_ptrs);
	free(b->functions);
	free(b->function_ptrs);
	free(b->lines);
	free(b->line_ptrs);
	free(b->locations);
	free(b->location_ptrs);
	free(b->labels);
	free(b->label_ptrs);
	free(b->nlabels);
}

/* The index of S (NULL is "") in the string table, adding it; 0 (the empty
 * string) with b->failed set out of memory. */
static int64_t str(struct pprof_build *b, const char *s)
{
	if (!s)
		s = "";
	int64_t i = intern_index(&b->strings, s, strlen(s));
	if (i >= 0)
		return i;
	b->failed = true;
	return 0;
}

/* The sample and period types, the times and the command line. */
static void build_header(struct pprof_build *b, const struct profile *p)
{
	static const Perftools__Profiles__Profile profile_init = PERFTOOLS__PROFILES__PROFILE__INIT;
	static const Perftools__Profiles__ValueType vt_init = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	Perftools__Profiles__Profile *m = &b->msg;

	*m = profile_init;
	b->failed |= str(b, "") != 0;  /* string 0 is "" */
	for (size_t i = 0; i < 3; i++)
		b->value_types[i] = vt_init;
	b->value_types[0].type = str(b, "samples");
	b->value_types[0].unit = str(b, "count");
	b->value_types[1].type = str(b, p->wall ? "wall" : "cpu");
	b->value_types[1].unit = str(b, "nanoseconds");
	b->value_types[2] = b->value_types[1];
	b->sample_type[0] = &b->value_types[0];
	b->sample_type[1] = &b->value_types[1];
	m->n_sample_type = 2;
	m->sample_type = b->sample_type;
	m->period_type = &b->value_types[2];
	m->period = (int64_t)p->period_nanos;
	if (p->value_type) {
		/* read from another kind of profile (-i): its one value, kept */
		b->value_types[0].type = str(b, p->value_type);
		b->value_types[0].unit = str(b, p->value_unit);
		m->n_sample_type = 1;
		m->period_type = NULL;
		m->period = 0;
	}
	m->time_nanos = (int64_t)p->time_nanos;
	m->duration_nanos = (int64_t)p->duration_nanos;
	if (p->command && *p->command) {
		b->comment[0] = str(b, p->command);
		m->n_comment = 1;
		m->comment = b->comment;
	}
}

static void build_mappings(struct pprof_build *b, const struct profile *p)
{
	static const Perftools__Profiles__Mapping map_init = PERFTOOLS__PROFILES__MAPPING__INIT;
	for (size_t i = 0; i < p->nmappings; i++) {
		const struct profile_mapping *pm = &p->mappings[i];
		Perftools__Profiles__Mapping *mm = &b->mappings[i];
		*mm = map_init;
		mm->id = i + 1;
		mm->memory_start = pm->start;
		mm->memory_limit = pm->limit;
		mm->file_offset = pm->offset;
		mm->filename = str(b, pm->filename);
		mm->build_id = str(b, pm->build_id);
		mm->has_functions = pm->has_functions;
		mm->has_filenames = pm->has_filenames;
		mm->has_line_numbers = pm->has_line_numbers;
		mm->has_inline_frames = pm->has_inline_frames;
		b->mapping_ptrs[i] = mm;
	}
	b->msg.n_mapping = p->nmappings;
	b->msg.mapping = b->mapping_ptrs;
}

static void build_functions(struct pprof_build *b, const struct profile *p)
{
	static const Perftools__Profiles__Function fn_init = PERFTOOLS__PROFILES__FUNCTION__INIT;
	for (size_t i = 0; i < p->nfunctions; i++) {
		const struct profile_function *pf = &p->functions[i];
		Perftools__Profiles__Function *fm = &b->functions[i];
		*fm = fn_init;
		fm->id = i + 1;
		fm->name = str(b, pf->name);
		fm->system_name = str(b, pf->system_name);
		fm->filename = str(b, pf->filename);
		fm->start_line = pf->start_line;
		b->function_ptrs[i] = fm;
	}
	b->msg.n_function = p->nfunctions;
	b->msg.function = b->function_ptrs;
}

static void build_locations(struct pprof_build *b, const struct profile *p)
{
	static const Perftools__Profiles__Line line_init = PERFTOOLS__PROFILES__LINE__INIT;
	static const Perftools__Profiles__Location loc_init = PERFTOOLS__PROFILES__LOCATION__INIT;
	for (size_t i = 0; i < p->nlines; i++) {
		b->lines[i] = line_init;
		b->lines[i].function_id = (uint64_t)p->lines[i].function + 1;
		b->lines[i].line = p->lines[i].line;
		b->line_ptrs[i] = &b->lines[i];
	}
	for (size_t i = 0; i < p->nlocations; i++) {
		const struct profile_location *pl = &p->locations[i];
		Perftools__Profiles__Location *lm = &b->locations[i];
		*lm = loc_init;
		lm->id = i + 1;
		lm->mapping_id = pl->mapping == PROFILE_NONE ? 0 : (uint64_t)pl->mapping + 1;
		lm->address = pl->address;
		lm->n_line = pl->nlines;
		lm->line = pl->nlines ? &b->line_ptrs[pl->first_line] : NULL;
		b->location_ptrs[i] = lm;
	}
	b->msg.n_location = p->nlocations;
	b->msg.location = b->location_ptrs;
	if (p->truncated_samples == 0)
		return;
	/* the root frame of the truncated stacks: one more function, line
	 * and location (their arrays have the room: pprof_build) */
	static const Perftools__Profiles__Function fn_init = PERFTOOLS__PROFILES__FUNCTION__INIT;
	Perftools__Profiles__Function *fm = &b->functions[p->nfunctions];
	*fm = fn_init;
	fm->id = p->nfunctions + 1;
	fm->name = fm->system_name = str(b, "[truncated]");
	b->function_ptrs[p->nfunctions] = fm;
	b->msg.n_function = p->nfunctions + 1;
	b->lines[p->nlines] = line_init;
	b->lines[p->nlines].function_id = fm->id;
	b->line_ptrs[p->nlines] = &b->lines[p->nlines];
	Perftools__Profiles__Location *lm = &b->locations[p->nlocations];
	*lm = loc_init;
	lm->id = p->nlocations + 1;
	lm->n_line = 1;
	lm->line = &b->line_ptrs[p->nlines];
	b->location_ptrs[p->nlocations] = lm;
	b->msg.n_location = p->nlocations + 1;
	b->truncated_loc = lm->id;
}

/* Each thread's labels (thread, pid, tid when not merged, the user's), and
 * a last one, truncated=true, that a truncated sample adds (add_sample). */
static void build_thread_labels(struct pprof_build *b, const struct profile *p)
{
	static const Perftools__Profiles__Label label_init = PERFTOOLS__PROFILES__LABEL__INIT;
	int64_t truncated_key = str(b, "truncated"), truncated_value = str(b, "true");
	size_t w = b->label_width;
	for (size_t i = 0; i < p->nthreads; i++) {
		const struct profile_thread *t = &p->threads[i];
		Perftools__Profiles__Label *l = &b->labels[w * i];
		Perftools__Profiles__Label **lp = &b->label_ptrs[w * i];
		size_t n = 0;
		for (size_t k = 0; k < w; k++)
			l[k] = label_init;
		l[0].key = str(b, "thread");
		l[0].str = str(b, t->name);
		lp[n++] = &l[0];
		l[1].key = str(b, "pid");
		l[1].num = t->pid;
		lp[n++] = &l[1];
		if (t->tid) {
			l[2].key = str(b, "tid");
			l[2].num = t->tid;
			lp[n++] = &l[2];
		}
		for (size_t k = 0; k < p->nlabels; k++) {
			l[3 + k].key = str(b, p->labels[k].key);
			l[3 + k].str = str(b, p->labels[k].value);
			lp[n++] = &l[3 + k];
		}
		l[w - 1].key = truncated_key;
		l[w - 1].str = truncated_value;
		lp[n] = &l[w - 1];
		b->nlabels[i] = n;
	}
}

/* The whole message but its samples (streamed: add_sample). 0, or -1 with
 * errno ENOMEM. */
static int pprof_build(struct pprof_build *b, const struct profile *p)
{
	bool failed = false;
	b->mappings = alloc_array(p->nmappings, sizeof *b->mappings, &failed);
	b->mapping_ptrs = alloc_array(p->nmappings, sizeof *b->mapping_ptrs, &failed);
	/* (one more of each: the "[truncated]" root frame, build_locations) */
	b->functions = alloc_array(p->nfunctions + 1, sizeof *b->functions, &failed);
	b->function_ptrs = alloc_array(p->nfunctions + 1, sizeof *b->function_ptrs, &failed);
	b->lines = alloc_array(p->nlines + 1, sizeof *b->lines, &failed);
	b->line_ptrs = alloc_array(p->nlines + 1, sizeof *b->line_ptrs, &failed);
	b->locations = alloc_array(p->nlocations + 1, sizeof *b->locations, &failed);
	b->location_ptrs = alloc_array(p->nlocations + 1, sizeof *b->location_ptrs, &failed);
	b->label_width = 4 + p->nlabels;
	b->labels = alloc_array(p->nthreads, b->label_width * sizeof *b->labels, &failed);
	b->label_ptrs = alloc_array(p->nthreads, b->label_width * sizeof *b->label_ptrs, &failed);
	b->nlabels = alloc_array(p->nthreads, sizeof *b->nlabels, &failed);
	if (failed) {
		errno = ENOMEM;
		return -1;
	}
	build_header(b, p);
	build_mappings(b, p);
	build_functions(b, p);
	build_locations(b, p);
	build_thread_labels(b, p);
	b->msg.n_string_table = b->strings.n;
	b->msg.string_table = b->strings.strs;
	if (b->failed) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

/* ---- gzip and write ----------------------------------------------------- */

struct gzip_out {
	z_stream z;
	FILE *out;
	uint8_t buf[65536];
};

static int gzip_open(struct gzip_out *g, FILE *out)
{
	memset(&g->z, 0, sizeof g->z);
	g->out = out;
	/* 15 + 16: a gzip header and trailer (with a zero mtime: deterministic) */
	if (deflateInit2(&g->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

/* Compress LEN bytes of DATA (FINISH: and end the stream). */
static int gzip_write(struct gzip_out *g, const uint8_t *data, size_t len, bool finish)
{
	int zr;

	do {
		size_t chunk = len > UINT32_MAX ? UINT32_MAX : len;
		bool last = finish && chunk == len;
		g->z.next_in = (Bytef *)data;
		g->z.avail_in = (uInt)chunk;
		data += chunk;
		len -= chunk;
		do {
			g->z.next_out = g->buf;
			g->z.avail_out = sizeof g->buf;
			zr = deflate(&g->z, last ? Z_FINISH : Z_NO_FLUSH);
			if (zr == Z_STREAM_ERROR) {
				errno = EINVAL;
				return -1;
			}
			size_t have = sizeof g->buf - g->z.avail_out;
			if (have && fwrite(g->buf, 1, have, g->out) != have) {
				errno = errno ? errno : EIO;
				return -1;
			}
		} while (g->z.avail_out == 0 || (last && zr != Z_STREAM_END));
	} while (len);
	return 0;
}

/* Pack MSG into *buf (grown as needed) and compress it. */
static int pack_and_write(struct gzip_out *g, const Perftools__Profiles__Profile *msg,
			  uint8_t **buf, size_t *cap)
{
	size_t len = perftools__profiles__profile__get_packed_size(msg);

	if (array_grow(buf, cap, len, 1, 65536) < 0)
		return -1;
	perftools__profiles__profile__pack(msg, *buf);
	return gzip_write(g, *buf, len, false);
}

#define SAMPLES_PER_CHUNK 4096

/* The samples waiting to be packed: their location ids in one array. */
struct sample_chunk {
	const struct profile *p;
	struct pprof_build *b;
	struct gzip_out *g;
	Perftools__Profiles__Sample samples[SAMPLES_PER_CHUNK];
	Perftools__Profiles__Sample *ptrs[SAMPLES_PER_CHUNK];
	int64_t values[2 * SAMPLES_PER_CHUNK];
	size_t first_id[SAMPLES_PER_CHUNK];
	size_t n;
	uint64_t *ids;
	size_t nids, ids_cap;
	uint8_t *pack;
	size_t pack_cap;
};

static int flush_chunk(struct sample_chunk *c)
{
	static const Perftools__Profiles__Profile profile_init = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__Profile m = profile_init;

	if (!c->n)
		return 0;
	for (size_t i = 0; i < c->n; i++) {
		c->samples[i].location_id = c->samples[i].n_location_id ? &c->ids[c->first_id[i]] : NULL;
		c->ptrs[i] = &c->samples[i];
	}
	m.n_sample = c->n;
	m.sample = c->ptrs;
	c->n = 0;
	c->nids = 0;
	return pack_and_write(c->g, &m, &c->pack, &c->pack_cap);
}

static int add_sample(void *ctx, const struct profile_sample *ps)
{
	static const Perftools__Profiles__Sample sample_init = PERFTOOLS__PROFILES__SAMPLE__INIT;
	struct sample_chunk *c = ctx;
	Perftools__Profiles__Sample *sm;

	if (c->n == SAMPLES_PER_CHUNK && flush_chunk(c) < 0)
		return -1;
	bool truncated = (ps->flags & PROFILE_SAMPLE_TRUNCATED) && c->b->truncated_loc;
	if (array_grow(&c->ids, &c->ids_cap, c->nids + ps->nlocs + 1, sizeof *c->ids, 4096) < 0)
		return -1;
	sm = &c->samples[c->n];
	*sm = sample_init;
	c->first_id[c->n] = c->nids;
	for (uint32_t k = 0; k < ps->nlocs; k++)
		c->ids[c->nids++] = (uint64_t)ps->locs[k] + 1;
	if (truncated)
		c->ids[c->nids++] = c->b->truncated_loc;  /* the root: leaf first */
	sm->n_location_id = ps->nlocs + truncated;
	c->values[2 * c->n] = (int64_t)ps->count;
	c->values[2 * c->n + 1] = (int64_t)(ps->count * c->p->period_nanos);
	sm->n_value = c->p->value_type ? 1 : 2;
	sm->value = &c->values[2 * c->n];
	sm->label = &c->b->label_ptrs[c->b->label_width * ps->thread];
	sm->n_label = c->b->nlabels[ps->thread] + ((ps->flags & PROFILE_SAMPLE_TRUNCATED) ? 1 : 0);
	c->n++;
	return 0;
}

int write_pprof(const struct profile *p, FILE *out, const struct write_options *opt)
{
	struct pprof_build b;
	struct gzip_out *g = malloc(sizeof *g);
	struct sample_chunk *c = calloc(1, sizeof *c);
	int ret = -1, err;

	(void)opt;  /* pprof always carries the thread labels */
	memset(&b, 0, sizeof b);
	if (!g || !c) {
		free(g);
		free(c);
		errno = ENOMEM;
		return -1;
	}
	if (gzip_open(g, out) < 0) {
		free(g);
		free(c);
		return -1;
	}
	c->p = p;
	c->b = &b;
	c->g = g;
	errno = 0;
	if (pprof_build(&b, p) == 0 &&
	    pack_and_write(g, &b.msg, &c->pack, &c->pack_cap) == 0 &&
	    profile_foreach_sample(p, add_sample, c) == 0 &&
	    flush_chunk(c) == 0 &&
	    gzip_write(g, NULL, 0, true) == 0)
		ret = 0;
	err = errno ? errno : ENOMEM;
	deflateEnd(&g->z);
	pprof_build_free(&b);
	free(c->ids);
	free(c->pack);
	free(c);
	free(g);
	if (ret < 0)
		errno = err;
	return ret;
}
