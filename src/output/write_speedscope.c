/* write_speedscope: speedscope's JSON file format, one "sampled" profile per
 * thread, so speedscope's Time Order view is a per-thread timeline.
 *
 * Frames are shared: one per function (name, file, the function's line),
 * one per address without a symbol, and "[truncated]" / "[unknown]". A
 * stack lists frames root first, inline frames included.
 *
 * Time: the unit is nanoseconds from the start of sampling. A sample taken
 * at T standing for COUNT periods covers [T - COUNT x period, T], moved
 * later if it would overlap the thread's previous sample, so each weight is
 * the sample's CPU time exactly (as in every other format). The time between
 * a thread's samples, when it ran on no CPU (or was not sampled), is an
 * empty stack weighing that time: speedscope draws it as a gap. A profile
 * built without a timeline has no times: its samples follow each other.
 *
 * Memory: the samples are read from the profile's store in passes; a pass
 * renders a batch of threads whose text is estimated to fit in opt->memory
 * into memory streams, then writes them in thread order (the target process
 * first, then by process id; in each by thread id, then first seen: the main
 * thread first, whatever order the samples came in). A thread too large
 * for that is a batch of its own that streams its stack list straight to
 * the output and its weights to a temp file copied after them. So memory
 * stays bounded by opt->memory plus the interned tables, at the cost of one
 * pass over the samples per batch. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "escape.h"
#include "tempfile.h"
#include "write_internal.h"

#define SCHEMA_URL "https://www.speedscope.app/file-format-schema.json"

struct thread_out {
	uint64_t nsamples, count;
	uint64_t estimate;       /* bytes of text its samples and weights take */
	uint64_t last_end;       /* ns: the end of its last sample */
	FILE *samples, *weights; /* the batch's sinks */
	char *samples_text, *weights_text;
	size_t samples_len, weights_len;
	bool any;                /* a sample (or gap) was written */
	bool in_batch;
};

struct speedscope {
	const struct profile *p;
	FILE *out;
	struct thread_out *threads;
	uint32_t *order;         /* the sampled threads, in the order written */
	uint32_t norder;
	uint32_t *loc_frame;     /* frame of a location without lines, or PROFILE_NONE */
	uint32_t *frame_loc;     /* the location of each such frame */
	uint32_t nframes;        /* functions, then unnamed locations */
	uint32_t truncated_frame, unknown_frame;
	uint64_t budget;
};

static int frame_estimate(void *ctx, const struct profile_sample *s)
{
	struct speedscope *ss = ctx;
	const struct profile *p = ss->p;
	if (s->thread >= p->nthreads)
		return 0;
	uint64_t frames = 1;
	for (uint32_t i = 0; i < s->nlocs; i++) {
		uint32_t li = s->locs[i];
		const struct profile_location *l = &p->locations[li];
		frames += l->nlines ? l->nlines : 1;
		if (!l->nlines && ss->loc_frame[li] == PROFILE_NONE)
			ss->loc_frame[li] = ss->nframes++;
	}
	struct thread_out *t = &ss->threads[s->thread];
	t->nsamples++;
	t->count += s->count;
	/* "[a,b,c]," with indexes of up to 7 digits, a weight, and a gap's pair */
	t->estimate += 16 + frames * 8 + 2 * 24;
	return 0;
}

static void write_frame_json(struct speedscope *ss, const char *name, const char *file,
			     int64_t line, bool first)
{
	FILE *out = ss->out;
	fputs(first ? "\n{\"name\":\"" : ",\n{\"name\":\"", out);
	escape_json(out, name, strlen(name));
	fputc('"', out);
	if (file && *file) {
		fputs(",\"file\":\"", out);
		escape_json(out, file, strlen(file));
		fputc('"', out);
	}
	if (line > 0)
		fprintf(out, ",\"line\":%" PRId64, line);
	fputc('}', out);
}

static void write_frames(struct speedscope *ss)
{
	const struct profile *p = ss->p;
	char buf[128];
	bool first = true;

	fputs("\"shared\":{\"frames\":[", ss->out);
	for (uint32_t f = 0; f < p->nfunctions; f++, first = false) {
		const struct profile_function *fn = &p->functions[f];
		const char *name = fn->name && *fn->name ? fn->name
				 : fn->system_name && *fn->system_name ? fn->system_name : "[unknown]";
		write_frame_json(ss, name, fn->filename, fn->start_line, first);
	}
	/* the unnamed locations, in the order their frames were numbered */
	for (size_t li = 0; li < p->nlocations; li++)
		if (ss->loc_frame[li] != PROFILE_NONE)
			ss->frame_loc[ss->loc_frame[li] - p->nfunctions] = (uint32_t)li;
	for (uint32_t f = (uint32_t)p->nfunctions; f < ss->truncated_frame; f++, first = false) {
		const struct profile_location *l = &p->locations[ss->frame_loc[f - p->nfunctions]];
		write_frame_json(ss, write_frame_name(p, l, PROFILE_NONE, buf, sizeof buf), NULL, 0,
				 first);
	}
	write_frame_json(ss, "[truncated]", NULL, 0, first);
	write_frame_json(ss, "[unknown]", NULL, 0, false);
	fputs("]},\n", ss->out);
}

/* One stack, root first, as a JSON array. */
static void write_stack(const struct speedscope *ss, FILE *out, const struct profile_sample *s)
{
	const struct profile *p = ss->p;
	bool first = true;

	fputc('[', out);
	if (s->flags & PROFILE_SAMPLE_TRUNCATED) {
		fprintf(out, "%" PRIu32, ss->truncated_frame);
		first = false;
	}
	for (uint32_t i = s->nlocs; i-- > 0;) {
		uint32_t li = s->locs[i];
		const struct profile_location *l = &p->locations[li];
		if (!l->nlines) {
			fprintf(out, first ? "%" PRIu32 : ",%" PRIu32, ss->loc_frame[li]);
			first = false;
			continue;
		}
		for (uint32_t j = l->nlines; j-- > 0;) {
			fprintf(out, first ? "%" PRIu32 : ",%" PRIu32,
				p->lines[l->first_line + j].function);
			first = false;
		}
	}
	if (first)
		fprintf(out, "%" PRIu32, ss->unknown_frame);
	fputc(']', out);
}

static void write_entry(FILE *samples, FILE *weights, bool *any, uint64_t weight)
{
	if (*any) {
		fputc(',', samples);
		fputc(',', weights);
	}
	*any = true;
	fprintf(weights, "%" PRIu64, weight);
}

static int render_sample(void *ctx, const struct profile_sample *s)
{
	struct speedscope *ss = ctx;
	if (s->thread >= ss->p->nthreads || !ss->threads[s->thread].in_batch)
		return 0;
	struct thread_out *t = &ss->threads[s->thread];
	/* time in nanoseconds; another kind of profile's (-i) value as it is */
	uint64_t weight = ss->p->value_type ? s->count : s->count * ss->p->period_nanos;
	if (s->time_nanos != PROFILE_NO_TIME) {
		uint64_t start = s->time_nanos > weight ? s->time_nanos - weight : 0;
		if (start < t->last_end)
			start = t->last_end;
		if (start > t->last_end) {
			/* the thread ran on no CPU in between: a gap */
			write_entry(t->samples, t->weights, &t->any, start - t->last_end);
			fputs("[]", t->samples);
		}
		t->last_end = start + weight;
	} else {
		t->last_end += weight;
	}
	write_entry(t->samples, t->weights, &t->any, weight);
	write_stack(ss, t->samples, s);
	return ferror(t->samples) || ferror(t->weights) ? -1 : 0;
}

static void write_profile_head(struct speedscope *ss, uint32_t thread, bool first)
{
	const struct profile *p = ss->p;
	const struct profile_thread *pt = &p->threads[thread];
	char label[256];
	FILE *out = ss->out;

	fputs(first ? "\n{\"type\":\"sampled\",\"name\":\"" : ",\n{\"type\":\"sampled\",\"name\":\"",
	      out);
	if (pt->pid != p->pid) {
		/* another process (--children): say which */
		escape_json(out, pt->process ? pt->process : "", pt->process ? strlen(pt->process) : 0);
		fprintf(out, "[%d] ", (int)pt->pid);
	}
	profile_thread_label(p, thread, label, sizeof label);
	escape_json(out, label, strlen(label));
	/* speedscope's units: bytes, or "none" for counts of anything but time */
	const char *unit = !ss->p->value_type ? "nanoseconds"
			   : strcmp(ss->p->value_unit, "bytes") == 0 ? "bytes" : "none";
	fprintf(out, "\",\"unit\":\"%s\",\"startValue\":0,\"samples\":[", unit);
}

static void write_profile_tail(struct speedscope *ss, const struct thread_out *t)
{
	uint64_t end = ss->p->timeline && ss->p->duration_nanos > t->last_end
			       ? ss->p->duration_nanos : t->last_end;
	fprintf(ss->out, "],\"endValue\":%" PRIu64 "}", end);
}

/* Copy FILE's whole content (a temp file) to out. */
static int copy_file(FILE *from, FILE *out)
{
	char buf[65536];
	size_t n;
	if (fflush(from) == EOF || fseek(from, 0, SEEK_SET) < 0)
		return -1;
	while ((n = fread(buf, 1, sizeof buf, from)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			return -1;
	return ferror(from) ? -1 : 0;
}

static FILE *temp_stream(void)
{
	int fd = tempfile_open(NULL, "speedscope");
	FILE *f = fd >= 0 ? fdopen(fd, "w+") : NULL;
	if (!f && fd >= 0)
		close(fd);
	return f;
}

/* One thread too large for memory: its stacks straight to the output. */
static int write_streamed_thread(struct speedscope *ss, uint32_t thread, bool first)
{
	struct thread_out *t = &ss->threads[thread];
	int ret = -1;

	t->weights = temp_stream();
	if (!t->weights)
		return -1;
	write_profile_head(ss, thread, first);
	t->samples = ss->out;
	t->in_batch = true;
	if (profile_foreach_sample(ss->p, render_sample, ss) == 0) {
		fputs("],\"weights\":[", ss->out);
		if (copy_file(t->weights, ss->out) == 0) {
			write_profile_tail(ss, t);
			ret = 0;
		}
	}
	t->in_batch = false;
	fclose(t->weights);
	t->samples = t->weights = NULL;
	return ret;
}

/* The threads at order[from, to) in memory, in one pass. */
static int write_batch(struct speedscope *ss, uint32_t from, uint32_t to, bool *first)
{
	int ret = 0;
	for (uint32_t k = from; k < to; k++) {
		struct thread_out *t = &ss->threads[ss->order[k]];
		t->samples = open_memstream(&t->samples_text, &t->samples_len);
		t->weights = open_memstream(&t->weights_text, &t->weights_len);
		t->in_batch = true;
		if (!t->samples || !t->weights)
			ret = -1;
	}
	if (ret == 0)
		ret = profile_foreach_sample(ss->p, render_sample, ss);
	for (uint32_t k = from; k < to; k++) {
		uint32_t i = ss->order[k];
		struct thread_out *t = &ss->threads[i];
		if (!t->in_batch)
			continue;
		if (t->samples && fclose(t->samples) == EOF)
			ret = -1;
		if (t->weights && fclose(t->weights) == EOF)
			ret = -1;
		if (ret == 0) {
			write_profile_head(ss, i, *first);
			*first = false;
			fwrite(t->samples_text, 1, t->samples_len, ss->out);
			fputs("],\"weights\":[", ss->out);
			fwrite(t->weights_text, 1, t->weights_len, ss->out);
			write_profile_tail(ss, t);
		}
		free(t->samples_text);
		free(t->weights_text);
		t->samples_text = t->weights_text = NULL;
		t->samples = t->weights = NULL;
		t->in_batch = false;
	}
	return ret;
}

static int write_profiles(struct speedscope *ss)
{
	bool first = true;
	uint32_t from = 0;
	uint64_t held = 0;

	fputs("\"profiles\":[", ss->out);
	for (uint32_t k = 0; k <= ss->norder; k++) {
		const struct thread_out *t = k < ss->norder ? &ss->threads[ss->order[k]] : NULL;
		bool alone = t && t->estimate > ss->budget;
		if (t && !alone && held + t->estimate <= ss->budget) {
			held += t->estimate;
			continue;
		}
		/* order[from, k) fits: write it, then start a batch at k */
		if (held && write_batch(ss, from, k, &first) < 0)
			return -1;
		held = 0;
		from = k;
		if (alone) {
			if (write_streamed_thread(ss, ss->order[k], first) < 0)
				return -1;
			first = false;
			from = k + 1;
		} else if (t) {
			held = t->estimate;
		}
	}
	fputs("]\n", ss->out);
	return 0;
}

/* The target process first, then the others by process id; in each, by
 * thread id, then in the profile's own order. */
static int thread_cmp(const void *a, const void *b, void *ctx)
{
	const struct profile *p = ctx;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct profile_thread *x = &p->threads[i], *y = &p->threads[j];
	if ((x->pid == p->pid) != (y->pid == p->pid))
		return x->pid == p->pid ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return i < j ? -1 : i > j;
}

int write_speedscope(const struct profile *p, FILE *out, const struct write_options *opt)
{
	struct speedscope ss = { .p = p, .out = out };
	int ret = -1;

	ss.budget = opt && opt->memory ? opt->memory : WRITE_MEMORY_DEFAULT;
	ss.threads = calloc(p->nthreads + 1, sizeof *ss.threads);
	ss.loc_frame = malloc((p->nlocations + 1) * sizeof *ss.loc_frame);
	if (!ss.threads || !ss.loc_frame) {
		errno = ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < p->nlocations; i++)
		ss.loc_frame[i] = PROFILE_NONE;
	ss.nframes = (uint32_t)p->nfunctions;
	if (profile_foreach_sample(p, frame_estimate, &ss) != 0)
		goto out;
	ss.truncated_frame = ss.nframes;
	ss.frame_loc = malloc(((size_t)(ss.nframes - p->nfunctions) + 1) * sizeof *ss.frame_loc);
	if (!ss.frame_loc) {
		errno = ENOMEM;
		goto out;
	}
	ss.unknown_frame = ss.nframes + 1;

	ss.order = malloc((p->nthreads + 1) * sizeof *ss.order);
	if (!ss.order) {
		errno = ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < p->nthreads; i++)
		if (ss.threads[i].nsamples)
			ss.order[ss.norder++] = i;
	qsort_r(ss.order, ss.norder, sizeof *ss.order, thread_cmp, (void *)p);

	/* the busiest thread is the one speedscope opens (the first such) */
	uint32_t active = 0;
	uint64_t most = 0;
	for (uint32_t k = 0; k < ss.norder; k++) {
		if (ss.threads[ss.order[k]].count > most) {
			most = ss.threads[ss.order[k]].count;
			active = k;
		}
	}
	fprintf(out, "{\"$schema\":\"%s\",\n\"exporter\":\"csampler %s\",\n\"name\":\"",
		SCHEMA_URL, PACKAGE_VERSION);
	escape_json(out, p->command ? p->command : "", p->command ? strlen(p->command) : 0);
	/* the user's labels, in the name speedscope shows */
	for (size_t i = 0; i < p->nlabels; i++) {
		fputs(i ? ", " : " [", out);
		escape_json(out, p->labels[i].key, strlen(p->labels[i].key));
		fputc('=', out);
		escape_json(out, p->labels[i].value, strlen(p->labels[i].value));
		if (i + 1 == p->nlabels)
			fputc(']', out);
	}
	fprintf(out, "\",\n\"activeProfileIndex\":%" PRIu32 ",\n", active);
	write_frames(&ss);
	if (write_profiles(&ss) < 0)
		goto out;
	fputs("}\n", out);
	ret = ferror(out) ? -1 : 0;
out:
	free(ss.threads);
	free(ss.order);
	free(ss.loc_frame);
	free(ss.frame_loc);
	return ret;
}
