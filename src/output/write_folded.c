/* write_folded: the folded ("collapsed") stack format, one line per distinct
 * stack: "root;...;leaf COUNT", merged and sorted so the output is
 * deterministic. The stacks built here also feed the SVG and text writers.
 *
 * Samples are stored leaf first and each location expands to its lines
 * innermost first, so the frames of a sample leaf first are the locations in
 * order, each location's lines in order; the folded line is that reversed.
 *
 * folded_foreach sorts with bounded memory, the way sort(1) does: stacks are
 * built into a run of at most the memory budget (records: count, frames,
 * line), a full run is sorted, its equal lines merged, and it is appended to
 * an unlinked temp file; at the end the runs are merged through a heap of
 * readers, each with a share of the budget, adding the counts of equal lines
 * across runs. A profile whose stacks fit in one run never touches a file. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array.h"
#include "tempfile.h"
#include "write_internal.h"

int folded_line_compare(const char *a, const char *b)
{
	const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;

	for (;; x++, y++) {
		unsigned cx = *x == ';' ? 1u : *x, cy = *y == ';' ? 1u : *y;
		if (cx != cy)
			return cx < cy ? -1 : 1;
		if (!cx)
			return 0;
	}
}

/* ---- building the stacks ------------------------------------------------ */

struct strbuf {
	char *s;
	size_t len, cap;
};

static int strbuf_reserve(struct strbuf *b, size_t more)
{
	size_t cap;
	char *s;

	if (more > SIZE_MAX / 2 - b->len) {
		errno = ENOMEM;
		return -1;
	}
	if (b->len + more + 1 <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap < b->len + more + 1)
		cap *= 2;
	s = realloc(b->s, cap);
	if (!s)
		return -1;
	b->s = s;
	b->cap = cap;
	return 0;
}

/* Append a ';' unless B is empty. */
static int strbuf_add_separator(struct strbuf *b)
{
	if (!b->len)
		return 0;
	if (strbuf_reserve(b, 1) < 0)
		return -1;
	b->s[b->len++] = ';';
	b->s[b->len] = '\0';
	return 0;
}

/* Append NAME escaped (a frame of its own: never empty, never ending in a
 * space that would double the one before the count), plus SUFFIX. */
static int strbuf_add_escaped(struct strbuf *b, const char *name, const char *suffix)
{
	size_t n = strlen(name), m = strlen(suffix), e;

	if (strbuf_reserve(b, n + m + sizeof "[unknown]") < 0)
		return -1;
	e = folded_escape(name, b->s + b->len, n + 1);
	if (!e) {
		memcpy(b->s + b->len, "[unknown]", sizeof "[unknown]");
		e = sizeof "[unknown]" - 1;
	}
	if (b->s[b->len + e - 1] == ' ')
		b->s[b->len + e - 1] = '_';
	b->len += e;
	memcpy(b->s + b->len, suffix, m + 1);
	b->len += m;
	return 0;
}

struct frame_buf {
	struct write_frame *f;
	size_t n, cap;
};

static int frame_push(struct frame_buf *fb, enum write_frame_kind kind, uint32_t function,
		      uint32_t mapping)
{
	if (array_grow(&fb->f, &fb->cap, fb->n + 1, sizeof *fb->f, 64) < 0)
		return -1;
	fb->f[fb->n].kind = kind;
	fb->f[fb->n].function = function;
	fb->f[fb->n].mapping = mapping;
	fb->n++;
	return 0;
}

static const char *frame_suffix(const struct write_options *opt, enum write_frame_kind kind)
{
	if (!opt || !opt->annotate)
		return "";
	if (kind == WRITE_FRAME_INLINE)
		return "_[i]";
	if (kind == WRITE_FRAME_JIT)
		return "_[j]";
	if (kind == WRITE_FRAME_KERNEL)
		return "_[k]";
	return "";
}

/* Build one sample's line and frames (root first) into b and fb. */
static int build_stack(const struct profile *p, const struct profile_sample *s,
		       const struct write_options *opt, struct strbuf *b, struct frame_buf *fb,
		       struct frame_buf *leaf_first)
{
	char buf[128];
	size_t i;

	b->len = 0;
	fb->n = 0;
	leaf_first->n = 0;
	if (strbuf_reserve(b, 0) < 0)
		return -1;
	b->s[0] = '\0';

	/* the frames leaf first, kept as (location, line) pairs in function/mapping */
	for (i = 0; i < s->nlocs; i++) {
		uint32_t li = s->locs[i];
		const struct profile_location *l = &p->locations[li];
		if (!l->nlines) {
			if (frame_push(leaf_first, WRITE_FRAME_UNKNOWN, li, l->mapping) < 0)
				return -1;
			continue;
		}
		for (uint32_t j = 0; j < l->nlines; j++) {
			enum write_frame_kind k = l->jit ? WRITE_FRAME_JIT
				: j + 1 < l->nlines ? WRITE_FRAME_INLINE
				: profile_location_kernel(l) ? WRITE_FRAME_KERNEL : WRITE_FRAME_NATIVE;
			/* function carries the line index for now: resolved below */
			if (frame_push(leaf_first, k, l->first_line + j, li) < 0)
				return -1;
		}
	}

	if (opt && opt->threads) {
		if (frame_push(fb, WRITE_FRAME_THREAD, PROFILE_NONE, PROFILE_NONE) < 0 ||
		    strbuf_add_escaped(b, profile_thread_label(p, s->thread, buf, sizeof buf),
				       "") < 0)
			return -1;
	}
	if (s->flags & PROFILE_SAMPLE_TRUNCATED) {
		/* the stack does not reach its root: say so at the bottom */
		if (strbuf_add_separator(b) < 0 ||
		    frame_push(fb, WRITE_FRAME_MARKER, PROFILE_NONE, PROFILE_NONE) < 0 ||
		    strbuf_add_escaped(b, "[truncated]", "") < 0)
			return -1;
	}
	if (!leaf_first->n && !fb->n) {
		if (frame_push(fb, WRITE_FRAME_UNKNOWN, PROFILE_NONE, PROFILE_NONE) < 0 ||
		    strbuf_add_escaped(b, "[unknown]", "") < 0)
			return -1;
	}
	for (i = leaf_first->n; i-- > 0;) {
		struct write_frame f = leaf_first->f[i];
		const struct profile_location *l;
		const char *name;

		if (f.kind == WRITE_FRAME_UNKNOWN) {
			l = &p->locations[f.function];
			f.function = PROFILE_NONE;
		} else {
			l = &p->locations[f.mapping];
			f.function = p->lines[f.function].function;
		}
		f.mapping = l->mapping;
		name = write_frame_name(p, l, f.function, buf, sizeof buf);
		if (strbuf_add_separator(b) < 0 || strbuf_add_escaped(b, name, frame_suffix(opt, f.kind)) < 0 ||
		    frame_push(fb, f.kind, f.function, f.mapping) < 0)
			return -1;
	}
	return 0;
}

/* ---- sorting runs ---------------------------------------------------------- */

struct run_header {
	uint64_t count;
	uint64_t base;           /* --diff: the base profile's samples of this stack */
	uint32_t nframes;
	uint32_t len;            /* of the line, without its NUL */
};

static size_t run_record_size(size_t nframes, size_t len)
{
	size_t n = sizeof(struct run_header) + nframes * sizeof(struct write_frame) + len + 1;
	return (n + 7) / 8 * 8;
}

/* A view of the record at REC (8-aligned). */
static void run_record_view(const unsigned char *rec, struct folded_stack *out)
{
	struct run_header h;

	memcpy(&h, rec, sizeof h);
	out->count = h.count;
	out->base = h.base;
	out->nframes = h.nframes;
	out->frames = (const struct write_frame *)(const void *)(rec + sizeof h);
	out->line = (const char *)(rec + sizeof h + h.nframes * sizeof(struct write_frame));
}

static const char *run_record_line(const unsigned char *rec)
{
	struct folded_stack v;
	run_record_view(rec, &v);
	return v.line;
}

struct run_span {
	uint64_t start, end;     /* byte range in the temp file */
};

struct sorter {
	const struct profile *p;
	const struct write_options *opt;
	size_t budget;
	unsigned char *arena;    /* records of the current run */
	size_t used, cap;
	size_t *offs;            /* offsets of the records in arena */
	size_t noffs, offs_cap;
	int fd;                  /* temp file of sorted runs, -1 until needed */
	uint64_t file_bytes;
	struct run_span *runs;
	size_t nruns, runs_cap;
	struct strbuf line;
	struct frame_buf frames, leaf;
};

static int offset_compare(const void *a, const void *b, void *arena)
{
	const unsigned char *base = arena;
	return folded_line_compare(run_record_line(base + *(const size_t *)a),
				   run_record_line(base + *(const size_t *)b));
}

/* Sort the run and merge its equal lines (into the first of them). */
static void sort_run(struct sorter *so)
{
	size_t out = 0;

	if (!so->noffs)
		return;
	qsort_r(so->offs, so->noffs, sizeof *so->offs, offset_compare, so->arena);
	for (size_t i = 0; i < so->noffs; i++) {
		unsigned char *rec = so->arena + so->offs[i];
		if (out) {
			unsigned char *prev = so->arena + so->offs[out - 1];
			if (strcmp(run_record_line(prev), run_record_line(rec)) == 0) {
				struct run_header hp, hr;
				memcpy(&hp, prev, sizeof hp);
				memcpy(&hr, rec, sizeof hr);
				hp.count += hr.count;
				hp.base += hr.base;
				memcpy(prev, &hp, sizeof hp);
				continue;
			}
		}
		so->offs[out++] = so->offs[i];
	}
	so->noffs = out;
}

/* Sort the current run and append it to the temp file; the arena is reused. */
static int spill_run(struct sorter *so)
{
	struct run_span span;
	size_t i = 0;

	sort_run(so);
	if (so->fd < 0 && (so->fd = tempfile_open(NULL, "sort")) < 0)
		return -1;
	span.start = so->file_bytes;
	while (i < so->noffs) {
		/* write the records in sorted order, copying them together in batches */
		unsigned char batch[65536];
		size_t n = 0;
		for (; i < so->noffs; i++) {
			const unsigned char *rec = so->arena + so->offs[i];
			struct folded_stack v;
			run_record_view(rec, &v);
			size_t sz = run_record_size(v.nframes, strlen(v.line));
			if (sz > sizeof batch) {
				if (n)
					break;
				if (tempfile_write_at(so->fd, rec, sz, so->file_bytes) < 0)
					return -1;
				so->file_bytes += sz;
				continue;
			}
			if (n + sz > sizeof batch)
				break;
			memcpy(batch + n, rec, sz);
			n += sz;
		}
		if (n && tempfile_write_at(so->fd, batch, n, so->file_bytes) < 0)
			return -1;
		so->file_bytes += n;
	}
	span.end = so->file_bytes;
	if (array_grow(&so->runs, &so->runs_cap, so->nruns + 1, sizeof *so->runs, 16) < 0)
		return -1;
	so->runs[so->nruns++] = span;
	so->used = 0;
	so->noffs = 0;
	return 0;
}

/* Add the stack just built (so->line, so->frames) with COUNT (and BASE) to
 * the run. */
static int run_add(struct sorter *so, uint64_t count, uint64_t base)
{
	size_t len = so->line.len, nframes = so->frames.n;
	size_t sz = run_record_size(nframes, len);
	struct run_header h = { count, base, (uint32_t)nframes, (uint32_t)len };
	unsigned char *rec;

	if (nframes > UINT32_MAX || len > UINT32_MAX) {
		errno = E2BIG;
		return -1;
	}
	if (so->noffs && so->used + sz + (so->noffs + 1) * sizeof *so->offs > so->budget &&
	    spill_run(so) < 0)
		return -1;
	if (array_grow(&so->arena, &so->cap, so->used + sz, 1, 4096) < 0)
		return -1;
	if (array_grow(&so->offs, &so->offs_cap, so->noffs + 1, sizeof *so->offs, 256) < 0)
		return -1;
	rec = so->arena + so->used;
	memcpy(rec, &h, sizeof h);
	if (nframes)
		memcpy(rec + sizeof h, so->frames.f, nframes * sizeof *so->frames.f);
	memcpy(rec + sizeof h + nframes * sizeof *so->frames.f, so->line.s, len + 1);
	so->offs[so->noffs++] = so->used;
	so->used += sz;
	return 0;
}

static int add_sample_stack(void *ctx, const struct profile_sample *s)
{
	struct sorter *so = ctx;

	if (!s->count)
		return 0;
	if (build_stack(so->p, s, so->opt, &so->line, &so->frames, &so->leaf) < 0 ||
	    run_add(so, (s->flags & PROFILE_SAMPLE_BASE) ? 0 : s->count,
		    (s->flags & PROFILE_SAMPLE_BASE) ? s->count : 0) < 0)
		return -1;
	return 0;
}

/* ---- merging the runs ------------------------------------------------------- */

struct run_reader {
	uint64_t pos, end;       /* next byte to read from the file, end of the run */
	unsigned char *buf;
	size_t cap, start, have; /* the current record is buf[start...], have bytes held */
};

/* Make the record at the reader's start whole in its buffer; 1 when there is
 * one, 0 at the end of the run, -1 with errno. */
static int reader_fill(int fd, struct run_reader *r)
{
	size_t need = sizeof(struct run_header);

	for (int pass = 0; pass < 2; pass++) {
		if (r->have - r->start < need) {
			if (r->start) {
				memmove(r->buf, r->buf + r->start, r->have - r->start);
				r->have -= r->start;
				r->start = 0;
			}
			if (need > r->cap) {
				unsigned char *b = realloc(r->buf, need);
				if (!b)
					return -1;
				r->buf = b;
				r->cap = need;
			}
			size_t want = r->cap - r->have;
			if (want > r->end - r->pos)
				want = (size_t)(r->end - r->pos);
			if (tempfile_read_at(fd, r->buf + r->have, want, r->pos) < 0)
				return -1;
			r->have += want;
			r->pos += want;
			if (r->have - r->start == 0)
				return 0;
			if (r->have - r->start < need) {
				errno = EIO;        /* a torn record: our own file was cut */
				return -1;
			}
		}
		if (pass == 0) {
			struct run_header h;
			memcpy(&h, r->buf + r->start, sizeof h);
			need = run_record_size(h.nframes, h.len);
		}
	}
	return 1;
}

static void reader_advance(struct run_reader *r)
{
	struct run_header h;
	memcpy(&h, r->buf + r->start, sizeof h);
	r->start += run_record_size(h.nframes, h.len);
}

static const char *reader_line(const struct run_reader *r)
{
	return run_record_line(r->buf + r->start);
}

static void heap_sift_down(struct run_reader **heap, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < n && folded_line_compare(reader_line(heap[l]), reader_line(heap[m])) < 0)
			m = l;
		if (l + 1 < n && folded_line_compare(reader_line(heap[l + 1]), reader_line(heap[m])) < 0)
			m = l + 1;
		if (m == i)
			return;
		struct run_reader *t = heap[i];
		heap[i] = heap[m];
		heap[m] = t;
		i = m;
	}
}

/* A stack held across runs while equal lines are added up. */
struct pending {
	struct strbuf line;
	struct frame_buf frames;
	uint64_t count, base;
	bool full;
};

static int pending_set(struct pending *pd, const struct folded_stack *v)
{
	size_t len = strlen(v->line);

	pd->line.len = 0;
	pd->frames.n = 0;
	if (strbuf_reserve(&pd->line, len) < 0)
		return -1;
	memcpy(pd->line.s, v->line, len + 1);
	pd->line.len = len;
	for (size_t i = 0; i < v->nframes; i++)
		if (frame_push(&pd->frames, v->frames[i].kind, v->frames[i].function,
			       v->frames[i].mapping) < 0)
			return -1;
	pd->count = v->count;
	pd->base = v->base;
	pd->full = true;
	return 0;
}

static int pending_emit(struct pending *pd, int (*fn)(void *ctx, const struct folded_stack *s),
			void *ctx)
{
	struct folded_stack v = { pd->line.s, pd->frames.f, pd->frames.n, pd->count, pd->base };

	pd->full = false;
	return fn(ctx, &v);
}

static int merge_runs(struct sorter *so, int (*fn)(void *ctx, const struct folded_stack *s),
		      void *ctx)
{
	struct run_reader *readers = calloc(so->nruns, sizeof *readers);
	struct run_reader **heap = calloc(so->nruns, sizeof *heap);
	struct pending pd = { 0 };
	size_t share = so->budget / (so->nruns ? so->nruns : 1), n = 0;
	int ret = -1;

	if (share < 4096)
		share = 4096;
	if (!readers || !heap)
		goto out;
	for (size_t i = 0; i < so->nruns; i++) {
		struct run_reader *r = &readers[i];
		int got;
		r->pos = so->runs[i].start;
		r->end = so->runs[i].end;
		r->buf = malloc(share);
		if (!r->buf)
			goto out;
		r->cap = share;
		got = reader_fill(so->fd, r);
		if (got < 0)
			goto out;
		if (got)
			heap[n++] = r;
	}
	for (size_t i = n / 2; i-- > 0;)
		heap_sift_down(heap, n, i);
	ret = 0;
	while (n && ret == 0) {
		struct run_reader *r = heap[0];
		struct folded_stack v;
		int got;

		run_record_view(r->buf + r->start, &v);
		if (pd.full && strcmp(pd.line.s, v.line) == 0) {
			pd.count += v.count;
			pd.base += v.base;
		} else {
			if (pd.full)
				ret = pending_emit(&pd, fn, ctx);
			if (ret == 0 && pending_set(&pd, &v) < 0)
				ret = -1;
		}
		if (ret)
			break;
		reader_advance(r);
		got = reader_fill(so->fd, r);
		if (got < 0) {
			ret = -1;
			break;
		}
		if (!got)
			heap[0] = heap[--n];
		heap_sift_down(heap, n, 0);
	}
	if (ret == 0 && pd.full)
		ret = pending_emit(&pd, fn, ctx);
out:
	if (readers)
		for (size_t i = 0; i < so->nruns; i++)
			free(readers[i].buf);
	free(readers);
	free(heap);
	free(pd.line.s);
	free(pd.frames.f);
	return ret;
}

int folded_foreach(const struct profile *p, const struct write_options *opt,
		   int (*fn)(void *ctx, const struct folded_stack *s), void *ctx)
{
	struct sorter so = { .p = p, .opt = opt, .fd = -1 };
	int ret, err;

	so.budget = opt && opt->memory ? opt->memory : WRITE_MEMORY_DEFAULT;
	errno = 0;
	ret = profile_foreach_sample(p, add_sample_stack, &so);
	if (ret == 0 && so.nruns && so.noffs)
		ret = spill_run(&so);
	if (ret == 0 && so.nruns) {
		/* the arena's memory goes to the readers */
		free(so.arena);
		free(so.offs);
		so.arena = NULL;
		so.offs = NULL;
		ret = merge_runs(&so, fn, ctx);
	} else if (ret == 0) {
		sort_run(&so);
		for (size_t i = 0; i < so.noffs && ret == 0; i++) {
			struct folded_stack v;
			run_record_view(so.arena + so.offs[i], &v);
			ret = fn(ctx, &v);
		}
	}
	err = errno;
	if (so.fd >= 0)
		close(so.fd);
	free(so.arena);
	free(so.offs);
	free(so.runs);
	free(so.line.s);
	free(so.frames.f);
	free(so.leaf.f);
	if (ret < 0 && !err)
		err = ENOMEM;
	errno = err;
	return ret;
}

static int print_folded(void *ctx, const struct folded_stack *s)
{
	FILE *out = ctx;
	return fprintf(out, "%s %" PRIu64 "\n", s->line, s->count) < 0 ? -1 : 0;
}

/* a --diff profile: "stack BASE NEW", as difffolded.pl writes it (and
 * flamegraph.pl draws: red grew, blue shrank) */
static int print_folded_diff(void *ctx, const struct folded_stack *s)
{
	FILE *out = ctx;
	return fprintf(out, "%s %" PRIu64 " %" PRIu64 "\n", s->line, s->base, s->count) < 0 ? -1 : 0;
}

int write_folded(const struct profile *p, FILE *out, const struct write_options *opt)
{
	int ret = folded_foreach(p, opt, p->diff ? print_folded_diff : print_folded, out);

	if (ret == 0 && ferror(out)) {
		errno = errno ? errno : EIO;
		ret = -1;
	}
	return ret;
}
