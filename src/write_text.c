/* write_text: a report for the terminal: the top functions by self and by
 * total samples (count and share), then the hottest stacks, leaf first.
 *
 * Built from the same merged stacks as the folded output, whose frame names
 * are already escaped (no control characters, so no forged lines). A frame's
 * self samples are those of the stacks it ends; its total samples count each
 * stack once however often the frame recurs in it. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "write.h"

#define TOP_FUNCTIONS 25
#define TOP_STACKS 10
#define STACK_FRAMES_SHOWN 40

struct func_stat {
	const char *name;        /* into a folded line */
	size_t len;
	uint64_t self, total;
	size_t last_stack;       /* + 1 of the stack that last counted total */
};

struct func_table {
	struct func_stat *f;
	size_t n;
	uint32_t *slot;          /* index + 1 */
	size_t nslots;
};

static uint32_t name_hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

/* The stat of NAME, added if new; NULL on ENOMEM. The table is sized for
 * every frame up front, so it never grows. */
static struct func_stat *func_find(struct func_table *t, const char *name, size_t len)
{
	size_t mask = t->nslots - 1, i = name_hash(name, len) & mask;

	for (; t->slot[i]; i = (i + 1) & mask) {
		struct func_stat *f = &t->f[t->slot[i] - 1];
		if (f->len == len && memcmp(f->name, name, len) == 0)
			return f;
	}
	t->f[t->n] = (struct func_stat){ name, len, 0, 0, 0 };
	t->slot[i] = (uint32_t)++t->n;
	return &t->f[t->n - 1];
}

static int by_self(const void *a, const void *b)
{
	const struct func_stat *x = a, *y = b;
	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return folded_line_compare(x->name, y->name);
}

static int by_total(const void *a, const void *b)
{
	const struct func_stat *x = a, *y = b;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	return folded_line_compare(x->name, y->name);
}

static int by_count(const void *a, const void *b)
{
	const struct folded_stack *x = a, *y = b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return folded_line_compare(x->line, y->line);
}

static double share(uint64_t n, uint64_t total)
{
	return total ? 100.0 * (double)n / (double)total : 0.0;
}

static void print_functions(FILE *out, const char *heading, const struct func_stat *f, size_t n,
			    uint64_t total)
{
	fprintf(out, "%s\n%10s %7s %10s %7s  %s\n", heading, "self", "self%", "total", "total%",
		"function");
	for (size_t i = 0; i < n && i < TOP_FUNCTIONS; i++)
		fprintf(out, "%10" PRIu64 " %6.2f%% %10" PRIu64 " %6.2f%%  %.*s\n", f[i].self,
			share(f[i].self, total), f[i].total, share(f[i].total, total),
			(int)f[i].len, f[i].name);
	fputc('\n', out);
}

static bool is_function_frame(enum write_frame_kind k)
{
	return k != WRITE_FRAME_THREAD && k != WRITE_FRAME_MARKER;
}

/* The frames of a folded line as (start, length) pairs; returns the count. */
static size_t split_frames(const char *line, const char **start, size_t *len, size_t max)
{
	size_t n = 0;

	while (n < max) {
		const char *e = strchr(line, ';');
		start[n] = line;
		len[n] = e ? (size_t)(e - line) : strlen(line);
		n++;
		if (!e)
			break;
		line = e + 1;
	}
	return n;
}

static void print_stack(FILE *out, const struct folded_stack *s, size_t rank, uint64_t total)
{
	size_t nframes = 1;
	const char **start;
	size_t *len, shown = 0;

	for (const char *c = s->line; *c; c++)
		nframes += *c == ';';
	start = malloc(nframes * sizeof *start);
	len = malloc(nframes * sizeof *len);
	fprintf(out, "#%zu  %" PRIu64 " samples (%.2f%%)\n", rank, s->count, share(s->count, total));
	if (!start || !len) {
		fprintf(out, "    %s\n", s->line);
	} else {
		nframes = split_frames(s->line, start, len, nframes);
		for (size_t i = nframes; i-- > 0 && shown < STACK_FRAMES_SHOWN; shown++) {
			bool thread = i < s->nframes && s->frames[i].kind == WRITE_FRAME_THREAD;
			bool inlined = i < s->nframes && s->frames[i].kind == WRITE_FRAME_INLINE;
			bool jit = i < s->nframes && s->frames[i].kind == WRITE_FRAME_JIT;
			fprintf(out, "    %s%.*s%s\n", thread ? "thread " : "", (int)len[i],
				start[i], inlined ? "  (inlined)" : jit ? "  (jit)" : "");
		}
		if (shown < nframes)
			fprintf(out, "    ... %zu more frames\n", nframes - shown);
	}
	fputc('\n', out);
	free(start);
	free(len);
}

int write_text(const struct profile *p, FILE *out, const struct write_options *opt)
{
	struct folded_stack *st;
	struct func_table t = { 0 };
	size_t nst, nframes = 0, i, nslots = 16;
	uint64_t total = 0;
	int err;

	if (folded_stacks(p, opt, &st, &nst) < 0)
		return -1;
	for (i = 0; i < nst; i++) {
		nframes += st[i].nframes;
		total += st[i].count;
	}
	while (nslots < 2 * nframes + 2)
		nslots *= 2;
	t.f = calloc(nframes ? nframes : 1, sizeof *t.f);
	t.slot = calloc(nslots, sizeof *t.slot);
	t.nslots = nslots;
	if (!t.f || !t.slot)
		goto fail;

	for (i = 0; i < nst; i++) {
		const char *s = st[i].line;
		for (size_t d = 0; *s || d == 0; d++) {
			const char *e = strchr(s, ';');
			size_t len = e ? (size_t)(e - s) : strlen(s);
			if (d >= st[i].nframes || is_function_frame(st[i].frames[d].kind)) {
				struct func_stat *f = func_find(&t, s, len);
				if (f->last_stack != i + 1) {
					f->total += st[i].count;
					f->last_stack = i + 1;
				}
				if (!e)
					f->self += st[i].count;
			}
			if (!e)
				break;
			s = e + 1;
		}
	}

	fprintf(out, "csampler report for pid %d\ncommand:  ", (int)p->pid);
	for (const char *c = p->command ? p->command : ""; *c; c++)
		if ((unsigned char)*c >= 0x20 && *c != 0x7f)
			fputc(*c, out);
	fprintf(out, "\nduration: %.2f s, period %.3f ms, %" PRIu64 " samples in %zu stacks\n\n",
		(double)p->duration_nanos / 1e9, (double)p->period_nanos / 1e6, total, nst);

	qsort(t.f, t.n, sizeof *t.f, by_self);
	print_functions(out, "Top functions by self samples", t.f, t.n, total);
	qsort(t.f, t.n, sizeof *t.f, by_total);
	print_functions(out, "Top functions by total samples", t.f, t.n, total);

	qsort(st, nst, sizeof *st, by_count);
	fprintf(out, "Hottest stacks (leaf first)\n");
	for (i = 0; i < nst && i < TOP_STACKS; i++)
		print_stack(out, &st[i], i + 1, total);

	free(t.f);
	free(t.slot);
	folded_stacks_free(st, nst);
	if (ferror(out)) {
		errno = errno ? errno : EIO;
		return -1;
	}
	return 0;
fail:
	err = errno ? errno : ENOMEM;
	free(t.f);
	free(t.slot);
	folded_stacks_free(st, nst);
	errno = err;
	return -1;
}
