/* stackmap: bounded counting of stacks (see stackmap.h for the contract).
 *
 * Memory layout, all allocated once in stackmap_new:
 * - NBUCKETS = ceil(max_stacks / SLOTS) buckets of SLOTS slots. A slot holds
 *   the key's hash, thread key, flags, depth, count and the index of
 *   the first chunk of its addresses. Slots of a bucket are kept packed.
 * - An address arena of fixed-size chunks (CHUNK_WORDS addresses each),
 *   chained per entry through a next[] array, with a free list. Its size is a
 *   budget of min(max_depth, BUDGET_DEPTH) addresses per slot (rounded up to
 *   chunks), and never less than two max_depth stacks, so memory does not grow
 *   with max_stacks x max_depth while short stacks (the common case) all fit.
 *   Chunks make storage per entry variable-length without fragmentation.
 * - A spill write buffer large enough for one record of max_depth addresses.
 *
 * Eviction: when the key's bucket is full, the entry with the smallest count
 * goes to the spill file; the new observation is compared too (it spills
 * itself if every resident has a larger count; on a tie the resident leaves,
 * so a stack that keeps recurring gets a slot). When the arena has too few
 * free chunks for a new entry, a clock hand walks the buckets and spills the
 * smallest entry of each bucket it passes until enough chunks are free.
 *
 * Spill file: unlinked at creation (O_TMPFILE in $TMPDIR, else mkstemp +
 * unlink), opened at the first eviction; records are appended through the
 * write buffer: header {hash, count, thread_key, flags, depth} then
 * depth addresses. If a write fails the map keeps the resident and drops the
 * new observation (counted in stats.lost), so a sample never disappears
 * silently.
 *
 * stackmap_foreach merges exactly in passes partitioned by hash range: a pass
 * over [lo, hi] puts every resident entry and every spill record whose hash
 * falls in the range into a temporary table of the same capacity as memory,
 * adding counts of equal keys (full key compare). When that table fills up,
 * hi is lowered to the median hash of its entries and the entries above are
 * dropped (a later pass covers them), so each pass ends with the exact totals
 * of every key in [lo, hi]; it reports them, and the next pass starts at hi+1.
 * Memory during foreach is bounded by about twice the resident capacity;
 * the spill file is read once per pass. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array.h"
#include "intern.h"
#include "stackmap.h"
#include "tempfile.h"

#define SLOTS 8
#define CHUNK_WORDS 16
#define BUDGET_DEPTH 48
#define NIL UINT32_MAX
#define MAX_DEPTH_LIMIT (1u << 20)
#define WBUF_MIN (64 * 1024)
#define RBUF_MIN (1024 * 1024)
#define PASS_MIN_CAPACITY 4096
#define PASS_MIN_WORDS (PASS_MIN_CAPACITY * 32)

struct slot {
	uint64_t hash;
	uint64_t count;
	uint32_t thread_key;
	uint32_t flags;
	uint32_t depth;
	uint32_t chunk;          /* first chunk of the addresses, NIL if depth 0 */
};

struct spill_record {
	uint64_t hash;
	uint64_t count;
	uint32_t thread_key;
	uint32_t flags;
	uint32_t depth;
	uint32_t reserved;
};

struct stackmap {
	size_t nbuckets;
	unsigned max_depth;
	struct slot *slots;      /* nbuckets * SLOTS */
	uint8_t *fill;           /* used slots per bucket */
	uint64_t *chunks;        /* nchunks * CHUNK_WORDS */
	uint32_t *next;          /* chunk chains and the free list */
	uint32_t nchunks;
	uint32_t free_head;
	uint32_t free_count;
	size_t clock;            /* next bucket the arena eviction visits */
	uint64_t *scratch;       /* max_depth addresses, for foreach */
	char *tmpdir;
	int spill_fd;            /* -1 until the first eviction */
	uint64_t spill_bytes;    /* bytes written to the file */
	unsigned char *wbuf;
	size_t wbuf_cap, wbuf_used;
	struct stackmap_stats stats;
	struct key_account {     /* by thread key */
		uint64_t counted;        /* periods counted */
		uint64_t cpu_ns;         /* the kernel's account */
		uint64_t woken;          /* STACK_WAKE periods counted */
		uint64_t span_ns;        /* stackmap_add_span */
		uint64_t preempted;      /* STACK_PREEMPT periods counted */
		uint64_t preempt_span_ns;
	} *keys;
	size_t nkeys;
	bool accounted;          /* some key's CPU was accounted */
	bool account_whole;      /* stackmap_set_account_whole */
	uint64_t pool_cpu_ns;    /* CPU of threads with no key (never sampled) */
};

static uint64_t hash_key(uint32_t thread_key, uint32_t flags, const uint64_t *addrs, unsigned depth)
{
	uint64_t h = hash_u64(((uint64_t)thread_key << 32 | flags) ^ UINT64_C(0x9e3779b97f4a7c15));
	h = hash_u64(h ^ depth);
	for (unsigned i = 0; i < depth; i++)
		h = ((h << 23 | h >> 41) ^ addrs[i]) * UINT64_C(0x9e3779b97f4a7c15);
	return hash_u64(h);
}

static size_t chunks_for(unsigned depth)
{
	return ((size_t)depth + CHUNK_WORDS - 1) / CHUNK_WORDS;
}

static size_t record_size(unsigned depth)
{
	return sizeof(struct spill_record) + (size_t)depth * sizeof(uint64_t);
}

struct stackmap *stackmap_new(size_t max_stacks, unsigned max_depth)
{
	if (max_stacks == 0 || max_depth == 0 || max_depth > MAX_DEPTH_LIMIT ||
	    max_stacks > (size_t)1 << 32) {
		errno = EINVAL;
		return NULL;
	}
	struct stackmap *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->spill_fd = -1;
	m->max_depth = max_depth;
	m->nbuckets = (max_stacks + SLOTS - 1) / SLOTS;

	size_t per_slot = chunks_for(max_depth < BUDGET_DEPTH ? max_depth : BUDGET_DEPTH);
	size_t nslots = m->nbuckets * SLOTS;
	size_t nchunks = nslots * per_slot;
	if (nchunks < 2 * chunks_for(max_depth))
		nchunks = 2 * chunks_for(max_depth);
	if (nchunks >= NIL) {
		free(m);
		errno = EINVAL;
		return NULL;
	}
	m->nchunks = (uint32_t)nchunks;

	m->wbuf_cap = record_size(max_depth);
	if (m->wbuf_cap < WBUF_MIN)
		m->wbuf_cap = WBUF_MIN;
	const char *dir = getenv("TMPDIR");
	m->slots = calloc(nslots, sizeof(*m->slots));
	m->fill = calloc(m->nbuckets, 1);
	m->chunks = calloc(nchunks, CHUNK_WORDS * sizeof(uint64_t));
	m->next = calloc(nchunks, sizeof(*m->next));
	m->scratch = calloc(max_depth, sizeof(*m->scratch));
	m->wbuf = malloc(m->wbuf_cap);
	m->tmpdir = strdup(dir && *dir ? dir : "/tmp");
	if (!m->slots || !m->fill || !m->chunks || !m->next || !m->scratch || !m->wbuf || !m->tmpdir) {
		stackmap_free(m);
		errno = ENOMEM;
		return NULL;
	}
	for (uint32_t i = 0; i < m->nchunks; i++)
		m->next[i] = i + 1 < m->nchunks ? i + 1 : NIL;
	m->free_head = 0;
	m->free_count = m->nchunks;
	m->stats.capacity = nslots;
	return m;
}

void stackmap_free(struct stackmap *m)
{
	if (!m)
		return;
	if (m->spill_fd >= 0)
		close(m->spill_fd);
	free(m->slots);
	free(m->fill);
	free(m->chunks);
	free(m->next);
	free(m->scratch);
	free(m->wbuf);
	free(m->tmpdir);
	free(m->keys);
	free(m);
}

/* ---- chunk arena ---------------------------------------------------------- */

static uint32_t store_addrs(struct stackmap *m, const uint64_t *addrs, unsigned depth)
{
	uint32_t first = NIL, *link = &first;
	for (unsigned done = 0; done < depth; done += CHUNK_WORDS) {
		uint32_t c = m->free_head;
		m->free_head = m->next[c];
		m->free_count--;
		unsigned n = depth - done < CHUNK_WORDS ? depth - done : CHUNK_WORDS;
		memcpy(&m->chunks[(size_t)c * CHUNK_WORDS], addrs + done, n * sizeof(uint64_t));
		*link = c;
		link = &m->next[c];
	}
	*link = NIL;
	return first;
}

static void release_chunks(struct stackmap *m, uint32_t c)
{
	while (c != NIL) {
		uint32_t n = m->next[c];
		m->next[c] = m->free_head;
		m->free_head = c;
		m->free_count++;
		c = n;
	}
}

static bool slot_addrs_equal(const struct stackmap *m, const struct slot *s, const uint64_t *addrs)
{
	uint32_t c = s->chunk;
	for (unsigned done = 0; done < s->depth; done += CHUNK_WORDS) {
		unsigned n = s->depth - done < CHUNK_WORDS ? s->depth - done : CHUNK_WORDS;
		if (memcmp(&m->chunks[(size_t)c * CHUNK_WORDS], addrs + done, n * sizeof(uint64_t)))
			return false;
		c = m->next[c];
	}
	return true;
}

static void gather_addrs(const struct stackmap *m, const struct slot *s, uint64_t *out)
{
	uint32_t c = s->chunk;
	for (unsigned done = 0; done < s->depth; done += CHUNK_WORDS) {
		unsigned n = s->depth - done < CHUNK_WORDS ? s->depth - done : CHUNK_WORDS;
		memcpy(out + done, &m->chunks[(size_t)c * CHUNK_WORDS], n * sizeof(uint64_t));
		c = m->next[c];
	}
}

/* ---- spill file ----------------------------------------------------------- */

static int open_spill(struct stackmap *m)
{
	int fd = tempfile_open(m->tmpdir, "stacks");
	if (fd < 0)
		return -1;
	m->spill_fd = fd;
	return 0;
}

/* Write the buffer out; on failure keep what was not written at its start. */
static int flush_spill(struct stackmap *m)
{
	size_t done = 0;
	int ret = 0;
	while (done < m->wbuf_used) {
		ssize_t w = write(m->spill_fd, m->wbuf + done, m->wbuf_used - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			ret = -1;
			break;
		}
		done += (size_t)w;
		m->spill_bytes += (uint64_t)w;
	}
	int saved = errno;
	memmove(m->wbuf, m->wbuf + done, m->wbuf_used - done);
	m->wbuf_used -= done;
	errno = saved;
	return ret;
}

/* Make room in the buffer for one record of DEPTH addresses. */
static int reserve_spill(struct stackmap *m, unsigned depth)
{
	if (m->spill_fd < 0 && open_spill(m) < 0)
		return -1;
	if (m->wbuf_cap - m->wbuf_used >= record_size(depth))
		return 0;
	if (flush_spill(m) < 0)
		return -1;
	return 0;
}

static unsigned char *append_header(struct stackmap *m, uint64_t hash, uint32_t thread_key,
				    uint32_t flags, unsigned depth, uint64_t count)
{
	struct spill_record r = {
		.hash = hash, .count = count,
		.thread_key = thread_key, .flags = flags, .depth = depth,
	};
	unsigned char *p = m->wbuf + m->wbuf_used;
	memcpy(p, &r, sizeof(r));
	m->wbuf_used += record_size(depth);
	m->stats.spilled++;
	return p + sizeof(r);
}

/* Spill slot J of bucket B and remove it. */
static int evict_slot(struct stackmap *m, size_t b, unsigned j)
{
	struct slot *bucket = &m->slots[b * SLOTS];
	struct slot *s = &bucket[j];
	if (reserve_spill(m, s->depth) < 0)
		return -1;
	unsigned char *p = append_header(m, s->hash, s->thread_key, s->flags, s->depth, s->count);
	uint32_t c = s->chunk;
	for (unsigned done = 0; done < s->depth; done += CHUNK_WORDS) {
		unsigned n = s->depth - done < CHUNK_WORDS ? s->depth - done : CHUNK_WORDS;
		memcpy(p + done * sizeof(uint64_t), &m->chunks[(size_t)c * CHUNK_WORDS], n * sizeof(uint64_t));
		c = m->next[c];
	}
	release_chunks(m, s->chunk);
	m->fill[b]--;
	if (j != m->fill[b])
		*s = bucket[m->fill[b]];
	m->stats.resident--;
	return 0;
}

static unsigned smallest_slot(const struct stackmap *m, size_t b)
{
	const struct slot *bucket = &m->slots[b * SLOTS];
	unsigned best = 0;
	for (unsigned j = 1; j < m->fill[b]; j++)
		if (bucket[j].count < bucket[best].count)
			best = j;
	return best;
}

/* Free chunks until NEED are available, spilling the smallest entry of each
 * bucket the clock hand passes. Terminates: every step evicts or skips an
 * empty bucket, and an empty table has every chunk free (nchunks >= need). */
static int make_room(struct stackmap *m, size_t need)
{
	size_t empty_run = 0;
	while (m->free_count < need && empty_run < m->nbuckets) {
		size_t b = m->clock;
		m->clock = (m->clock + 1) % m->nbuckets;
		if (m->fill[b] == 0) {
			empty_run++;
			continue;
		}
		empty_run = 0;
		if (evict_slot(m, b, smallest_slot(m, b)) < 0)
			return -1;
	}
	return 0;
}

int stackmap_insert(struct stackmap *m, uint32_t thread_key, uint32_t flags,
		    const uint64_t *addrs, unsigned depth, uint64_t count)
{
	if (depth > m->max_depth) {
		depth = m->max_depth;
		flags |= STACK_TRUNCATED_DEPTH;
	}
	m->stats.inserts++;
	m->stats.samples += count;
	uint64_t *counted = thread_key >= m->nkeys ? NULL
			    : (flags & STACK_WAKE) ? &m->keys[thread_key].woken
			    : (flags & STACK_PREEMPT) ? &m->keys[thread_key].preempted
			    : &m->keys[thread_key].counted;
	if (counted)
		*counted += count;

	uint64_t h = hash_key(thread_key, flags, addrs, depth);
	size_t b = h % m->nbuckets;
	struct slot *bucket = &m->slots[b * SLOTS];
	for (unsigned j = 0; j < m->fill[b]; j++) {
		struct slot *s = &bucket[j];
		if (s->hash == h && s->thread_key == thread_key && s->flags == flags &&
		    s->depth == depth && slot_addrs_equal(m, s, addrs)) {
			s->count += count;
			return 0;
		}
	}

	if (m->fill[b] == SLOTS) {
		unsigned j = smallest_slot(m, b);
		if (bucket[j].count > count) {
			/* Every resident outweighs the newcomer: it goes to the spill. */
			if (reserve_spill(m, depth) < 0)
				goto lost;
			unsigned char *p = append_header(m, h, thread_key, flags, depth, count);
			memcpy(p, addrs, (size_t)depth * sizeof(uint64_t));
			return 0;
		}
		if (evict_slot(m, b, j) < 0)
			goto lost;
	}
	if (make_room(m, chunks_for(depth)) < 0)
		goto lost;

	struct slot *s = &bucket[m->fill[b]++];
	s->hash = h;
	s->count = count;
	s->thread_key = thread_key;
	s->flags = flags;
	s->depth = depth;
	s->chunk = store_addrs(m, addrs, depth);
	m->stats.resident++;
	return 0;

lost:
	m->stats.lost += count;
	if (counted)
		*counted -= count;
	return -1;
}

void stackmap_get_stats(const struct stackmap *m, struct stackmap_stats *out)
{
	*out = m->stats;
}

/* ---- exact merge ---------------------------------------------------------- */

struct pass_entry {
	uint64_t hash;
	uint64_t count;
	size_t off;              /* addresses at arena[off] */
	uint32_t thread_key;
	uint32_t flags;
	uint32_t depth;
};

/* A temporary table for the keys of one hash range. */
struct pass {
	struct pass_entry *e;
	size_t n, cap;
	uint64_t *arena;
	size_t used, arena_cap;
	uint32_t *index;         /* open addressing, entry index + 1, 0 = empty */
	size_t index_mask;
	uint64_t *sorted;        /* scratch for the median */
	uint64_t lo, hi;
};

static void pass_free(struct pass *p)
{
	free(p->e);
	free(p->arena);
	free(p->index);
	free(p->sorted);
}

static int pass_init(struct pass *p, const struct stackmap *m)
{
	memset(p, 0, sizeof(*p));
	p->cap = m->nbuckets * SLOTS;
	if (p->cap < PASS_MIN_CAPACITY)
		p->cap = PASS_MIN_CAPACITY;
	p->arena_cap = (size_t)m->nchunks * CHUNK_WORDS;
	if (p->arena_cap < PASS_MIN_WORDS)
		p->arena_cap = PASS_MIN_WORDS;
	if (p->arena_cap < 2 * (size_t)m->max_depth)
		p->arena_cap = 2 * (size_t)m->max_depth;
	size_t isz = 1;
	while (isz < 2 * p->cap)
		isz <<= 1;
	p->index_mask = isz - 1;
	p->e = malloc(p->cap * sizeof(*p->e));
	p->arena = malloc(p->arena_cap * sizeof(*p->arena));
	p->index = malloc(isz * sizeof(*p->index));
	p->sorted = malloc(p->cap * sizeof(*p->sorted));
	if (!p->e || !p->arena || !p->index || !p->sorted) {
		pass_free(p);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

static void pass_begin(struct pass *p, uint64_t lo)
{
	p->n = 0;
	p->used = 0;
	p->lo = lo;
	p->hi = UINT64_MAX;
	memset(p->index, 0, (p->index_mask + 1) * sizeof(*p->index));
}

static void pass_index_insert(struct pass *p, size_t i)
{
	size_t k = p->e[i].hash & p->index_mask;
	while (p->index[k])
		k = (k + 1) & p->index_mask;
	p->index[k] = (uint32_t)(i + 1);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Lower hi so that about half the entries leave; compact what stays. */
static int pass_shrink(struct pass *p)
{
	for (size_t i = 0; i < p->n; i++)
		p->sorted[i] = p->e[i].hash;
	qsort(p->sorted, p->n, sizeof(*p->sorted), cmp_u64);
	uint64_t top = p->sorted[p->n - 1];
	uint64_t hi = p->sorted[(p->n - 1) / 2];
	if (hi == top) {
		/* The upper half shares one hash: keep what lies below it. */
		size_t i = p->n;
		while (i > 0 && p->sorted[i - 1] == top)
			i--;
		if (i > 0) {
			hi = p->sorted[i - 1];
		} else {
			if (top == p->lo) {
				/* More keys than capacity share one 64-bit hash. */
				errno = EOVERFLOW;
				return -1;
			}
			hi = top - 1;
		}
	}
	size_t kept = 0, used = 0;
	for (size_t i = 0; i < p->n; i++) {
		struct pass_entry e = p->e[i];
		if (e.hash > hi)
			continue;
		memmove(&p->arena[used], &p->arena[e.off], e.depth * sizeof(uint64_t));
		e.off = used;
		used += e.depth;
		p->e[kept++] = e;
	}
	p->n = kept;
	p->used = used;
	p->hi = hi;
	memset(p->index, 0, (p->index_mask + 1) * sizeof(*p->index));
	for (size_t i = 0; i < p->n; i++)
		pass_index_insert(p, i);
	return 0;
}

static int pass_add(struct pass *p, uint64_t hash, uint32_t thread_key, uint32_t flags,
		    const uint64_t *addrs, uint32_t depth, uint64_t count)
{
	for (;;) {
		if (hash < p->lo || hash > p->hi)
			return 0;
		size_t k = hash & p->index_mask;
		while (p->index[k]) {
			struct pass_entry *e = &p->e[p->index[k] - 1];
			if (e->hash == hash && e->thread_key == thread_key && e->flags == flags &&
			    e->depth == depth &&
			    !memcmp(&p->arena[e->off], addrs, depth * sizeof(uint64_t))) {
				e->count += count;
				return 0;
			}
			k = (k + 1) & p->index_mask;
		}
		if (p->n < p->cap && p->arena_cap - p->used >= depth) {
			struct pass_entry *e = &p->e[p->n];
			e->hash = hash;
			e->count = count;
			e->off = p->used;
			e->thread_key = thread_key;
			e->flags = flags;
			e->depth = depth;
			memcpy(&p->arena[p->used], addrs, depth * sizeof(uint64_t));
			p->used += depth;
			pass_index_insert(p, p->n++);
			return 0;
		}
		if (pass_shrink(p) < 0)
			return -1;
	}
}

static int pass_add_residents(struct pass *p, const struct stackmap *m)
{
	for (size_t b = 0; b < m->nbuckets; b++) {
		const struct slot *bucket = &m->slots[b * SLOTS];
		for (unsigned j = 0; j < m->fill[b]; j++) {
			const struct slot *s = &bucket[j];
			if (s->hash < p->lo || s->hash > p->hi)
				continue;
			gather_addrs(m, s, m->scratch);
			if (pass_add(p, s->hash, s->thread_key, s->flags, m->scratch, s->depth,
				     s->count) < 0)
				return -1;
		}
	}
	return 0;
}

static int pass_add_spill(struct pass *p, const struct stackmap *m, unsigned char *rbuf, size_t rcap)
{
	uint64_t off = 0;
	size_t have = 0, pos = 0;
	while (off < m->spill_bytes || pos < have) {
		size_t avail = have - pos;
		struct spill_record r;
		bool need_more = avail < sizeof(r);
		if (!need_more) {
			memcpy(&r, rbuf + pos, sizeof(r));
			if (r.depth > m->max_depth) {
				errno = EIO;
				return -1;
			}
			need_more = avail < record_size(r.depth);
		}
		if (need_more) {
			if (off >= m->spill_bytes) {
				errno = EIO;   /* truncated record */
				return -1;
			}
			memmove(rbuf, rbuf + pos, avail);
			have = avail;
			pos = 0;
			size_t want = rcap - have;
			if ((uint64_t)want > m->spill_bytes - off)
				want = (size_t)(m->spill_bytes - off);
			if (tempfile_read_at(m->spill_fd, rbuf + have, want, off) < 0)
				return -1;
			off += want;
			have += want;
			continue;
		}
		const unsigned char *src = rbuf + pos + sizeof(r);
		pos += record_size(r.depth);
		if (r.hash < p->lo || r.hash > p->hi)
			continue;
		/* Addresses are copied out so they are aligned. */
		uint64_t *addrs = m->scratch;
		memcpy(addrs, src, (size_t)r.depth * sizeof(uint64_t));
		if (pass_add(p, r.hash, r.thread_key, r.flags, addrs, r.depth, r.count) < 0)
			return -1;
	}
	return 0;
}

static int foreach_merged(struct stackmap *m,
			  int (*fn)(void *ctx, const struct stackmap_entry *e), void *ctx)
{
	if (flush_spill(m) < 0)
		return -1;
	struct pass p;
	if (pass_init(&p, m) < 0)
		return -1;
	size_t rcap = record_size(m->max_depth);
	if (rcap < RBUF_MIN)
		rcap = RBUF_MIN;
	unsigned char *rbuf = malloc(rcap);
	if (!rbuf) {
		pass_free(&p);
		errno = ENOMEM;
		return -1;
	}
	int ret = 0;
	uint64_t lo = 0;
	for (;;) {
		pass_begin(&p, lo);
		if (pass_add_residents(&p, m) < 0 || pass_add_spill(&p, m, rbuf, rcap) < 0) {
			ret = -1;
			break;
		}
		for (size_t i = 0; i < p.n && ret == 0; i++) {
			const struct pass_entry *pe = &p.e[i];
			struct stackmap_entry e = {
				.thread_key = pe->thread_key, .flags = pe->flags, .depth = pe->depth,
				.addrs = &p.arena[pe->off], .count = pe->count,
			};
			ret = fn(ctx, &e);
		}
		if (ret != 0 || p.hi == UINT64_MAX)
			break;
		lo = p.hi + 1;
	}
	int saved = errno;
	free(rbuf);
	pass_free(&p);
	errno = saved;
	return ret;
}

int stackmap_foreach(struct stackmap *m,
		     int (*fn)(void *ctx, const struct stackmap_entry *e), void *ctx)
{
	if (m->spill_fd >= 0)
		return foreach_merged(m, fn, ctx);
	for (size_t b = 0; b < m->nbuckets; b++) {
		const struct slot *bucket = &m->slots[b * SLOTS];
		for (unsigned j = 0; j < m->fill[b]; j++) {
			const struct slot *s = &bucket[j];
			gather_addrs(m, s, m->scratch);
			struct stackmap_entry e = {
				.thread_key = s->thread_key, .flags = s->flags, .depth = s->depth,
				.addrs = m->scratch, .count = s->count,
			};
			int ret = fn(ctx, &e);
			if (ret != 0)
				return ret;
		}
	}
	return 0;
}

/* ---- the kernel's account per thread key ---------------------------------------- */

int stackmap_reserve_keys(struct stackmap *m, size_t n)
{
	void *const arrays[] = { &m->keys };
	const size_t sizes[] = { sizeof *m->keys };
	return array_grow_each(arrays, sizes, 1, &m->nkeys, n, 64);
}

void stackmap_add_cpu(struct stackmap *m, uint32_t key, uint64_t ns)
{
	uint64_t *to = key == STACKMAP_POOL_KEY ? &m->pool_cpu_ns
		       : key < m->nkeys ? &m->keys[key].cpu_ns : NULL;
	m->accounted = true;
	if (to)
		*to = *to + ns < *to ? UINT64_MAX : *to + ns;
}

void stackmap_add_span(struct stackmap *m, uint32_t key, uint32_t class, uint64_t ns)
{
	if (key < m->nkeys) {
		uint64_t *to = class == STACK_PREEMPT ? &m->keys[key].preempt_span_ns
						       : &m->keys[key].span_ns;
		*to = *to + ns < *to ? UINT64_MAX : *to + ns;
	}
}

void stackmap_set_account_whole(struct stackmap *m, bool whole)
{
	m->account_whole = whole;
}

void stackmap_key_account(const struct stackmap *m, uint32_t key, struct stackmap_account *out)
{
	*out = (struct stackmap_account){ .nkeys = m->nkeys, .accounted = m->accounted,
					  .whole = m->account_whole, .pool_cpu_ns = m->pool_cpu_ns };
	if (key < m->nkeys) {
		out->counted = m->keys[key].counted;
		out->cpu_ns = m->keys[key].cpu_ns;
		out->woken = m->keys[key].woken;
		out->span_ns = m->keys[key].span_ns;
		out->preempted = m->keys[key].preempted;
		out->preempt_span_ns = m->keys[key].preempt_span_ns;
	}
}
