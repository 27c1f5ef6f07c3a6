/* profile: the symbolized profile (see profile.h).
 *
 * The public arrays grow by doubling; priv holds their capacities and one
 * open-addressing hash table per interned kind (strings, functions, mappings,
 * locations, threads, samples). A table slot holds index + 1 (0 = empty) and
 * the element's hash, so growing never rehashes the elements themselves.
 * Strings are interned too: equal strings share one copy, so the other
 * tables compare string pointers.
 *
 * The sample store is a recstore: one record per sample, {count, time,
 * thread, flags, nlocs, pad} then nlocs uint32 location indexes; the profile
 * stays const while writers read it, in turn, as often as they need. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array.h"
#include "intern.h"
#include "profile.h"
#include "recstore.h"

struct index_table {
	uint32_t *slot;          /* index + 1, 0 = empty */
	uint32_t *hash;
	size_t cap;              /* power of two, or 0 */
	size_t n;
};

struct profile_priv {
	struct intern strings;
	size_t functions_cap, mappings_cap, locations_cap, lines_cap, threads_cap;
	struct index_table functions, mappings, locations, threads;
	struct recstore store;
};

/* ---- hashing ------------------------------------------------------------ */

/* H combined with V (the one integer mixer: intern.h) */
static uint64_t hash_mix(uint64_t h, uint64_t v)
{
	return hash_u64(h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2)));
}

static uint32_t hash_fold(uint64_t h)
{
	return (uint32_t)(h ^ (h >> 32));
}

/* ---- growable arrays ---------------------------------------------------- */

/* Room for MORE elements beyond the N in ARR (of CAP): 0, or -1 with errno
 * ENOMEM (array.h). */
/* (a function, not an expression: MORE may be a narrower type, whose
 * comparison with SIZE_MAX a compiler calls always false) */
static inline bool sum_overflows(size_t n, size_t more)
{
	return more > SIZE_MAX - n;
}
#define GROW(arr, cap, n, more) \
	(sum_overflows((n), (more)) ? (errno = ENOMEM, -1) \
				    : array_grow(&(arr), &(cap), (n) + (more), sizeof *(arr), 16))

/* ---- index tables ------------------------------------------------------- */

typedef bool (*index_equal_fn)(const struct profile *p, uint32_t index, const void *key);

/* The index equal to key under hash h, or PROFILE_NONE. */
static uint32_t table_find(const struct profile *p, const struct index_table *t, uint32_t h,
			   index_equal_fn equal, const void *key)
{
	if (!t->cap)
		return PROFILE_NONE;
	size_t mask = t->cap - 1;
	for (size_t i = h & mask, probes = 0; probes < t->cap; i = (i + 1) & mask, probes++) {
		if (!t->slot[i])
			return PROFILE_NONE;
		if (t->hash[i] == h && equal(p, t->slot[i] - 1, key))
			return t->slot[i] - 1;
	}
	return PROFILE_NONE;
}

static void table_put(struct index_table *t, uint32_t h, uint32_t index)
{
	size_t mask = t->cap - 1, i = h & mask;
	while (t->slot[i])
		i = (i + 1) & mask;
	t->slot[i] = index + 1;
	t->hash[i] = h;
	t->n++;
}

/* Insert index (known absent). 0 or -1 with errno = ENOMEM. */
static int table_insert(struct index_table *t, uint32_t h, uint32_t index)
{
	if ((t->n + 1) * 4 > t->cap * 3) {
		struct index_table nt = { 0 };
		nt.cap = t->cap ? t->cap * 2 : 64;
		if (nt.cap > SIZE_MAX / sizeof(uint32_t) / 2) {
			errno = ENOMEM;
			return -1;
		}
		nt.slot = calloc(nt.cap, sizeof *nt.slot);
		nt.hash = calloc(nt.cap, sizeof *nt.hash);
		if (!nt.slot || !nt.hash) {
			free(nt.slot);
			free(nt.hash);
			errno = ENOMEM;
			return -1;
		}
		for (size_t i = 0; i < t->cap; i++)
			if (t->slot[i])
				table_put(&nt, t->hash[i], t->slot[i] - 1);
		free(t->slot);
		free(t->hash);
		*t = nt;
	}
	table_put(t, h, index);
	return 0;
}

static void table_free(struct index_table *t)
{
	free(t->slot);
	free(t->hash);
	memset(t, 0, sizeof *t);
}

/* ---- strings ------------------------------------------------------------ */

/* The interned copy of s (NULL is ""), or NULL on ENOMEM. */
static const char *intern(struct profile *p, const char *s)
{
	struct profile_priv *pv = p->priv;
	if (!s)
		s = "";
	const char *c = intern_string(&pv->strings, s, strlen(s));
	if (!c)
		errno = ENOMEM;
	return c;
}

static uint64_t hash_ptr(uint64_t h, const void *ptr)
{
	return hash_mix(h, (uint64_t)(uintptr_t)ptr);
}

/* ---- lifecycle ---------------------------------------------------------- */

struct profile *profile_new(void)
{
	struct profile *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->priv = calloc(1, sizeof(struct profile_priv));
	if (!p->priv) {
		free(p);
		return NULL;
	}
	recstore_init(&((struct profile_priv *)p->priv)->store, PROFILE_SAMPLE_BUFFER, "samples");
	p->command = "";
	return p;
}

void profile_free(struct profile *p)
{
	struct profile_priv *pv;

	if (!p)
		return;
	pv = p->priv;
	intern_free(&pv->strings);
	table_free(&pv->functions);
	table_free(&pv->mappings);
	table_free(&pv->locations);
	table_free(&pv->threads);
	recstore_free(&pv->store);
	free(pv);
	free(p->functions);
	free(p->mappings);
	free(p->locations);
	free(p->lines);
	free(p->threads);
	free(p->labels);
	free(p);
}

int profile_set_command(struct profile *p, const char *command)
{
	const char *c = intern(p, command);
	if (!c)
		return -1;
	p->command = c;
	return 0;
}

int profile_set_value_type(struct profile *p, const char *type, const char *unit)
{
	const char *t = intern(p, type), *u = intern(p, unit);
	if (!t || !u)
		return -1;
	p->value_type = t;
	p->value_unit = u;
	p->period_nanos = 0;
	return 0;
}

const char *profile_count_word(const struct profile *p)
{
	if (!p->value_type)
		return "samples";
	return strcmp(p->value_unit, "count") == 0 || !*p->value_unit ? p->value_type : p->value_unit;
}

int profile_add_label(struct profile *p, const char *key, const char *value)
{
	const char *k = intern(p, key), *v = intern(p, value);
	if (!k || !v)
		return -1;
	struct profile_label *nl = realloc(p->labels, (p->nlabels + 1) * sizeof *nl);
	if (!nl)
		return -1;
	p->labels = nl;
	p->labels[p->nlabels++] = (struct profile_label){ k, v };
	return 0;
}

/* ---- functions ---------------------------------------------------------- */

static bool function_equal(const struct profile *p, uint32_t index, const void *key)
{
	const struct profile_function *a = &p->functions[index], *b = key;
	return a->name == b->name && a->system_name == b->system_name &&
	       a->filename == b->filename && a->start_line == b->start_line;
}

uint32_t profile_add_function(struct profile *p, const char *name, const char *system_name,
			      const char *filename, int64_t start_line)
{
	struct profile_priv *pv = p->priv;
	struct profile_function f;
	uint64_t h;
	uint32_t i;

	f.name = intern(p, name);
	f.system_name = intern(p, system_name);
	f.filename = intern(p, filename);
	f.start_line = start_line;
	if (!f.name || !f.system_name || !f.filename)
		return PROFILE_NONE;
	h = hash_ptr(hash_ptr(hash_ptr(1, f.name), f.system_name), f.filename);
	h = hash_mix(h, (uint64_t)start_line);
	i = table_find(p, &pv->functions, hash_fold(h), function_equal, &f);
	if (i != PROFILE_NONE)
		return i;
	if (p->nfunctions >= PROFILE_NONE - 1 ||
	    GROW(p->functions, pv->functions_cap, p->nfunctions, 1) < 0 ||
	    table_insert(&pv->functions, hash_fold(h), (uint32_t)p->nfunctions) < 0)
		return PROFILE_NONE;
	p->functions[p->nfunctions] = f;
	return (uint32_t)p->nfunctions++;
}

/* ---- mappings ----------------------------------------------------------- */

static bool mapping_equal(const struct profile *p, uint32_t index, const void *key)
{
	const struct profile_mapping *a = &p->mappings[index], *b = key;
	return a->start == b->start && a->limit == b->limit && a->offset == b->offset &&
	       a->filename == b->filename && a->build_id == b->build_id;
}

uint32_t profile_add_mapping(struct profile *p, const struct profile_mapping *m)
{
	struct profile_priv *pv = p->priv;
	struct profile_mapping c = *m;
	uint64_t h;
	uint32_t i;

	c.filename = intern(p, m->filename);
	c.build_id = intern(p, m->build_id);
	if (!c.filename || !c.build_id)
		return PROFILE_NONE;
	h = hash_mix(hash_mix(hash_mix(2, c.start), c.limit), c.offset);
	h = hash_ptr(hash_ptr(h, c.filename), c.build_id);
	i = table_find(p, &pv->mappings, hash_fold(h), mapping_equal, &c);
	if (i != PROFILE_NONE) {
		/* The same mapping seen again may know more (e.g. symbols found). */
		struct profile_mapping *e = &p->mappings[i];
		e->has_functions |= c.has_functions;
		e->has_filenames |= c.has_filenames;
		e->has_line_numbers |= c.has_line_numbers;
		e->has_inline_frames |= c.has_inline_frames;
		return i;
	}
	if (p->nmappings >= PROFILE_NONE - 1 ||
	    GROW(p->mappings, pv->mappings_cap, p->nmappings, 1) < 0 ||
	    table_insert(&pv->mappings, hash_fold(h), (uint32_t)p->nmappings) < 0)
		return PROFILE_NONE;
	p->mappings[p->nmappings] = c;
	return (uint32_t)p->nmappings++;
}

/* ---- locations ---------------------------------------------------------- */

struct location_key {
	uint64_t address;
	uint32_t mapping;
	bool jit;
	const struct profile_line *lines;
	size_t nlines;
};

static bool location_equal(const struct profile *p, uint32_t index, const void *key)
{
	const struct profile_location *a = &p->locations[index];
	const struct location_key *k = key;

	if (a->address != k->address || a->mapping != k->mapping || a->jit != k->jit ||
	    a->nlines != k->nlines)
		return false;
	for (size_t i = 0; i < k->nlines; i++) {
		const struct profile_line *l = &p->lines[a->first_line + i];
		if (l->function != k->lines[i].function || l->line != k->lines[i].line)
			return false;
	}
	return true;
}

uint32_t profile_add_location(struct profile *p, uint64_t address, uint32_t mapping,
			      const struct profile_line *lines, size_t nlines, bool jit)
{
	struct profile_priv *pv = p->priv;
	struct location_key k = { address, mapping, jit, lines, nlines };
	struct profile_location *l;
	uint64_t h;
	uint32_t i;

	if ((mapping != PROFILE_NONE && mapping >= p->nmappings) || nlines > UINT32_MAX ||
	    (nlines && !lines)) {
		errno = EINVAL;
		return PROFILE_NONE;
	}
	h = hash_mix(hash_mix(hash_mix(3, address), mapping), jit);
	for (size_t j = 0; j < nlines; j++) {
		if (lines[j].function >= p->nfunctions) {
			errno = EINVAL;
			return PROFILE_NONE;
		}
		h = hash_mix(hash_mix(h, lines[j].function), (uint64_t)lines[j].line);
	}
	i = table_find(p, &pv->locations, hash_fold(h), location_equal, &k);
	if (i != PROFILE_NONE)
		return i;
	if (p->nlocations >= PROFILE_NONE - 1 || p->nlines + nlines >= PROFILE_NONE ||
	    GROW(p->locations, pv->locations_cap, p->nlocations, 1) < 0 ||
	    GROW(p->lines, pv->lines_cap, p->nlines, nlines) < 0 ||
	    table_insert(&pv->locations, hash_fold(h), (uint32_t)p->nlocations) < 0)
		return PROFILE_NONE;
	l = &p->locations[p->nlocations];
	l->address = address;
	l->mapping = mapping;
	l->first_line = (uint32_t)p->nlines;
	l->nlines = (uint32_t)nlines;
	l->jit = jit;
	if (nlines)
		memcpy(&p->lines[p->nlines], lines, nlines * sizeof *lines);
	p->nlines += nlines;
	return (uint32_t)p->nlocations++;
}

/* ---- threads ------------------------------------------------------------ */

static bool thread_equal(const struct profile *p, uint32_t index, const void *key)
{
	const struct profile_thread *a = &p->threads[index], *b = key;
	return a->pid == b->pid && a->tid == b->tid && a->name == b->name &&
	       a->process == b->process;
}

uint32_t profile_add_thread(struct profile *p, int32_t pid, int32_t tid, const char *name,
			    const char *process)
{
	struct profile_priv *pv = p->priv;
	struct profile_thread t = { pid, tid, intern(p, name), intern(p, process) };
	uint64_t h;
	uint32_t i;

	if (!t.name || !t.process)
		return PROFILE_NONE;
	h = hash_mix(hash_mix(4, (uint32_t)pid), (uint32_t)tid);
	h = hash_ptr(hash_ptr(h, t.name), t.process);
	i = table_find(p, &pv->threads, hash_fold(h), thread_equal, &t);
	if (i != PROFILE_NONE)
		return i;
	if (p->nthreads >= PROFILE_NONE - 1 ||
	    GROW(p->threads, pv->threads_cap, p->nthreads, 1) < 0 ||
	    table_insert(&pv->threads, hash_fold(h), (uint32_t)p->nthreads) < 0)
		return PROFILE_NONE;
	p->threads[p->nthreads] = t;
	return (uint32_t)p->nthreads++;
}

const char *profile_thread_label(const struct profile *p, uint32_t thread, char *buf, size_t bufsz)
{
	const struct profile_thread *t;

	if (!bufsz)
		return buf;
	if (thread >= p->nthreads) {
		snprintf(buf, bufsz, "[thread %u]", thread);
		return buf;
	}
	t = &p->threads[thread];
	if (t->tid)
		snprintf(buf, bufsz, "%s-%d", t->name, (int)t->tid);
	else
		snprintf(buf, bufsz, "%s", t->name);
	return buf;
}

/* ---- samples ------------------------------------------------------------ */

struct sample_record {
	uint64_t count;
	uint64_t time;
	uint32_t thread;
	uint32_t flags;
	uint32_t nlocs;
	uint32_t pad;
};

int profile_set_sample_buffer(struct profile *p, size_t bytes)
{
	struct profile_priv *pv = p->priv;

	if (p->nsamples) {
		errno = EBUSY;
		return -1;
	}
	if (!bytes) {
		errno = EINVAL;
		return -1;
	}
	pv->store.limit = bytes;
	return 0;
}

int profile_add_timed_sample(struct profile *p, uint32_t thread, const uint32_t *locs,
			     size_t nlocs, uint32_t flags, uint64_t count, uint64_t time_nanos)
{
	struct profile_priv *pv = p->priv;
	struct sample_record r = { count, time_nanos, thread, flags, (uint32_t)nlocs, 0 };

	if (thread >= p->nthreads || nlocs > (SIZE_MAX / 8 - sizeof r) / sizeof(uint32_t) ||
	    nlocs > UINT32_MAX || (nlocs && !locs)) {
		errno = EINVAL;
		return -1;
	}
	for (size_t j = 0; j < nlocs; j++) {
		if (locs[j] >= p->nlocations) {
			errno = EINVAL;
			return -1;
		}
	}
	if (recstore_append(&pv->store, &r, sizeof r, locs, nlocs * sizeof *locs) < 0)
		return -1;
	p->nsamples++;
	if (flags & PROFILE_SAMPLE_BASE) {
		p->base_total += count;
		return 0;
	}
	p->total_samples += count;
	if (flags & PROFILE_SAMPLE_TRUNCATED)
		p->truncated_samples += count;
	return 0;
}

int profile_add_sample(struct profile *p, uint32_t thread, const uint32_t *locs,
		       size_t nlocs, uint32_t flags, uint64_t count)
{
	return profile_add_timed_sample(p, thread, locs, nlocs, flags, count, PROFILE_NO_TIME);
}

struct sample_walk {
	int (*fn)(void *ctx, const struct profile_sample *s);
	void *ctx;
};

static int walk_record(void *ctx, const void *rec, size_t len)
{
	const struct sample_walk *w = ctx;
	struct sample_record r;
	struct profile_sample s;

	if (len < sizeof r)
		return 0;
	memcpy(&r, rec, sizeof r);
	if ((len - sizeof r) / sizeof(uint32_t) < r.nlocs)
		return 0;
	s.thread = r.thread;
	s.nlocs = r.nlocs;
	s.flags = r.flags;
	s.count = r.count;
	s.time_nanos = r.time;
	/* records are 8-aligned, and so is what follows the 32-byte header */
	s.locs = (const uint32_t *)(const void *)((const unsigned char *)rec + sizeof r);
	return w->fn(w->ctx, &s);
}

int profile_foreach_sample(const struct profile *p,
			   int (*fn)(void *ctx, const struct profile_sample *s), void *ctx)
{
	const struct profile_priv *pv = p->priv;
	struct sample_walk w = { fn, ctx };
	return recstore_foreach(&pv->store, walk_record, &w);
}

/* ---- --diff: a base profile's samples added to another ---------------------- */

struct merge {
	struct profile *dst;
	const struct profile *base;
	uint32_t *locs, *functions, *mappings, *threads; /* base index -> dst's, or PROFILE_NONE */
	uint32_t *stack;         /* one sample's stack, in dst's locations */
	size_t stack_cap;
	struct profile_line *lines; /* one location's lines, in dst's functions */
	size_t lines_cap;
	unsigned __int128 acc;   /* base counts x dst total, summed */
	uint64_t given;          /* scaled counts given so far */
};

static uint32_t merge_function(struct merge *m, uint32_t i)
{
	if (m->functions[i] == PROFILE_NONE) {
		const struct profile_function *f = &m->base->functions[i];
		m->functions[i] = profile_add_function(m->dst, f->name, f->system_name, f->filename,
						       f->start_line);
	}
	return m->functions[i];
}

static uint32_t merge_location(struct merge *m, uint32_t i)
{
	if (m->locs[i] != PROFILE_NONE)
		return m->locs[i];
	const struct profile_location *l = &m->base->locations[i];
	uint32_t mapping = PROFILE_NONE;
	if (l->mapping != PROFILE_NONE) {
		if (m->mappings[l->mapping] == PROFILE_NONE)
			m->mappings[l->mapping] = profile_add_mapping(m->dst,
								      &m->base->mappings[l->mapping]);
		if ((mapping = m->mappings[l->mapping]) == PROFILE_NONE)
			return PROFILE_NONE;
	}
	if (GROW(m->lines, m->lines_cap, 0, l->nlines) < 0)
		return PROFILE_NONE;
	for (size_t k = 0; k < l->nlines; k++) {
		const struct profile_line *bl = &m->base->lines[l->first_line + k];
		m->lines[k] = (struct profile_line){ merge_function(m, bl->function), bl->line };
		if (m->lines[k].function == PROFILE_NONE)
			return PROFILE_NONE;
	}
	m->locs[i] = profile_add_location(m->dst, l->address, mapping, m->lines, l->nlines, l->jit);
	return m->locs[i];
}

static int merge_sample(void *ctx, const struct profile_sample *s)
{
	struct merge *m = ctx;
	/* scaled to the other profile's total, the rounding carried (exact sum) */
	m->acc += (unsigned __int128)s->count * m->dst->total_samples;
	uint64_t upto = (uint64_t)(m->acc / m->base->total_samples);
	uint64_t count = upto - m->given;
	m->given = upto;
	if (!count)
		return 0;
	if (m->threads[s->thread] == PROFILE_NONE) {
		const struct profile_thread *t = &m->base->threads[s->thread];
		m->threads[s->thread] = profile_add_thread(m->dst, t->pid, t->tid, t->name, t->process);
		if (m->threads[s->thread] == PROFILE_NONE)
			return -1;
	}
	if (GROW(m->stack, m->stack_cap, 0, s->nlocs) < 0)
		return -1;
	for (uint32_t k = 0; k < s->nlocs; k++)
		if ((m->stack[k] = merge_location(m, s->locs[k])) == PROFILE_NONE)
			return -1;
	return profile_add_sample(m->dst, m->threads[s->thread], m->stack, s->nlocs,
				  s->flags | PROFILE_SAMPLE_BASE, count);
}

int profile_add_base(struct profile *dst, const struct profile *base)
{
	struct merge m = { .dst = dst, .base = base };
	size_t nl = base->nlocations + 1, nf = base->nfunctions + 1, nm = base->nmappings + 1,
	       nt = base->nthreads + 1;
	m.locs = malloc(nl * sizeof *m.locs);
	m.functions = malloc(nf * sizeof *m.functions);
	m.mappings = malloc(nm * sizeof *m.mappings);
	m.threads = malloc(nt * sizeof *m.threads);
	int ret = -1;
	if (m.locs && m.functions && m.mappings && m.threads) {
		memset(m.locs, 0xff, nl * sizeof *m.locs);
		memset(m.functions, 0xff, nf * sizeof *m.functions);
		memset(m.mappings, 0xff, nm * sizeof *m.mappings);
		memset(m.threads, 0xff, nt * sizeof *m.threads);
		dst->diff = true;
		ret = base->total_samples && dst->total_samples ?
			profile_foreach_sample(base, merge_sample, &m) : 0;
		if (ret > 0 || (ret < 0 && !errno))
			errno = ENOMEM;
		ret = ret ? -1 : 0;
	} else {
		errno = ENOMEM;
	}
	free(m.locs);
	free(m.functions);
	free(m.mappings);
	free(m.threads);
	free(m.stack);
	free(m.lines);
	return ret;
}
