/* write_folded: the folded ("collapsed") stack format, one line per distinct
 * stack: "root;...;leaf COUNT", merged and sorted so the output is
 * deterministic. The stacks built here also feed the SVG and text writers.
 *
 * Samples are stored leaf first and each location expands to its lines
 * innermost first, so the frames of a sample leaf first are the locations in
 * order, each location's lines in order; the folded line is that reversed. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "write.h"

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

size_t folded_escape(const char *in, char *out, size_t outsz)
{
	size_t n = 0, i;

	if (!outsz)
		return 0;
	for (; in && *in && n + 1 < outsz; in++) {
		unsigned char c = (unsigned char)*in;
		if (c < 0x20 || c == 0x7f)
			continue;
		out[n++] = c == ';' ? ':' : (char)c;
	}
	out[n] = '\0';
	/* A name ending in " <digits>" (or " 1.5") would read as a count to
	 * flamegraph.pl and difffolded: join the number to the name. */
	i = n;
	while (i > 0 && (is_digit(out[i - 1]) || out[i - 1] == '.'))
		i--;
	if (i < n && i > 0 && out[i - 1] == ' ') {
		bool digits = false;
		for (size_t j = i; j < n; j++)
			digits |= is_digit(out[j]);
		if (digits)
			out[i - 1] = '_';
	}
	return n;
}

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
	if (fb->n == fb->cap) {
		size_t cap = fb->cap ? fb->cap * 2 : 64;
		struct write_frame *f = realloc(fb->f, cap * sizeof *f);
		if (!f)
			return -1;
		fb->f = f;
		fb->cap = cap;
	}
	fb->f[fb->n].kind = kind;
	fb->f[fb->n].function = function;
	fb->f[fb->n].mapping = mapping;
	fb->n++;
	return 0;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* The name of an address without a symbol: "[module+0xOFFSET]" or "[0xADDR]". */
static const char *unknown_name(const struct profile *p, const struct profile_location *l,
				char *buf, size_t bufsz)
{
	if (l->mapping != PROFILE_NONE && l->mapping < p->nmappings) {
		const struct profile_mapping *m = &p->mappings[l->mapping];
		const char *base = base_name(m->filename ? m->filename : "");
		if (*base) {
			snprintf(buf, bufsz, "[%s+0x%" PRIx64 "]", base,
				 l->address - m->start + m->offset);
			return buf;
		}
	}
	snprintf(buf, bufsz, "[0x%" PRIx64 "]", l->address);
	return buf;
}

static const char *frame_name(const struct profile *p, const struct profile_location *l,
			      const struct write_frame *f, char *buf, size_t bufsz)
{
	if (f->function != PROFILE_NONE) {
		const struct profile_function *fn = &p->functions[f->function];
		if (fn->name && *fn->name)
			return fn->name;
		if (fn->system_name && *fn->system_name)
			return fn->system_name;
	}
	return unknown_name(p, l, buf, bufsz);
}

static const char *frame_suffix(const struct write_options *opt, enum write_frame_kind kind)
{
	if (!opt || !opt->annotate)
		return "";
	if (kind == WRITE_FRAME_INLINE)
		return "_[i]";
	if (kind == WRITE_FRAME_JIT)
		return "_[j]";
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
		uint32_t li = p->sample_locs[s->first_loc + i];
		const struct profile_location *l = &p->locations[li];
		if (!l->nlines) {
			if (frame_push(leaf_first, WRITE_FRAME_UNKNOWN, li, l->mapping) < 0)
				return -1;
			continue;
		}
		for (uint32_t j = 0; j < l->nlines; j++) {
			enum write_frame_kind k = l->jit ? WRITE_FRAME_JIT
				: j + 1 < l->nlines ? WRITE_FRAME_INLINE : WRITE_FRAME_NATIVE;
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
		name = frame_name(p, l, &f, buf, sizeof buf);
		if (strbuf_add_separator(b) < 0 || strbuf_add_escaped(b, name, frame_suffix(opt, f.kind)) < 0 ||
		    frame_push(fb, f.kind, f.function, f.mapping) < 0)
			return -1;
	}
	return 0;
}

static int stack_compare(const void *a, const void *b)
{
	const struct folded_stack *x = a, *y = b;
	return folded_line_compare(x->line, y->line);
}

void folded_stacks_free(struct folded_stack *stacks, size_t nstacks)
{
	for (size_t i = 0; i < nstacks; i++) {
		free(stacks[i].line);
		free(stacks[i].frames);
	}
	free(stacks);
}

int folded_stacks(const struct profile *p, const struct write_options *opt,
		  struct folded_stack **stacks, size_t *nstacks)
{
	struct folded_stack *st = NULL;
	struct strbuf b = { 0 };
	struct frame_buf fb = { 0 }, leaf = { 0 };
	size_t n = 0, i, out;
	int err;

	*stacks = NULL;
	*nstacks = 0;
	if (p->nsamples) {
		st = calloc(p->nsamples, sizeof *st);
		if (!st)
			return -1;
	}
	for (i = 0; i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];
		if (!s->count)
			continue;
		if (build_stack(p, s, opt, &b, &fb, &leaf) < 0)
			goto fail;
		st[n].line = strdup(b.s);
		st[n].frames = malloc((fb.n ? fb.n : 1) * sizeof *fb.f);
		st[n].count = s->count;
		st[n].nframes = fb.n;
		n++;
		if (!st[n - 1].line || !st[n - 1].frames)
			goto fail;
		memcpy(st[n - 1].frames, fb.f, fb.n * sizeof *fb.f);
	}
	free(b.s);
	free(fb.f);
	free(leaf.f);
	if (n)
		qsort(st, n, sizeof *st, stack_compare);
	for (i = 0, out = 0; i < n; i++) {
		if (out && strcmp(st[out - 1].line, st[i].line) == 0) {
			st[out - 1].count += st[i].count;
			free(st[i].line);
			free(st[i].frames);
			continue;
		}
		st[out++] = st[i];
	}
	*stacks = st;
	*nstacks = out;
	return 0;
fail:
	err = errno ? errno : ENOMEM;
	free(b.s);
	free(fb.f);
	free(leaf.f);
	folded_stacks_free(st, n);
	errno = err;
	return -1;
}

int write_folded(const struct profile *p, FILE *out, const struct write_options *opt)
{
	struct folded_stack *st;
	size_t n;
	int ret = 0;

	if (folded_stacks(p, opt, &st, &n) < 0)
		return -1;
	for (size_t i = 0; i < n && ret == 0; i++)
		if (fprintf(out, "%s %" PRIu64 "\n", st[i].line, st[i].count) < 0)
			ret = -1;
	folded_stacks_free(st, n);
	if (ret == 0 && ferror(out)) {
		errno = errno ? errno : EIO;
		ret = -1;
	}
	return ret;
}
