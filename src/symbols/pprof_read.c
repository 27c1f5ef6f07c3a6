/* pprof_read: a pprof profile read back into a profile (see pprof_read.h). */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "addrmap.h"
#include "array.h"
#include "pprof_read.h"
#include "profile.pb-c.h"

/* addrmap's "pid" says which id space a key is in */
enum { IDS_FUNCTION = 1, IDS_MAPPING, IDS_LOCATION };

/* The most labels kept as the profile's (the same on every sample), and
 * PPROF_READ_VARYING_MAX: the most keys of labels that differ named. */
#define COMMON_MAX 16

/* The most lines a resolved location gets (an inline chain). */
#define RESOLVE_MAX_LINES 64

/* What the file may make csampler build, however few bytes it takes:
 * protobuf-c's structures at most MESSAGE_GROWTH times the message's size
 * (a field of two bytes, an empty sample, is a structure of ~100: 64 MB of
 * them asked for 4 GB), a location's lines at most LINES_MAX (an inline
 * chain; the innermost kept, and its function), a name or path at most
 * NAME_MAX bytes (as a recording's), a sample's count so that the total
 * in nanoseconds fits pprof's int64. */
#define MESSAGE_GROWTH 16u
#define MESSAGE_SLACK ((size_t)64 << 20)
#define LINES_MAX 256u
#define NAME_MAX_BYTES 4096u

/* protobuf-c's allocator, counting what the message builds. */
struct budget {
	ProtobufCAllocator a;
	size_t used, limit;
	bool exceeded;
};

static void *budget_alloc(void *ctx, size_t size)
{
	struct budget *b = ctx;
	if (size > b->limit - b->used) {
		b->exceeded = true;
		return NULL;
	}
	b->used += size;
	return malloc(size);
}

static void budget_free(void *ctx, void *ptr)
{
	(void)ctx;
	free(ptr);
}

struct reader {
	const Perftools__Profiles__Profile *m;
	struct profile *p;
	struct addrmap ids;             /* (space, id) -> profile index */
	uint64_t truncated_loc;         /* the id of csampler's "[truncated]" root, or 0 */
	const char *program;            /* the default thread's name */
	uint32_t *locs;                 /* one sample's stack */
	struct profile_line *lines;     /* one location's lines */
	size_t lines_cap;
	size_t vi;                      /* the value read */
	uint64_t ns_per_value;          /* > 0: the value is nanoseconds, this many a period */
	uint64_t skipped;               /* samples with a negative value */
	const struct pprof_read_resolve *resolve;
	struct pprof_read_info *info;   /* or NULL */
	struct { const char *key, *value; } common[COMMON_MAX]; /* on every sample so far */
	size_t ncommon;
	bool any_sample;                /* common[] holds the first sample's labels */
	size_t nunnamed, unnamed_cap;
	bool *unnamed;                  /* by mapping index: the file says it has no
	                                 * function names (its lines, if any, are
	                                 * placeholders such as csampler's module+0xOFF) */
	char name[3][NAME_MAX_BYTES + 1]; /* names cut to NAME_MAX_BYTES (capped) */
	uint64_t total;                 /* periods kept so far */
	char *err;
	size_t errsz;
};

/* S cut to NAME_MAX_BYTES (into the reader's slot SLOT when longer), at a
 * character's start. */
static const char *capped(struct reader *r, unsigned slot, const char *s)
{
	size_t n = strnlen(s, NAME_MAX_BYTES + 1);
	if (n <= NAME_MAX_BYTES)
		return s;
	n = NAME_MAX_BYTES;
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	memcpy(r->name[slot], s, n);
	r->name[slot][n] = '\0';
	return r->name[slot];
}

__attribute__((format(printf, 2, 3)))
static int fail(struct reader *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->err, r->errsz, fmt, ap);
	va_end(ap);
	return -1;
}

/* String I of the table, or NULL (out of range). */
static const char *str(const struct reader *r, int64_t i)
{
	if (i < 0 || (uint64_t)i >= r->m->n_string_table || !r->m->string_table[i])
		return NULL;
	return r->m->string_table[i];
}

/* Gzip (by its magic) inflated into a new buffer, or a copy: *OUT, *OUTLEN. */
static int inflate_input(struct reader *r, const uint8_t *data, size_t len, uint8_t **out,
			 size_t *outlen)
{
	if (len < 2 || data[0] != 0x1f || data[1] != 0x8b) {
		if (len > PPROF_READ_MAX_BYTES)
			return fail(r, "larger than %zu MB", PPROF_READ_MAX_BYTES >> 20);
		*out = malloc(len ? len : 1);
		if (!*out)
			return fail(r, "out of memory");
		memcpy(*out, data, len);
		*outlen = len;
		return 0;
	}
	if (len > PPROF_READ_MAX_BYTES)
		return fail(r, "larger than %zu MB", PPROF_READ_MAX_BYTES >> 20);
	z_stream z = { 0 };
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return fail(r, "cannot start zlib");
	size_t cap = len < (1u << 20) ? (1u << 20) : 4 * len, n = 0;
	if (cap > PPROF_READ_MAX_BYTES)
		cap = PPROF_READ_MAX_BYTES;
	uint8_t *buf = malloc(cap);
	int rc = Z_OK;
	z.next_in = (Bytef *)data;
	z.avail_in = (uInt)len;
	while (buf && rc == Z_OK) {
		if (n == cap) {
			if (cap == PPROF_READ_MAX_BYTES) {
				free(buf);
				inflateEnd(&z);
				return fail(r, "inflates to more than %zu MB", PPROF_READ_MAX_BYTES >> 20);
			}
			size_t nc = cap * 2 > PPROF_READ_MAX_BYTES ? PPROF_READ_MAX_BYTES : cap * 2;
			uint8_t *nb = realloc(buf, nc);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap = nc;
		}
		z.next_out = buf + n;
		z.avail_out = (uInt)(cap - n);
		rc = inflate(&z, Z_NO_FLUSH);
		n = (size_t)(z.next_out - buf);
		if (rc == Z_BUF_ERROR) {
			if (z.avail_in == 0)
				break;   /* the input ended inside the stream */
			rc = Z_OK;       /* the output is full: it grows */
		}
	}
	inflateEnd(&z);
	if (!buf)
		return fail(r, "out of memory");
	if (rc != Z_STREAM_END) {
		free(buf);
		return fail(r, "a damaged or cut gzip stream");
	}
	*out = buf;
	*outlen = n;
	return 0;
}

/* A profile of something else than time (heap bytes, objects, lock
 * contentions): the value pprof shows by default is read as it is, its
 * type and unit kept (the profile's default sample type, else the last). */
static int choose_other_value(struct reader *r)
{
	const Perftools__Profiles__Profile *m = r->m;
	r->vi = m->n_sample_type - 1;
	const char *dflt = m->default_sample_type ? str(r, m->default_sample_type) : NULL;
	for (size_t i = 0; dflt && i < m->n_sample_type; i++)
		if (strcmp(str(r, m->sample_type[i]->type), dflt) == 0)
			r->vi = i;
	const Perftools__Profiles__ValueType *vt = m->sample_type[r->vi];
	if (profile_set_value_type(r->p, str(r, vt->type), str(r, vt->unit)) < 0)
		return fail(r, "out of memory");
	return 0;
}

/* Which value is read, and how it becomes periods of time (a CPU or
 * wall-clock profile), or a count of what it measures (any other). */
static int choose_value(struct reader *r)
{
	const Perftools__Profiles__Profile *m = r->m;
	size_t count_vi = SIZE_MAX, ns_vi = SIZE_MAX;
	const char *type = NULL;
	for (size_t i = 0; i < m->n_sample_type; i++) {
		const char *t = str(r, m->sample_type[i]->type), *u = str(r, m->sample_type[i]->unit);
		if (!t || !u)
			return fail(r, "sample type %zu names no string", i);
		if (strcmp(u, "count") == 0 && count_vi == SIZE_MAX)
			count_vi = i;
		if (strcmp(u, "nanoseconds") == 0 && ns_vi == SIZE_MAX)
			ns_vi = i;
		if (!type)
			type = t;
	}
	if (!type)
		return fail(r, "no sample type");
	int64_t period = 0;
	if (m->period_type) {
		const char *pu = str(r, m->period_type->unit);
		if (pu && strcmp(pu, "nanoseconds") == 0 && m->period > 0)
			period = m->period;
	}
	if (ns_vi == SIZE_MAX && (!period || count_vi == SIZE_MAX))
		return choose_other_value(r);
	if (count_vi != SIZE_MAX && period) {
		r->vi = count_vi;
		r->p->period_nanos = (uint64_t)period;
	} else if (ns_vi != SIZE_MAX) {
		/* nanoseconds only: periods of the profile's period, else of 10 ms */
		r->vi = ns_vi;
		r->ns_per_value = period ? (uint64_t)period : 10000000u;
		r->p->period_nanos = r->ns_per_value;
	}
	const char *vt = str(r, m->sample_type[ns_vi != SIZE_MAX ? ns_vi : r->vi]->type);
	r->p->wall = vt && strcmp(vt, "wall") == 0;
	return 0;
}

/* Keep INDEX, what was made of id ID in SPACE. 0, or -1 (said): out of
 * memory (INDEX PROFILE_NONE: the profile's), or the id given twice. */
static int keep_id(struct reader *r, int space, uint64_t id, uint32_t index)
{
	static const char *const what[] = {
		[IDS_FUNCTION] = "function", [IDS_MAPPING] = "mapping", [IDS_LOCATION] = "location",
	};
	uint32_t *slot = index == PROFILE_NONE ? NULL : addrmap_slot(&r->ids, space, id);
	if (!slot)
		return fail(r, "out of memory");
	if (*slot != ADDRMAP_EMPTY)
		return fail(r, "%s id %llu given twice", what[space], (unsigned long long)id);
	*slot = index;
	return 0;
}

static int read_functions(struct reader *r)
{
	for (size_t i = 0; i < r->m->n_function; i++) {
		const Perftools__Profiles__Function *f = r->m->function[i];
		const char *name = str(r, f->name), *sys = str(r, f->system_name),
			   *file = str(r, f->filename);
		if (!f->id || !name || !sys || !file)
			return fail(r, "function %zu: no id or a bad string index", i);
		if (keep_id(r, IDS_FUNCTION, f->id,
			    profile_add_function(r->p, capped(r, 0, name), capped(r, 1, sys),
						 capped(r, 2, file), f->start_line)) < 0)
			return -1;
	}
	return 0;
}

static int read_mappings(struct reader *r)
{
	for (size_t i = 0; i < r->m->n_mapping; i++) {
		const Perftools__Profiles__Mapping *mp = r->m->mapping[i];
		const char *file = str(r, mp->filename), *bid = str(r, mp->build_id);
		if (!mp->id || !file || !bid)
			return fail(r, "mapping %zu: no id or a bad string index", i);
		if (i == 0 && *file) {
			const char *base = strrchr(file, '/');
			r->program = base ? base + 1 : file;
		}
		struct profile_mapping pm = {
			.start = mp->memory_start, .limit = mp->memory_limit, .offset = mp->file_offset,
			.filename = capped(r, 0, file), .build_id = capped(r, 1, bid),
			.has_functions = mp->has_functions,
			.has_filenames = mp->has_filenames, .has_line_numbers = mp->has_line_numbers,
			.has_inline_frames = mp->has_inline_frames,
		};
		uint32_t index = profile_add_mapping(r->p, &pm);
		if (keep_id(r, IDS_MAPPING, mp->id, index) < 0)
			return -1;
		if (index >= r->nunnamed) {
			if (array_grow(&r->unnamed, &r->unnamed_cap, (size_t)index + 1,
				       sizeof *r->unnamed, 16) < 0)
				return fail(r, "out of memory");
			while (r->nunnamed <= index)
				r->unnamed[r->nunnamed++] = false;
		}
		r->unnamed[index] = !mp->has_functions;
	}
	return 0;
}

/* The profile index of id ID in SPACE, or PROFILE_NONE when unknown. */
static uint32_t index_of(struct reader *r, int space, uint64_t id)
{
	uint32_t *slot = addrmap_slot(&r->ids, space, id);
	return slot && *slot != ADDRMAP_EMPTY ? *slot : PROFILE_NONE;
}

static int read_locations(struct reader *r)
{
	for (size_t i = 0; i < r->m->n_location; i++) {
		const Perftools__Profiles__Location *l = r->m->location[i];
		if (!l->id)
			return fail(r, "location %zu has no id", i);
		uint32_t mapping = PROFILE_NONE;
		if (l->mapping_id && (mapping = index_of(r, IDS_MAPPING, l->mapping_id)) == PROFILE_NONE)
			return fail(r, "location %llu names no mapping", (unsigned long long)l->id);
		/* (more than LINES_MAX: the innermost LINES_MAX - 1 and the
		 * location's own function, the outermost) */
		size_t nlines = l->n_line < LINES_MAX ? l->n_line : LINES_MAX, named = 0;
		if (array_grow(&r->lines, &r->lines_cap, nlines, sizeof *r->lines, 16) < 0)
			return fail(r, "out of memory");
		for (size_t k = 0; k < nlines; k++) {
			const Perftools__Profiles__Line *ln =
				l->line[k + 1 == nlines ? l->n_line - 1 : k];
			r->lines[k].function = index_of(r, IDS_FUNCTION, ln->function_id);
			r->lines[k].line = ln->line;
			if (r->lines[k].function == PROFILE_NONE)
				return fail(r, "location %llu names no function", (unsigned long long)l->id);
		}
		if (mapping != PROFILE_NONE && l->address && r->resolve &&
		    (!nlines || r->unnamed[mapping])) {
			if (array_grow(&r->lines, &r->lines_cap, nlines + RESOLVE_MAX_LINES,
				       sizeof *r->lines, 16) < 0)
				return fail(r, "out of memory");
			if (nlines) {
				/* the file's placeholders stay unless names are found */
				named = r->resolve->fn(r->resolve->ctx, r->p, mapping, l->address,
						       r->lines + nlines, RESOLVE_MAX_LINES);
				memmove(r->lines, r->lines + nlines, named * sizeof *r->lines);
			} else {
				named = r->resolve->fn(r->resolve->ctx, r->p, mapping, l->address,
						       r->lines, RESOLVE_MAX_LINES);
			}
			if (named)
				nlines = named;
		}
		if (!l->mapping_id && l->n_line == 1 &&
		    strcmp(r->p->functions[r->lines[0].function].name, "[truncated]") == 0)
			r->truncated_loc = l->id;
		if (keep_id(r, IDS_LOCATION, l->id,
			    profile_add_location(r->p, l->address, mapping, r->lines, nlines,
						 false)) < 0)
			return -1;
	}
	return 0;
}

/* Labels csampler reads into threads and marks. */
static bool label_is_ours(const char *key)
{
	return strcmp(key, "thread") == 0 || strcmp(key, "pid") == 0 || strcmp(key, "tid") == 0 ||
	       strcmp(key, "truncated") == 0;
}

/* Note KEY, a label that is not the same on every sample. */
static void note_varying(struct reader *r, const char *key)
{
	if (!r->info)
		return;
	char *v = r->info->varying;
	size_t len = strlen(v), klen = strlen(key);
	for (const char *c = v; *c;) {
		size_t n = strcspn(c, ",");
		if (n == klen && strncmp(c, key, n) == 0)
			return;
		c += n + (c[n] == ',');
	}
	if (r->info->nvarying >= PPROF_READ_VARYING_MAX || len + klen + 2 > sizeof r->info->varying) {
		r->info->nvarying++;
		return;
	}
	snprintf(v + len, sizeof r->info->varying - len, "%s%s", len ? "," : "", key);
	r->info->nvarying++;
}

/* The string labels of S other than ours: the first sample's become the
 * candidates for the profile's labels; a later sample drops those it does
 * not carry with the same value, and its own others are noted as varying. */
static void track_labels(struct reader *r, const Perftools__Profiles__Sample *s)
{
	for (size_t i = 0; i < s->n_label; i++) {
		const char *key = str(r, s->label[i]->key), *value = str(r, s->label[i]->str);
		if (!key || !*key || label_is_ours(key))
			continue;
		if (!value || !*value)
			continue;  /* a number (a heap sample's bytes...): the sample's own */
		if (!r->any_sample) {
			if (r->ncommon < COMMON_MAX) {
				r->common[r->ncommon].key = key;
				r->common[r->ncommon++].value = value;
			} else {
				note_varying(r, key);
			}
			continue;
		}
		bool kept = false;
		for (size_t c = 0; c < r->ncommon && !kept; c++)
			kept = strcmp(r->common[c].key, key) == 0 && strcmp(r->common[c].value, value) == 0;
		if (!kept)
			note_varying(r, key);
	}
	if (!r->any_sample) {
		r->any_sample = true;
		return;
	}
	for (size_t c = 0; c < r->ncommon;) {
		bool has = false;
		for (size_t i = 0; i < s->n_label && !has; i++) {
			const char *key = str(r, s->label[i]->key), *value = str(r, s->label[i]->str);
			has = key && value && strcmp(r->common[c].key, key) == 0 &&
			      strcmp(r->common[c].value, value) == 0;
		}
		if (has) {
			c++;
			continue;
		}
		note_varying(r, r->common[c].key);
		r->common[c] = r->common[--r->ncommon];
	}
}

/* The thread a sample's labels name, and whether it is marked truncated. */
static uint32_t sample_thread(struct reader *r, const Perftools__Profiles__Sample *s,
			      bool *truncated)
{
	const char *name = NULL;
	int64_t pid = 0, tid = 0;
	*truncated = false;
	for (size_t i = 0; i < s->n_label; i++) {
		const char *key = str(r, s->label[i]->key);
		if (!key)
			continue;
		if (strcmp(key, "thread") == 0)
			name = str(r, s->label[i]->str);
		else if (strcmp(key, "pid") == 0)
			pid = s->label[i]->num;
		else if (strcmp(key, "tid") == 0)
			tid = s->label[i]->num;
		else if (strcmp(key, "truncated") == 0)
			*truncated = str(r, s->label[i]->str) && strcmp(str(r, s->label[i]->str), "true") == 0;
	}
	if (pid < 0 || pid > INT32_MAX || tid < 0 || tid > INT32_MAX)
		pid = tid = 0;
	if (!name || !*name)
		name = r->program;
	return profile_add_thread(r->p, (int32_t)pid, (int32_t)tid, capped(r, 0, name),
				  capped(r, 1, r->program));
}

static int read_samples(struct reader *r, unsigned max_depth)
{
	for (size_t i = 0; i < r->m->n_sample; i++) {
		const Perftools__Profiles__Sample *s = r->m->sample[i];
		if (s->n_value != r->m->n_sample_type)
			return fail(r, "sample %zu has %zu values for %zu sample types", i, s->n_value,
				    r->m->n_sample_type);
		int64_t v = s->value[r->vi];
		if (v < 0) {
			r->skipped++;
			continue;
		}
		uint64_t count = r->ns_per_value ? ((uint64_t)v + r->ns_per_value / 2) / r->ns_per_value
						 : (uint64_t)v;
		if (count == 0)
			continue;
		/* (the total, in nanoseconds, is written as an int64) */
		uint64_t period = r->p->period_nanos ? r->p->period_nanos : 1;
		if (count > (uint64_t)INT64_MAX / period - r->total)
			return fail(r, "the samples' counts add up to more than a profile can hold "
				    "(2^63 nanoseconds)");
		r->total += count;
		track_labels(r, s);
		bool truncated;
		uint32_t thread = sample_thread(r, s, &truncated);
		if (thread == PROFILE_NONE)
			return fail(r, "out of memory");
		size_t n = s->n_location_id;
		if (truncated && n && s->location_id[n - 1] == r->truncated_loc)
			n--;   /* csampler's "[truncated]" root: the mark it stands for */
		uint32_t flags = truncated ? PROFILE_SAMPLE_TRUNCATED : 0;
		if (n > max_depth) {
			n = max_depth;
			flags = PROFILE_SAMPLE_TRUNCATED | PROFILE_SAMPLE_CUT_DEPTH;
		}
		for (size_t k = 0; k < n; k++) {
			r->locs[k] = index_of(r, IDS_LOCATION, s->location_id[k]);
			if (r->locs[k] == PROFILE_NONE)
				return fail(r, "sample %zu names no location %llu", i,
					    (unsigned long long)s->location_id[k]);
		}
		if (profile_add_sample(r->p, thread, r->locs, n, flags, count) < 0)
			return fail(r, "cannot keep the samples: %s", strerror(errno));
	}
	return 0;
}

static int read_profile(struct reader *r, unsigned max_depth)
{
	if (choose_value(r) < 0 || read_functions(r) < 0 || read_mappings(r) < 0 ||
	    read_locations(r) < 0)
		return -1;
	r->locs = malloc((max_depth + 1) * sizeof *r->locs);
	if (!r->locs)
		return fail(r, "out of memory");
	if (read_samples(r, max_depth) < 0)
		return -1;
	/* labels on every sample (fleet engines' service, version...) are the
	 * profile's, as --label's */
	for (size_t c = 0; c < r->ncommon; c++)
		if (profile_add_label(r->p, capped(r, 0, r->common[c].key),
				      capped(r, 1, r->common[c].value)) < 0)
			return fail(r, "out of memory");
	const char *command = r->m->n_comment ? str(r, r->m->comment[0]) : NULL;
	if (profile_set_command(r->p, capped(r, 0, command ? command : r->program)) < 0)
		return fail(r, "out of memory");
	r->p->pid = r->p->nthreads ? r->p->threads[0].pid : 0;
	r->p->time_nanos = r->m->time_nanos > 0 ? (uint64_t)r->m->time_nanos : 0;
	r->p->duration_nanos = r->m->duration_nanos > 0 ? (uint64_t)r->m->duration_nanos : 0;
	return 0;
}

struct profile *pprof_read(const uint8_t *data, size_t len, unsigned max_depth,
			   const struct pprof_read_resolve *resolve, struct pprof_read_info *info,
			   char *err, size_t errsz)
{
	struct reader r = { .err = err, .errsz = errsz, .program = "program",
			    .resolve = resolve && resolve->fn ? resolve : NULL, .info = info };
	if (info)
		*info = (struct pprof_read_info){ 0 };
	uint8_t *raw = NULL;
	size_t rawlen = 0;
	if (inflate_input(&r, data, len, &raw, &rawlen) < 0)
		return NULL;
	struct budget b = { .a = { .alloc = budget_alloc, .free = budget_free },
			    .limit = MESSAGE_SLACK + MESSAGE_GROWTH * rawlen };
	b.a.allocator_data = &b;
	Perftools__Profiles__Profile *m = perftools__profiles__profile__unpack(&b.a, rawlen, raw);
	free(raw);
	if (!m && b.exceeded) {
		fail(&r, "its %zu KB message asks for more than %zu MB of memory (at most %u times a "
		     "message's size and %zu MB are built from it): a damaged or hostile file",
		     rawlen >> 10, b.limit >> 20, MESSAGE_GROWTH, MESSAGE_SLACK >> 20);
		return NULL;
	}
	if (!m) {
		fail(&r, "not a pprof profile (its protobuf message does not parse)");
		return NULL;
	}
	r.m = m;
	r.p = profile_new();
	int rc = r.p ? read_profile(&r, max_depth ? max_depth : 1) : fail(&r, "out of memory");
	if (rc == 0 && r.skipped && !r.p->nsamples)
		rc = fail(&r, "only negative values (a difference of profiles)");
	free(r.locs);
	free(r.lines);
	free(r.unnamed);
	addrmap_free(&r.ids);
	perftools__profiles__profile__free_unpacked(m, &b.a);
	if (rc < 0) {
		profile_free(r.p);
		return NULL;
	}
	return r.p;
}
