/* write_pprof: the profile as pprof's protobuf (proto/profile.proto),
 * always gzipped.
 *
 * The profile is already shaped like pprof, so the message mirrors it: ids
 * are indexes + 1, strings go through one deduplicated string table whose
 * entry 0 is "". Sample values are [samples/count, cpu/nanoseconds]; the cpu
 * value is the measured CPU time when the hot path recorded one, otherwise
 * count * period. Each sample carries the labels thread (name), pid and tid
 * (numbers; no tid for a group of threads), and truncated="true" when its
 * stack did not reach the root. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "profile.pb-c.h"
#include "write.h"

/* ---- the string table --------------------------------------------------- */

struct string_table {
	char **str;              /* borrowed pointers; str[0] = "" */
	size_t n, cap;
	uint32_t *slot;          /* index + 1, 0 = empty */
	size_t nslots;           /* power of two */
};

static uint32_t string_hash(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static int string_table_grow_slots(struct string_table *t)
{
	size_t nslots = t->nslots ? t->nslots * 2 : 256;
	uint32_t *slot = calloc(nslots, sizeof *slot);

	if (!slot)
		return -1;
	for (size_t i = 0; i < t->n; i++) {
		size_t j = string_hash(t->str[i]) & (nslots - 1);
		while (slot[j])
			j = (j + 1) & (nslots - 1);
		slot[j] = (uint32_t)i + 1;
	}
	free(t->slot);
	t->slot = slot;
	t->nslots = nslots;
	return 0;
}

/* The index of S (NULL is ""), adding it; -1 on ENOMEM. */
static int64_t string_index(struct string_table *t, const char *s)
{
	size_t j;

	if (!s)
		s = "";
	if ((t->n + 1) * 2 > t->nslots && string_table_grow_slots(t) < 0)
		return -1;
	for (j = string_hash(s) & (t->nslots - 1); t->slot[j]; j = (j + 1) & (t->nslots - 1))
		if (strcmp(t->str[t->slot[j] - 1], s) == 0)
			return t->slot[j] - 1;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		char **str = realloc(t->str, cap * sizeof *str);
		if (!str)
			return -1;
		t->str = str;
		t->cap = cap;
	}
	if (t->n >= UINT32_MAX - 1)
		return -1;
	t->str[t->n] = (char *)s;
	t->slot[j] = (uint32_t)t->n + 1;
	return (int64_t)t->n++;
}

static void string_table_free(struct string_table *t)
{
	free(t->str);
	free(t->slot);
}

/* ---- building the message ----------------------------------------------- */

/* Everything the message points into, freed together. */
struct pprof_build {
	Perftools__Profiles__Profile msg;
	struct string_table strings;
	Perftools__Profiles__ValueType value_types[3], *sample_type[2];
	int64_t comment[1];
	Perftools__Profiles__Mapping *mappings, **mapping_ptrs;
	Perftools__Profiles__Function *functions, **function_ptrs;
	Perftools__Profiles__Line *lines, **line_ptrs;
	Perftools__Profiles__Location *locations, **location_ptrs;
	Perftools__Profiles__Label *labels;      /* 4 per thread */
	Perftools__Profiles__Label **label_ptrs; /* 4 per thread */
	size_t *nlabels;                         /* per thread, without truncated */
	Perftools__Profiles__Sample *samples, **sample_ptrs;
	uint64_t *location_ids;
	int64_t *values;                         /* 2 per sample */
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
	string_table_free(&b->strings);
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
	free(b->samples);
	free(b->sample_ptrs);
	free(b->location_ids);
	free(b->values);
}

#define STR(b, s, fail) ({ int64_t i_ = string_index(&(b)->strings, (s)); if (i_ < 0) goto fail; i_; })

static int pprof_build(struct pprof_build *b, const struct profile *p)
{
	Perftools__Profiles__Profile *m = &b->msg;
	static const Perftools__Profiles__Profile profile_init = PERFTOOLS__PROFILES__PROFILE__INIT;
	static const Perftools__Profiles__ValueType vt_init = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	static const Perftools__Profiles__Mapping map_init = PERFTOOLS__PROFILES__MAPPING__INIT;
	static const Perftools__Profiles__Function fn_init = PERFTOOLS__PROFILES__FUNCTION__INIT;
	static const Perftools__Profiles__Line line_init = PERFTOOLS__PROFILES__LINE__INIT;
	static const Perftools__Profiles__Location loc_init = PERFTOOLS__PROFILES__LOCATION__INIT;
	static const Perftools__Profiles__Label label_init = PERFTOOLS__PROFILES__LABEL__INIT;
	static const Perftools__Profiles__Sample sample_init = PERFTOOLS__PROFILES__SAMPLE__INIT;
	bool failed = false;
	int64_t truncated_key, truncated_value;
	size_t i;

	*m = profile_init;
	if (string_index(&b->strings, "") != 0)
		goto fail;

	for (i = 0; i < 3; i++)
		b->value_types[i] = vt_init;
	b->value_types[0].type = STR(b, "samples", fail);
	b->value_types[0].unit = STR(b, "count", fail);
	b->value_types[1].type = STR(b, "cpu", fail);
	b->value_types[1].unit = STR(b, "nanoseconds", fail);
	b->value_types[2] = b->value_types[1];
	b->sample_type[0] = &b->value_types[0];
	b->sample_type[1] = &b->value_types[1];
	m->n_sample_type = 2;
	m->sample_type = b->sample_type;
	m->period_type = &b->value_types[2];
	m->period = (int64_t)p->period_nanos;
	m->time_nanos = (int64_t)p->time_nanos;
	m->duration_nanos = (int64_t)p->duration_nanos;
	if (p->command && *p->command) {
		b->comment[0] = STR(b, p->command, fail);
		m->n_comment = 1;
		m->comment = b->comment;
	}

	b->mappings = alloc_array(p->nmappings, sizeof *b->mappings, &failed);
	b->mapping_ptrs = alloc_array(p->nmappings, sizeof *b->mapping_ptrs, &failed);
	b->functions = alloc_array(p->nfunctions, sizeof *b->functions, &failed);
	b->function_ptrs = alloc_array(p->nfunctions, sizeof *b->function_ptrs, &failed);
	b->lines = alloc_array(p->nlines, sizeof *b->lines, &failed);
	b->line_ptrs = alloc_array(p->nlines, sizeof *b->line_ptrs, &failed);
	b->locations = alloc_array(p->nlocations, sizeof *b->locations, &failed);
	b->location_ptrs = alloc_array(p->nlocations, sizeof *b->location_ptrs, &failed);
	b->labels = alloc_array(p->nthreads, 4 * sizeof *b->labels, &failed);
	b->label_ptrs = alloc_array(p->nthreads, 4 * sizeof *b->label_ptrs, &failed);
	b->nlabels = alloc_array(p->nthreads, sizeof *b->nlabels, &failed);
	b->samples = alloc_array(p->nsamples, sizeof *b->samples, &failed);
	b->sample_ptrs = alloc_array(p->nsamples, sizeof *b->sample_ptrs, &failed);
	b->location_ids = alloc_array(p->nsample_locs, sizeof *b->location_ids, &failed);
	b->values = alloc_array(p->nsamples, 2 * sizeof *b->values, &failed);
	if (failed)
		goto fail;

	for (i = 0; i < p->nmappings; i++) {
		const struct profile_mapping *pm = &p->mappings[i];
		Perftools__Profiles__Mapping *mm = &b->mappings[i];
		*mm = map_init;
		mm->id = i + 1;
		mm->memory_start = pm->start;
		mm->memory_limit = pm->limit;
		mm->file_offset = pm->offset;
		mm->filename = STR(b, pm->filename, fail);
		mm->build_id = STR(b, pm->build_id, fail);
		mm->has_functions = pm->has_functions;
		mm->has_filenames = pm->has_filenames;
		mm->has_line_numbers = pm->has_line_numbers;
		mm->has_inline_frames = pm->has_inline_frames;
		b->mapping_ptrs[i] = mm;
	}
	m->n_mapping = p->nmappings;
	m->mapping = b->mapping_ptrs;

	for (i = 0; i < p->nfunctions; i++) {
		const struct profile_function *pf = &p->functions[i];
		Perftools__Profiles__Function *fm = &b->functions[i];
		*fm = fn_init;
		fm->id = i + 1;
		fm->name = STR(b, pf->name, fail);
		fm->system_name = STR(b, pf->system_name, fail);
		fm->filename = STR(b, pf->filename, fail);
		fm->start_line = pf->start_line;
		b->function_ptrs[i] = fm;
	}
	m->n_function = p->nfunctions;
	m->function = b->function_ptrs;

	for (i = 0; i < p->nlines; i++) {
		b->lines[i] = line_init;
		b->lines[i].function_id = (uint64_t)p->lines[i].function + 1;
		b->lines[i].line = p->lines[i].line;
		b->line_ptrs[i] = &b->lines[i];
	}
	for (i = 0; i < p->nlocations; i++) {
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
	m->n_location = p->nlocations;
	m->location = b->location_ptrs;

	truncated_key = STR(b, "truncated", fail);
	truncated_value = STR(b, "true", fail);
	for (i = 0; i < p->nthreads; i++) {
		const struct profile_thread *t = &p->threads[i];
		Perftools__Profiles__Label *l = &b->labels[4 * i];
		Perftools__Profiles__Label **lp = &b->label_ptrs[4 * i];
		size_t n = 0;
		for (size_t k = 0; k < 4; k++)
			l[k] = label_init;
		l[0].key = STR(b, "thread", fail);
		l[0].str = STR(b, t->name, fail);
		lp[n++] = &l[0];
		l[1].key = STR(b, "pid", fail);
		l[1].num = t->pid;
		lp[n++] = &l[1];
		if (t->tid) {
			l[2].key = STR(b, "tid", fail);
			l[2].num = t->tid;
			lp[n++] = &l[2];
		}
		l[3].key = truncated_key;
		l[3].str = truncated_value;
		lp[n] = &l[3];
		b->nlabels[i] = n;
	}

	for (i = 0; i < p->nsamples; i++) {
		const struct profile_sample *ps = &p->samples[i];
		Perftools__Profiles__Sample *sm = &b->samples[i];
		*sm = sample_init;
		for (uint32_t k = 0; k < ps->nlocs; k++)
			b->location_ids[ps->first_loc + k] =
				(uint64_t)p->sample_locs[ps->first_loc + k] + 1;
		sm->n_location_id = ps->nlocs;
		sm->location_id = ps->nlocs ? &b->location_ids[ps->first_loc] : NULL;
		b->values[2 * i] = (int64_t)ps->count;
		b->values[2 * i + 1] = (int64_t)(ps->cpu_ns ? ps->cpu_ns
						 : ps->count * p->period_nanos);
		sm->n_value = 2;
		sm->value = &b->values[2 * i];
		sm->label = &b->label_ptrs[4 * ps->thread];
		sm->n_label = b->nlabels[ps->thread] +
			      ((ps->flags & PROFILE_SAMPLE_TRUNCATED) ? 1 : 0);
		b->sample_ptrs[i] = sm;
	}
	m->n_sample = p->nsamples;
	m->sample = b->sample_ptrs;

	m->n_string_table = b->strings.n;
	m->string_table = b->strings.str;
	return 0;
fail:
	errno = ENOMEM;
	return -1;
}

/* ---- gzip and write ----------------------------------------------------- */

static int write_gzip(const uint8_t *data, size_t len, FILE *out)
{
	uint8_t buf[65536];
	z_stream z;
	int zr, ret = 0;

	memset(&z, 0, sizeof z);
	/* 15 + 16: a gzip header and trailer (with a zero mtime: deterministic) */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		errno = ENOMEM;
		return -1;
	}
	do {
		size_t chunk = len > UINT32_MAX ? UINT32_MAX : len;
		z.next_in = (Bytef *)data;
		z.avail_in = (uInt)chunk;
		data += chunk;
		len -= chunk;
		do {
			z.next_out = buf;
			z.avail_out = sizeof buf;
			zr = deflate(&z, len ? Z_NO_FLUSH : Z_FINISH);
			if (zr == Z_STREAM_ERROR) {
				errno = EINVAL;
				ret = -1;
				break;
			}
			size_t have = sizeof buf - z.avail_out;
			if (have && fwrite(buf, 1, have, out) != have) {
				errno = errno ? errno : EIO;
				ret = -1;
				break;
			}
		} while (z.avail_out == 0);
	} while (ret == 0 && len);
	if (ret == 0 && zr != Z_STREAM_END) {
		errno = EIO;
		ret = -1;
	}
	deflateEnd(&z);
	return ret;
}

int write_pprof(const struct profile *p, FILE *out, const struct write_options *opt)
{
	struct pprof_build b;
	uint8_t *buf;
	size_t len;
	int ret;

	(void)opt;  /* pprof always carries the thread labels */
	memset(&b, 0, sizeof b);
	if (pprof_build(&b, p) < 0) {
		pprof_build_free(&b);
		errno = ENOMEM;
		return -1;
	}
	len = perftools__profiles__profile__get_packed_size(&b.msg);
	buf = malloc(len ? len : 1);
	if (!buf) {
		pprof_build_free(&b);
		errno = ENOMEM;
		return -1;
	}
	perftools__profiles__profile__pack(&b.msg, buf);
	pprof_build_free(&b);
	ret = write_gzip(buf, len, out);
	free(buf);
	return ret;
}
