/* write_text: a report for the terminal: the time per thread, the top
 * functions by self and by total samples (count, share, and where each is:
 * file:line and module), then the hottest stacks, leaf first. Functions
 * with no self samples are left out of the self table.
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

#include "array.h"
#include "write_internal.h"

#define TOP_FUNCTIONS 25
#define TOP_STACKS 10
#define TOP_THREADS 20
#define STACK_FRAMES_SHOWN 40

struct func_stat {
	const char *name;        /* in the name table */
	size_t len;
	uint64_t self, total;
	uint64_t base_self, base_total; /* a --diff profile: the base's */
	size_t last_stack;       /* + 1 of the stack that last counted total */
	uint32_t function;       /* where it is: the first profile function and */
	uint32_t mapping;        /* mapping seen under this name, or PROFILE_NONE */
};

/* One entry per distinct frame name and module (as perf report's: ld.so's
 * _start is not the program's): bounded by the code, not by the stacks. */
struct func_table {
	struct intern names;     /* "NAME\nMODULE" (names are escaped: no newline) */
	struct func_stat *f;     /* parallel to names */
	size_t n, cap;
	char *key;               /* scratch for a key */
	size_t keycap;
};

/* The stat of NAME in MODULE (a mapping's file, or ""), added if new; NULL
 * on ENOMEM. */
static struct func_stat *func_find(struct func_table *t, const char *name, size_t len,
				   const char *module)
{
	size_t mlen = strlen(module);
	if (array_grow(&t->key, &t->keycap, len + mlen + 1, 1, 256) < 0)
		return NULL;
	memcpy(t->key, name, len);
	t->key[len] = '\n';
	memcpy(t->key + len + 1, module, mlen);
	int64_t i = intern_index(&t->names, t->key, len + 1 + mlen);

	if (i < 0)
		return NULL;
	if ((size_t)i == t->n) {
		if (array_grow(&t->f, &t->cap, t->n + 1, sizeof *t->f, 128) < 0)
			return NULL;
		t->f[t->n++] = (struct func_stat){ t->names.strs[i], len, 0, 0, 0, 0, 0,
						   PROFILE_NONE, PROFILE_NONE };
	}
	return &t->f[i];
}

/* The larger of X and Y first (for qsort); 0 when they are equal. */
static int larger_first(uint64_t x, uint64_t y)
{
	return x == y ? 0 : x < y ? 1 : -1;
}

static int by_self(const void *a, const void *b)
{
	const struct func_stat *x = a, *y = b;
	int c = larger_first(x->self, y->self);
	if (!c)
		c = larger_first(x->total, y->total);
	return c ? c : folded_line_compare(x->name, y->name);
}

/* a --diff profile: the largest change of self, then of total, first */
static uint64_t change(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

static int by_change(const void *a, const void *b)
{
	const struct func_stat *x = a, *y = b;
	int c = larger_first(change(x->self, x->base_self), change(y->self, y->base_self));
	if (!c)
		c = larger_first(change(x->total, x->base_total), change(y->total, y->base_total));
	return c ? c : folded_line_compare(x->name, y->name);
}

static int by_total(const void *a, const void *b)
{
	const struct func_stat *x = a, *y = b;
	int c = larger_first(x->total, y->total);
	if (!c)
		c = larger_first(x->self, y->self);
	return c ? c : folded_line_compare(x->name, y->name);
}

static double share(uint64_t n, uint64_t total)
{
	return total ? 100.0 * (double)n / (double)total : 0.0;
}

/* "  (file.c:12, module)", "  (module)" or nothing. The file and module
 * names come from the target's binaries: escaped for a terminal. */
static void print_where(FILE *out, const struct profile *p, const struct func_stat *f)
{
	const char *file = f->function < p->nfunctions ? p->functions[f->function].filename : "";
	int64_t line = f->function < p->nfunctions ? p->functions[f->function].start_line : 0;
	const char *module = f->mapping < p->nmappings ? write_module_name(&p->mappings[f->mapping]) : "";
	char file_safe[256], module_safe[256];
	escape_terminal(write_base_name(file ? file : ""), file_safe, sizeof file_safe);
	escape_terminal(write_base_name(module ? module : ""), module_safe, sizeof module_safe);
	if (!*file_safe && !*module_safe)
		return;
	fprintf(out, "  (%s", file_safe);
	if (*file_safe && line > 0)
		fprintf(out, ":%" PRId64, line);
	fprintf(out, "%s%s)", *file_safe && *module_safe ? ", " : "", module_safe);
}

/* The first N functions of F; with SELF_ONLY, only those with self samples. */
static void print_functions(FILE *out, const struct profile *p, const char *heading,
			    const struct func_stat *f, size_t n, uint64_t total, bool self_only)
{
	fprintf(out, "%s\n%10s %7s %10s %7s  %s\n", heading, "self", "self%", "total", "total%",
		"function  (file:line, module)");
	for (size_t i = 0; i < n && i < TOP_FUNCTIONS && (!self_only || f[i].self); i++) {
		fprintf(out, "%10" PRIu64 " %6.2f%% %10" PRIu64 " %6.2f%%  %.*s", f[i].self,
			share(f[i].self, total), f[i].total, share(f[i].total, total),
			(int)f[i].len, f[i].name);
		print_where(out, p, &f[i]);
		fputc('\n', out);
	}
	fputc('\n', out);
}

/* A --diff profile's report: each function's share of its profile's samples
 * before (the base) and after, the largest changes first. */
static void print_diff(FILE *out, const struct profile *p, struct func_stat *f, size_t n,
		       uint64_t total, size_t nstacks)
{
	char a[1040], b[1040];
	escape_terminal(p->base_name ? p->base_name : "", a, sizeof a);
	escape_terminal(p->new_name ? p->new_name : "", b, sizeof b);
	fprintf(out, "csampler diff\nbase:     %s\nnew:      %s\n%" PRIu64 " samples in %zu "
		"stacks (the base's scaled to the same total: shares are compared)\n\n", a, b, total,
		nstacks);
	if (n)
		qsort(f, n, sizeof *f, by_change);
	fprintf(out, "Largest changes by function (self)\n%8s %8s %8s %8s %8s  %s\n", "base%",
		"new%", "change", "total%", "change", "function  (file:line, module)");
	for (size_t i = 0; i < n && i < TOP_FUNCTIONS; i++) {
		if (!change(f[i].self, f[i].base_self) && !change(f[i].total, f[i].base_total))
			break;
		fprintf(out, "%7.2f%% %7.2f%% %+8.2f %7.2f%% %+8.2f  %.*s", share(f[i].base_self, total),
			share(f[i].self, total), share(f[i].self, total) - share(f[i].base_self, total),
			share(f[i].total, total), share(f[i].total, total) - share(f[i].base_total, total),
			(int)f[i].len, f[i].name);
		print_where(out, p, &f[i]);
		fputc('\n', out);
	}
	fputc('\n', out);
}

/* ---- time per thread ------------------------------------------------------- */

struct thread_time {
	uint32_t thread;
	uint64_t count;
};

static int add_thread_time(void *ctx, const struct profile_sample *s)
{
	struct thread_time *t = ctx;
	t[s->thread].count += s->count;
	return 0;
}

static int by_count(const void *a, const void *b)
{
	const struct thread_time *x = a, *y = b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->thread < y->thread ? -1 : x->thread > y->thread;
}

/* The threads by samples, busiest first; the rest summed in one line. */
static int print_threads(FILE *out, const struct profile *p, uint64_t total)
{
	struct thread_time *t = calloc(p->nthreads + 1, sizeof *t);
	char label[128], safe[128];
	if (!t)
		return -1;
	for (uint32_t i = 0; i < p->nthreads; i++)
		t[i].thread = i;
	if (profile_foreach_sample(p, add_thread_time, t) != 0) {
		free(t);
		return -1;
	}
	qsort(t, p->nthreads, sizeof *t, by_count);
	bool time = !p->value_type;
	if (time)
		fprintf(out, "%s by thread\n%10s %7s %10s  %s\n",
			p->wall ? "Wall-clock time" : "CPU time", "samples", "share", "seconds", "thread");
	else
		fprintf(out, "%s by thread\n%14s %7s  %s\n", p->value_type, profile_count_word(p),
			"share", "thread");
	size_t shown = 0;
	uint64_t rest = 0, nrest = 0;
	for (uint32_t i = 0; i < p->nthreads && t[i].count; i++) {
		if (shown == TOP_THREADS) {
			rest += t[i].count;
			nrest++;
			continue;
		}
		/* the thread's name is the target's: escaped as a folded frame */
		folded_escape(profile_thread_label(p, t[i].thread, label, sizeof label), safe,
			      sizeof safe);
		if (time)
			fprintf(out, "%10" PRIu64 " %6.2f%% %10.3f  %s\n", t[i].count,
				share(t[i].count, total),
				(double)t[i].count * (double)p->period_nanos / 1e9, safe);
		else
			fprintf(out, "%14" PRIu64 " %6.2f%%  %s\n", t[i].count,
				share(t[i].count, total), safe);
		shown++;
	}
	if (nrest && time)
		fprintf(out, "%10" PRIu64 " %6.2f%% %10.3f  (%" PRIu64 " more threads)\n", rest,
			share(rest, total), (double)rest * (double)p->period_nanos / 1e9, nrest);
	else if (nrest)
		fprintf(out, "%14" PRIu64 " %6.2f%%  (%" PRIu64 " more threads)\n", rest,
			share(rest, total), nrest);
	fputc('\n', out);
	free(t);
	return 0;
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

static void print_stack(FILE *out, const struct folded_stack *s, size_t rank, uint64_t total,
			const char *word)
{
	size_t nframes = 1;
	const char **start;
	size_t *len, shown = 0;

	for (const char *c = s->line; *c; c++)
		nframes += *c == ';';
	start = malloc(nframes * sizeof *start);
	len = malloc(nframes * sizeof *len);
	fprintf(out, "#%zu  %" PRIu64 " %s (%.2f%%)\n", rank, s->count,
		strcmp(word, "samples") ? word : s->count == 1 ? "sample" : "samples",
		share(s->count, total));
	if (!start || !len) {
		fprintf(out, "    %s\n", s->line);
	} else {
		nframes = split_frames(s->line, start, len, nframes);
		for (size_t i = nframes; i-- > 0 && shown < STACK_FRAMES_SHOWN; shown++) {
			bool thread = i < s->nframes && s->frames[i].kind == WRITE_FRAME_THREAD;
			bool inlined = i < s->nframes && s->frames[i].kind == WRITE_FRAME_INLINE;
			bool jit = i < s->nframes && s->frames[i].kind == WRITE_FRAME_JIT;
			bool kernel = i < s->nframes && s->frames[i].kind == WRITE_FRAME_KERNEL;
			fprintf(out, "    %s%.*s%s\n", thread ? "thread " : "", (int)len[i],
				start[i], inlined ? "  (inlined)" : jit ? "  (jit)" :
				kernel ? "  (kernel)" : "");
		}
		if (shown < nframes)
			fprintf(out, "    ... %zu more frames\n", nframes - shown);
	}
	fputc('\n', out);
	free(start);
	free(len);
}

/* The TOP_STACKS heaviest stacks, copied: heaviest first, and on equal
 * counts the first in line order (the order they arrive in). */
struct top_stacks {
	struct kept_stack {
		char *line;
		struct write_frame *frames;
		size_t nframes;
		uint64_t count;
	} s[TOP_STACKS];
	size_t n;
};

static int top_stacks_offer(struct top_stacks *top, const struct folded_stack *st)
{
	struct kept_stack k;
	size_t at = top->n;

	while (at > 0 && top->s[at - 1].count < st->count)
		at--;
	if (at >= TOP_STACKS)
		return 0;
	k.line = strdup(st->line);
	k.frames = malloc((st->nframes ? st->nframes : 1) * sizeof *k.frames);
	if (!k.line || !k.frames) {
		free(k.line);
		free(k.frames);
		return -1;
	}
	memcpy(k.frames, st->frames, st->nframes * sizeof *k.frames);
	k.nframes = st->nframes;
	k.count = st->count;
	if (top->n == TOP_STACKS) {
		free(top->s[TOP_STACKS - 1].line);
		free(top->s[TOP_STACKS - 1].frames);
		top->n--;
	}
	memmove(&top->s[at + 1], &top->s[at], (top->n - at) * sizeof top->s[0]);
	top->s[at] = k;
	top->n++;
	return 0;
}

struct text_report {
	const struct profile *p;
	struct func_table t;
	struct top_stacks top;
	size_t nstacks;
	uint64_t total;
};

static int count_stack(void *ctx, const struct folded_stack *st)
{
	struct text_report *r = ctx;
	const char *s = st->line;

	r->nstacks++;
	r->total += st->count;
	for (size_t d = 0;; d++) {
		const char *e = strchr(s, ';');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		if (d >= st->nframes || is_function_frame(st->frames[d].kind)) {
			uint32_t m = d < st->nframes ? st->frames[d].mapping : PROFILE_NONE;
			const char *module = m < r->p->nmappings ?
					     write_module_name(&r->p->mappings[m]) : "";
			struct func_stat *f = func_find(&r->t, s, len, module);
			if (!f)
				return -1;
			if (f->function == PROFILE_NONE && d < st->nframes) {
				f->function = st->frames[d].function;
				f->mapping = st->frames[d].mapping;
			}
			if (f->last_stack != r->nstacks) {
				f->total += st->count;
				f->base_total += st->base;
				f->last_stack = r->nstacks;
			}
			if (!e) {
				f->self += st->count;
				f->base_self += st->base;
			}
		}
		if (!e)
			break;
		s = e + 1;
	}
	return top_stacks_offer(&r->top, st);
}

static void text_report_free(struct text_report *r)
{
	intern_free(&r->t.names);
	free(r->t.f);
	free(r->t.key);
	for (size_t i = 0; i < r->top.n; i++) {
		free(r->top.s[i].line);
		free(r->top.s[i].frames);
	}
}

int write_text(const struct profile *p, FILE *out, const struct write_options *opt)
{
	struct text_report r = { .p = p };
	int ret = 0;
	struct write_options o = opt ? *opt : (struct write_options){ 0 };
	o.annotate = false;      /* inlined and JIT frames are marked in words */

	if (folded_foreach(p, &o, count_stack, &r) != 0) {
		int err = errno ? errno : ENOMEM;
		text_report_free(&r);
		errno = err;
		return -1;
	}

	if (p->diff) {
		print_diff(out, p, r.t.f, r.t.n, r.total, r.nstacks);
		text_report_free(&r);
		return ferror(out) ? -1 : 0;
	}
	/* one line, whatever the arguments hold: escaped for a terminal */
	const char *cmd = p->command ? p->command : "";
	size_t need = escape_terminal(cmd, NULL, 0) + 1;
	char *line = malloc(need);
	if (line)
		escape_terminal(cmd, line, need);
	fprintf(out, "csampler report for pid %d\ncommand:  %s", (int)p->pid, line ? line : "?");
	free(line);
	for (size_t i = 0; i < p->nlabels; i++) {
		char value[1040];   /* a --label value (256 bytes) escaped; longer ones cut */
		escape_terminal(p->labels[i].value, value, sizeof value);
		fprintf(out, "%s%s=%s", i ? ", " : "\nlabels:   ", p->labels[i].key, value);
	}
	if (p->value_type)
		fprintf(out, "\nprofile:  %s (%s), %" PRIu64 " %s in %zu stacks\n\n", p->value_type,
			p->value_unit, r.total, profile_count_word(p), r.nstacks);
	else
		fprintf(out, "\nduration: %.2f s, period %.3f ms, %" PRIu64 " %s (%.2f s of %s) in "
			"%zu stacks\n\n", (double)p->duration_nanos / 1e9,
			(double)p->period_nanos / 1e6, r.total, r.total == 1 ? "sample" : "samples",
			(double)r.total * (double)p->period_nanos / 1e9,
			p->wall ? "wall-clock time" : "CPU", r.nstacks);

	if (print_threads(out, p, r.total) < 0) {
		int err = errno ? errno : ENOMEM;
		text_report_free(&r);
		errno = err;
		return -1;
	}
	if (r.t.n)
		qsort(r.t.f, r.t.n, sizeof *r.t.f, by_self);
	char heading[128];
	snprintf(heading, sizeof heading, "Top functions by self %s", profile_count_word(p));
	print_functions(out, p, heading, r.t.f, r.t.n, r.total, true);
	if (r.t.n)
		qsort(r.t.f, r.t.n, sizeof *r.t.f, by_total);
	snprintf(heading, sizeof heading, "Top functions by total %s", profile_count_word(p));
	print_functions(out, p, heading, r.t.f, r.t.n, r.total, false);

	fprintf(out, "Hottest stacks (leaf first)\n");
	for (size_t i = 0; i < r.top.n; i++) {
		struct folded_stack v = { r.top.s[i].line, r.top.s[i].frames, r.top.s[i].nframes,
					  r.top.s[i].count, 0 };
		print_stack(out, &v, i + 1, r.total, profile_count_word(p));
	}
	text_report_free(&r);
	if (ferror(out)) {
		errno = errno ? errno : EIO;
		ret = -1;
	}
	return ret;
}
