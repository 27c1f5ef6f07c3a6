/* write_svg: a self-contained interactive flame graph, our own renderer.
 *
 * The merged, sorted folded stacks are walked once, keeping the frames of the
 * previous stack open: a frame closes when the next stack leaves it, and its
 * width is the samples that passed while it was open. Every frame is drawn
 * statically (so the image reads without scripts, e.g. in an <img>), and the
 * embedded script adds click to zoom, regex search with the matched share,
 * hover details and reset. Frames narrower than MIN_WIDTH pixels are left
 * out, as flamegraph.pl does; and where the frames left would still make a
 * file over about SVG_BYTES_MAX (a deep compiler's profile: 389k frames,
 * 109 MB, more than a browser opens), the narrowest go too, until the rest
 * fit (svg_fit_budget), and the image says how many and how narrow.
 *
 * Colors are stable: the hue range says what kind of frame it is (warm =
 * native code, the module picking the hue inside it; lighter for inlined
 * frames; green = JIT; grey = unknown; blue = thread), and a hash of the
 * function name picks saturation and lightness. Every target-controlled
 * string is XML-escaped, with control characters and invalid UTF-8 removed. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "escape.h"
#include "intern.h"
#include "symbolize.h"
#include "write_internal.h"

#define IMAGE_WIDTH 1200
#define SIDE_PAD 10
#define FRAME_HEIGHT 16
#define FONT_SIZE 12
#define CHAR_WIDTH (FONT_SIZE * 0.6)   /* monospace */
#define TOP_PAD 48
#define BOTTOM_PAD 50                  /* the legend, the details line */
#define MIN_WIDTH 0.1
#define TITLE_MAX 160                  /* characters of the title shown */
#define LABEL_MAX 64                   /* characters of a label's value shown */
#define WORD_MAX 64                    /* characters of what a count is (-i: a type) */
#define SVG_BYTES_MAX (4u << 20)       /* the frames' part of the file, estimated */
#define NODE_BYTES 240                 /* a frame's markup besides its name (twice) */

struct svg_node {
	const char *name;        /* owned (but the root's), not NUL-terminated */
	size_t len;
	uint64_t start, count;
	size_t depth;
	struct write_frame frame;
	uint64_t base;           /* a --diff profile: the base's samples under it */
};

struct open_frame {
	char *name;              /* owned */
	size_t len;
	uint64_t start;
	struct write_frame frame;
	uint64_t base_start;
};

/* Frames are laid out as the sorted stacks stream by: the frames of the
 * previous stack stay open; a frame closes when a stack leaves it, its width
 * being the samples that passed while it was open. Only frames at least
 * MIN_WIDTH wide are kept (a frame's callees are no wider than it), so the
 * nodes held are bounded by the image, not by the number of stacks. */
struct svg_layout {
	struct svg_node *n;
	size_t len, cap;
	size_t max_depth;
	struct open_frame *open;
	size_t nopen, open_cap;
	uint64_t offset;         /* samples laid out so far */
	uint64_t base_offset;    /* a --diff profile: the base's, laid out so far */
	uint64_t expected;       /* the profile's total, for the width cut */
};

static bool wide_enough(uint64_t count, uint64_t total)
{
	return total && (double)count * (IMAGE_WIDTH - 2 * SIDE_PAD) / (double)total >= MIN_WIDTH;
}

/* Close the open frames deeper than K, keeping the wide ones as nodes. */
static int close_frames(struct svg_layout *lay, size_t k)
{
	while (lay->nopen > k) {
		struct open_frame *o = &lay->open[--lay->nopen];
		uint64_t count = lay->offset - o->start;
		if (!wide_enough(count, lay->expected)) {
			free(o->name);
			continue;
		}
		if (array_grow(&lay->n, &lay->cap, lay->len + 1, sizeof *lay->n, 256) < 0) {
			free(o->name);
			return -1;
		}
		lay->n[lay->len++] = (struct svg_node){ o->name, o->len, o->start, count,
							lay->nopen + 1, o->frame,
							lay->base_offset - o->base_start };
		if (lay->nopen + 1 > lay->max_depth)
			lay->max_depth = lay->nopen + 1;
	}
	return 0;
}

static int open_frame(struct svg_layout *lay, const char *name, size_t len,
		      const struct write_frame *f)
{
	char *copy;

	if (array_grow(&lay->open, &lay->open_cap, lay->nopen + 1, sizeof *lay->open, 64) < 0)
		return -1;
	copy = malloc(len + 1);
	if (!copy)
		return -1;
	memcpy(copy, name, len);
	copy[len] = '\0';
	lay->open[lay->nopen++] = (struct open_frame){ copy, len, lay->offset, *f, lay->base_offset };
	return 0;
}

static int layout_stack(void *ctx, const struct folded_stack *st)
{
	struct svg_layout *lay = ctx;
	const char *s = st->line;
	size_t k = 0, depth = 0;
	static const struct write_frame unknown = { WRITE_FRAME_UNKNOWN, PROFILE_NONE,
						    PROFILE_NONE };

	while (*s) {
		const char *e = strchr(s, ';');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		const struct write_frame *f = depth < st->nframes ? &st->frames[depth] : &unknown;
		if (k == depth && k < lay->nopen && lay->open[k].len == len &&
		    memcmp(lay->open[k].name, s, len) == 0) {
			k++;
		} else {
			/* first difference: close what the previous stack left open */
			if (k == depth && close_frames(lay, k) < 0)
				return -1;
			if (open_frame(lay, s, len, f) < 0)
				return -1;
			k = SIZE_MAX;
		}
		depth++;
		s = e ? e + 1 : s + len;
	}
	/* a prefix of the previous stack: close its deeper frames */
	if (k != SIZE_MAX && close_frames(lay, k) < 0)
		return -1;
	lay->offset += st->count;
	lay->base_offset += st->base;
	return 0;
}

static int by_count_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? 1 : x > y ? -1 : 0;
}

/* Keep the widest frames whose markup fits SVG_BYTES_MAX (estimated by the
 * frames' average size): the frames of a count at or under the cut are
 * dropped, every frame of that count, so a frame and a callee as wide go
 * together; a callee is never wider than its caller, so no frame kept loses
 * its caller. Returns the number dropped and sets *CUT (0: none). */
static size_t svg_fit_budget(struct svg_layout *lay, uint64_t *cut)
{
	size_t bytes = 0;
	*cut = 0;
	for (size_t i = 0; i < lay->len; i++)
		bytes += NODE_BYTES + 2 * lay->n[i].len;
	if (bytes <= SVG_BYTES_MAX)
		return 0;
	uint64_t *counts = malloc(lay->len * sizeof *counts);
	if (!counts)
		return 0;   /* (out of memory: drawn whole) */
	for (size_t i = 0; i < lay->len; i++)
		counts[i] = lay->n[i].count;
	qsort(counts, lay->len, sizeof *counts, by_count_desc);
	size_t avg = (bytes + lay->len - 1) / lay->len;
	uint64_t limit = counts[SVG_BYTES_MAX / avg];   /* (< len: bytes > the budget) */
	free(counts);
	size_t w = 0, dropped = 0;
	lay->max_depth = 0;
	for (size_t i = 0; i < lay->len; i++) {
		if (lay->n[i].count <= limit) {
			free((char *)lay->n[i].name);
			dropped++;
			continue;
		}
		if (lay->n[i].depth > lay->max_depth)
			lay->max_depth = lay->n[i].depth;
		lay->n[w++] = lay->n[i];
	}
	lay->len = w;
	*cut = limit;
	return dropped;
}

static void layout_free(struct svg_layout *lay)
{
	for (size_t i = 0; i < lay->len; i++)
		free((char *)lay->n[i].name);
	for (size_t i = 0; i < lay->nopen; i++)
		free(lay->open[i].name);
	free(lay->n);
	free(lay->open);
}

/* ---- colors ------------------------------------------------------------- */

/* A name's color seed: the one text hash (intern.h), its halves mixed. */
static uint32_t hash32(const char *s, size_t n)
{
	uint64_t h = hash_bytes(s, n);
	uint32_t x = (uint32_t)(h ^ (h >> 32));
	x ^= x >> 15;
	x *= 0x2c1b3c6dU;
	x ^= x >> 12;
	return x;
}

static void hsl_to_rgb(double h, double s, double l, int rgb[3])
{
	double c = (1 - (2 * l - 1 < 0 ? 1 - 2 * l : 2 * l - 1)) * s;
	double hp = h / 60, x, r = 0, g = 0, b = 0, m;
	double frac = hp - 2 * (double)(int)(hp / 2);

	x = c * (1 - (frac - 1 < 0 ? 1 - frac : frac - 1));
	if (hp < 1)
		r = c, g = x;
	else if (hp < 2)
		r = x, g = c;
	else if (hp < 3)
		g = c, b = x;
	else if (hp < 4)
		g = x, b = c;
	else if (hp < 5)
		r = x, b = c;
	else
		r = c, b = x;
	m = l - c / 2;
	rgb[0] = (int)((r + m) * 255 + 0.5);
	rgb[1] = (int)((g + m) * 255 + 0.5);
	rgb[2] = (int)((b + m) * 255 + 0.5);
}

static const char *module_name(const struct profile *p, uint32_t mapping)
{
	const char *f, *slash;

	if (mapping == PROFILE_NONE || mapping >= p->nmappings)
		return "";
	f = p->mappings[mapping].filename ? p->mappings[mapping].filename : "";
	slash = strrchr(f, '/');
	return slash ? slash + 1 : f;
}

/* A --diff frame: red where it grew, blue where it shrank, the deeper the
 * more (its change over the largest), near white where it did not change. */
static void diff_color(const struct svg_node *n, uint64_t max_change, int rgb[3])
{
	double change = (double)n->count - (double)n->base;
	double k = max_change ? (change < 0 ? -change : change) / (double)max_change : 0;
	hsl_to_rgb(change >= 0 ? 0 : 220, change == 0 ? 0 : 0.85, 0.95 - 0.45 * k, rgb);
}

/* What a frame is, for its color and the legend. */
enum svg_class { SVG_NATIVE, SVG_INLINE, SVG_PYTHON, SVG_JIT, SVG_KERNEL, SVG_UNKNOWN,
		 SVG_TRUNCATED, SVG_THREAD, SVG_NCLASSES };
static const char *const svg_class_names[SVG_NCLASSES] = {
	"native", "inlined", "Python", "JIT", "kernel", "no symbol", "[truncated]", "thread",
};

static enum svg_class frame_class(const struct profile *p, const struct svg_node *n)
{
	switch (n->frame.kind) {
	case WRITE_FRAME_JIT: return SVG_JIT;
	case WRITE_FRAME_KERNEL: return SVG_KERNEL;
	case WRITE_FRAME_UNKNOWN: return SVG_UNKNOWN;
	case WRITE_FRAME_MARKER: return SVG_TRUNCATED;
	case WRITE_FRAME_THREAD: return SVG_THREAD;
	case WRITE_FRAME_INLINE: return SVG_INLINE;
	default:
		return strcmp(module_name(p, n->frame.mapping), SYMBOLIZE_PYTHON_MAPPING) == 0
		       ? SVG_PYTHON : SVG_NATIVE;
	}
}

/* The colors of each class (flamegraph.pl's as the baseline: warm native
 * code, green JIT, aqua for what an interpreter runs; the kernel's purple,
 * apart from the warm hues the modules take): hue, saturation and
 * lightness, varied by JITTER and JITTER2 (0..1, the function's hash) and
 * for native code by MODULE_HUE (0..44, the module's). */
static void class_hsl(enum svg_class c, double jitter, double jitter2, uint32_t module_hue,
		      double *h, double *s, double *l)
{
	switch (c) {
	case SVG_JIT: *h = 95 + 45 * jitter, *s = 0.55 + 0.2 * jitter2, *l = 0.55; break;
	case SVG_PYTHON: *h = 170 + 25 * jitter, *s = 0.45 + 0.2 * jitter2, *l = 0.58; break;
	case SVG_KERNEL: *h = 285 + 30 * jitter, *s = 0.40 + 0.2 * jitter2, *l = 0.66; break;
	case SVG_UNKNOWN: *h = 0, *s = 0, *l = 0.70 + 0.1 * jitter; break;
	case SVG_TRUNCATED: *h = 0, *s = 0, *l = 0.45; break;
	case SVG_THREAD: *h = 230 + 30 * jitter, *s = 0.45, *l = 0.72; break;
	case SVG_INLINE:
	case SVG_NATIVE:
	default:
		/* the module picks the hue within red..yellow, the function varies it */
		*h = (double)module_hue + 10 * jitter;
		*s = 0.70 + 0.25 * jitter2;
		*l = c == SVG_INLINE ? 0.72 : 0.58;
		break;
	}
}

static void frame_color(const struct profile *p, const struct svg_node *n, int rgb[3])
{
	uint32_t fh = hash32(n->name, n->len);
	const char *mod = module_name(p, n->frame.mapping);
	uint32_t mh = hash32(mod, strlen(mod));
	double jitter = (double)(fh & 0xff) / 255.0, jitter2 = (double)((fh >> 8) & 0xff) / 255.0;
	double h, s, l;

	class_hsl(frame_class(p, n), jitter, jitter2, mh % 45, &h, &s, &l);
	if (n->depth == 0)
		h = 0, s = 0, l = 0.82;
	hsl_to_rgb(h, s, l, rgb);
}

/* A legend of the classes drawn (not for a --diff, whose colors are its
 * changes), one box and name each, at Y. */
static void write_legend(const struct profile *p, FILE *out, const struct svg_layout *lay, int y)
{
	bool seen[SVG_NCLASSES] = { false };
	size_t nseen = 0;
	for (size_t i = 0; i < lay->len; i++) {
		enum svg_class c = frame_class(p, &lay->n[i]);
		nseen += !seen[c];
		seen[c] = true;
	}
	if (p->diff || nseen < 2)
		return;
	int x = SIDE_PAD;
	fputs("<g id=\"legend\">", out);
	for (int c = 0; c < SVG_NCLASSES; c++) {
		if (!seen[c])
			continue;
		double h, s, l;
		int rgb[3];
		class_hsl((enum svg_class)c, 0.5, 0.5, 20, &h, &s, &l);
		hsl_to_rgb(h, s, l, rgb);
		fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"rgb(%d,%d,%d)\"/>"
			"<text x=\"%d\" y=\"%d\">%s</text>", x, y - 9, rgb[0], rgb[1], rgb[2], x + 14, y,
			svg_class_names[c]);
		x += 14 + (int)(strlen(svg_class_names[c]) * CHAR_WIDTH) + 16;
	}
	fputs("</g>\n", out);
}

/* ---- output ------------------------------------------------------------- */

static const char svg_style[] =
	"<style type=\"text/css\">\n"
	"text { font-family: \"DejaVu Sans Mono\", Menlo, Consolas, monospace; "
	"font-size: 12px; fill: #000; }\n"
	"#title { font-size: 16px; text-anchor: middle; }\n"
	"#cut { text-anchor: middle; fill: rgb(90,90,90); }\n"
	".button { cursor: pointer; fill: #246; }\n"
	".button:hover { text-decoration: underline; }\n"
	".hide { display: none; }\n"
	"g.f { cursor: pointer; }\n"
	"g.f:hover rect { stroke: #000; stroke-width: 0.5; }\n"
	"g.f text { pointer-events: none; }\n"
	"g.parent { opacity: 0.5; }\n"
	"</style>\n";

/* The script: everything is read back from the frames' data-* attributes. */
static const char svg_script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"(function () {\n"
	"'use strict';\n"
	"var svg = document.documentElement;\n"
	"var W = +svg.getAttribute('data-width'), PAD = +svg.getAttribute('data-pad');\n"
	"var TOTAL = +svg.getAttribute('data-total'), CW = +svg.getAttribute('data-charw');\n"
	"var WORD = svg.getAttribute('data-word') || 'samples';\n"
	"var details = document.getElementById('details');\n"
	"var matched = document.getElementById('matched');\n"
	"var reset = document.getElementById('reset');\n"
	"var search = document.getElementById('search');\n"
	"var frames = Array.prototype.slice.call(document.querySelectorAll('g.f'));\n"
	"var info = frames.map(function (g) {\n"
	"  return { g: g, rect: g.querySelector('rect'), text: g.querySelector('text'),\n"
	"    name: g.getAttribute('data-name'), s: +g.getAttribute('data-s'),\n"
	"    n: +g.getAttribute('data-n'), d: +g.getAttribute('data-d'),\n"
	"    where: g.getAttribute('data-where'),\n"
	"    b: g.hasAttribute('data-b') ? +g.getAttribute('data-b') : null };\n"
	"});\n"
	"var byG = new Map(); info.forEach(function (f) { byG.set(f.g, f); });\n"
	"var term = null;\n"
	"function pct(n, of) { return (100 * n / of).toFixed(2) + '%'; }\n"
	"function fit(f, w) {\n"
	"  var chars = Math.floor((w - 6) / CW);\n"
	"  var t = chars < 3 ? '' : f.name.length <= chars ? f.name : f.name.slice(0, chars - 2) + '..';\n"
	"  f.text.textContent = t;\n"
	"}\n"
	"function place(f, x, w) {\n"
	"  f.rect.setAttribute('x', x.toFixed(2)); f.rect.setAttribute('width', w.toFixed(2));\n"
	"  f.text.setAttribute('x', (x + 3).toFixed(2)); fit(f, w);\n"
	"}\n"
	"function zoom(z) {\n"
	"  var span = W - 2 * PAD;\n"
	"  info.forEach(function (f) {\n"
	"    var inside = f.s >= z.s && f.s + f.n <= z.s + z.n;\n"
	"    var below = f.d < z.d && f.s <= z.s && f.s + f.n >= z.s + z.n;\n"
	"    f.g.classList.toggle('hide', !inside && !below);\n"
	"    f.g.classList.toggle('parent', below);\n"
	"    if (below) place(f, PAD, span);\n"
	"    else if (inside) place(f, PAD + (f.s - z.s) * span / z.n, f.n * span / z.n);\n"
	"  });\n"
	"  reset.classList.toggle('hide', z.d === 0);\n"
	"  if (term !== null) highlight(term);\n"
	"}\n"
	"function highlight(re) {\n"
	"  var spans = [];\n"
	"  info.forEach(function (f) {\n"
	"    var hit = re !== null && re.test(f.name);\n"
	"    if (f.rect.getAttribute('data-fill') === null)\n"
	"      f.rect.setAttribute('data-fill', f.rect.getAttribute('fill'));\n"
	"    f.rect.setAttribute('fill', hit ? 'rgb(230,0,230)' : f.rect.getAttribute('data-fill'));\n"
	"    if (hit) spans.push([f.s, f.s + f.n]);\n"
	"  });\n"
	"  spans.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });\n"
	"  var sum = 0, end = -1;\n"
	"  spans.forEach(function (sp) {\n"
	"    if (sp[0] >= end) { sum += sp[1] - sp[0]; end = sp[1]; }\n"
	"    else if (sp[1] > end) { sum += sp[1] - end; end = sp[1]; }\n"
	"  });\n"
	"  matched.textContent = re === null ? '' : 'Matched: ' + pct(sum, TOTAL);\n"
	"  search.textContent = re === null ? 'Search' : 'Reset Search';\n"
	"}\n"
	"function ask() {\n"
	"  if (term !== null) { term = null; highlight(null); return; }\n"
	"  var s = window.prompt('Search frames (regular expression):', '');\n"
	"  if (!s) return;\n"
	"  try { term = new RegExp(s); } catch (e) { window.alert('Bad regular expression: ' + e.message); return; }\n"
	"  highlight(term);\n"
	"}\n"
	"function frameOf(e) { return e.target.closest ? e.target.closest('g.f') : null; }\n"
	"svg.addEventListener('click', function (e) {\n"
	"  var g = frameOf(e); if (g) zoom(byG.get(g));\n"
	"});\n"
	"svg.addEventListener('mouseover', function (e) {\n"
	"  var g = frameOf(e); if (!g) return;\n"
	"  var f = byG.get(g);\n"
	"  var was = f.b === null ? '' : '; base ' + pct(f.b, TOTAL) + ', ' +\n"
	"    (f.n >= f.b ? '+' : '') + (100 * (f.n - f.b) / TOTAL).toFixed(2);\n"
	"  details.textContent = f.name + ' (' + f.n + ' ' + WORD + ', ' + pct(f.n, TOTAL) + was + ')' +\n"
	"    (f.where ? ' \\u2014 ' + f.where : '');\n"
	"});\n"
	"svg.addEventListener('mouseout', function (e) { if (frameOf(e)) details.textContent = ' '; });\n"
	"reset.addEventListener('click', function () { zoom(info.filter(function (f) { return f.d === 0; })[0]); });\n"
	"search.addEventListener('click', ask);\n"
	"window.addEventListener('keydown', function (e) {\n"
	"  if ((e.ctrlKey || e.metaKey) && e.key === 'f') { e.preventDefault(); if (term !== null) term = null; ask(); }\n"
	"  else if (e.key === 'Escape') { term = null; highlight(null); }\n"
	"});\n"
	"})();\n"
	"]]></script>\n";

static void write_title(const struct profile *p, FILE *out, const struct write_options *opt)
{
	char buf[512];

	if (opt && opt->title) {
		escape_xml(out, opt->title, strlen(opt->title), TITLE_MAX);
	} else if (p->diff) {
		fputs("csampler diff: ", out);
		escape_xml(out, p->base_name ? p->base_name : "", p->base_name ? strlen(p->base_name) : 0,
			   TITLE_MAX / 3);
		fputs(" \xe2\x86\x92 ", out);
		escape_xml(out, p->new_name ? p->new_name : "", p->new_name ? strlen(p->new_name) : 0,
			   TITLE_MAX / 3);
		fputs(" (widths: the new; red grew, blue shrank, in shares)", out);
	} else {
		fputs("csampler: ", out);
		escape_xml(out, p->command ? p->command : "", p->command ? strlen(p->command) : 0,
			   TITLE_MAX - 60);
		if (p->value_type)
			snprintf(buf, sizeof buf, " (pid %d), %" PRIu64 " ", (int)p->pid,
				 p->total_samples);
		else
			snprintf(buf, sizeof buf, " (pid %d), %.2fs, %" PRIu64 " ", (int)p->pid,
				 (double)p->duration_nanos / 1e9, p->total_samples);
		fputs(buf, out);
		const char *word = profile_count_word(p);
		escape_xml(out, word, strlen(word), WORD_MAX);
	}
	/* the user's labels: each shown whole up to its bound */
	for (size_t i = 0; i < p->nlabels; i++) {
		fputs(i ? ", " : " [", out);
		escape_xml(out, p->labels[i].key, strlen(p->labels[i].key), SIZE_MAX);
		fputc('=', out);
		escape_xml(out, p->labels[i].value, strlen(p->labels[i].value), LABEL_MAX);
		if (i + 1 == p->nlabels)
			fputc(']', out);
	}
}

/* Where frame N's function is: its source file and first line, and its
 * module ("app.c:41 in app"), into BUF; the length (0: nothing known). */
#define WHERE_MAX 512
static size_t frame_where(const struct profile *p, const struct svg_node *n, char *buf, size_t size)
{
	if (!n->depth || n->frame.function == PROFILE_NONE || n->frame.function >= p->nfunctions)
		return 0;   /* (a frame without a function is named by its module already) */
	const struct profile_function *f = &p->functions[n->frame.function];
	const char *file = f->filename ? f->filename : "";
	int64_t line = f->start_line;
	const char *mod = module_name(p, n->frame.mapping);
	int len;
	if (*file && line > 0)
		len = snprintf(buf, size, "%s:%lld%s%s", file, (long long)line, *mod ? " in " : "", mod);
	else if (*file)
		len = snprintf(buf, size, "%s%s%s", file, *mod ? " in " : "", mod);
	else
		len = snprintf(buf, size, "%s", mod);
	return len < 0 ? 0 : (size_t)len < size ? (size_t)len : size - 1;
}

static void write_node(const struct profile *p, FILE *out, const struct svg_node *n,
		       uint64_t total, int height, uint64_t max_change)
{
	double span = IMAGE_WIDTH - 2 * SIDE_PAD;
	double x = SIDE_PAD + (double)n->start * span / (double)total;
	double w = (double)n->count * span / (double)total;
	int y = height - BOTTOM_PAD - (int)(n->depth + 1) * FRAME_HEIGHT;
	size_t fit = w > 6 ? (size_t)((w - 6) / CHAR_WIDTH) : 0;
	int rgb[3];

	if (p->diff)
		diff_color(n, max_change, rgb);
	else
		frame_color(p, n, rgb);
	fprintf(out, "<g class=\"f\" data-s=\"%" PRIu64 "\" data-n=\"%" PRIu64 "\" data-d=\"%zu\" ",
		n->start, n->count, n->depth);
	if (p->diff)
		fprintf(out, "data-b=\"%" PRIu64 "\" ", n->base);
	fputs("data-name=\"", out);
	escape_xml(out, n->name, n->len, SIZE_MAX);
	char where[WHERE_MAX];
	size_t wlen = frame_where(p, n, where, sizeof where);
	if (wlen) {
		fputs("\" data-where=\"", out);
		escape_xml(out, where, wlen, SIZE_MAX);
	}
	fputs("\"><title>", out);
	escape_xml(out, n->name, n->len, SIZE_MAX);
	fprintf(out, " (%" PRIu64 " ", n->count);
	const char *word = profile_count_word(p);
	escape_xml(out, word, strlen(word), WORD_MAX);
	if (p->diff)
		fprintf(out, ", %.2f%%; base %.2f%%, %+.2f)",
			100.0 * (double)n->count / (double)total,
			100.0 * (double)n->base / (double)total,
			100.0 * ((double)n->count - (double)n->base) / (double)total);
	else
		fprintf(out, ", %.2f%%)", 100.0 * (double)n->count / (double)total);
	if (wlen) {
		fputs(" \xe2\x80\x94 ", out);
		escape_xml(out, where, wlen, SIZE_MAX);
	}
	fputs("</title>", out);
	fprintf(out, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" rx=\"2\" "
		"fill=\"rgb(%d,%d,%d)\"/>", x, y, w, FRAME_HEIGHT - 1, rgb[0], rgb[1], rgb[2]);
	fprintf(out, "<text x=\"%.2f\" y=\"%.1f\">", x + 3, y + FRAME_HEIGHT - 4.5);
	if (fit >= 3) {
		if (escape_utf8_chars(n->name, n->len) <= fit)
			escape_xml(out, n->name, n->len, SIZE_MAX);
		else
			escape_xml(out, n->name, n->len, fit - 2);
	}
	fputs("</text></g>\n", out);
}

/* The SVG's start: its size, the style, the background, the title, the
 * line saying which frames were left out (DROPPED of CUT samples or fewer),
 * the buttons and the details line. */
static void write_head(const struct profile *p, FILE *out, const struct write_options *opt,
		       int height, uint64_t total, size_t dropped, uint64_t cut)
{
	const char *word = profile_count_word(p);
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%d\" viewBox=\"0 0 %d %d\" data-width=\"%d\" data-pad=\"%d\" "
		"data-total=\"%" PRIu64 "\" data-charw=\"%.2f\" data-word=\"",
		IMAGE_WIDTH, height, IMAGE_WIDTH, height, IMAGE_WIDTH, SIDE_PAD, total,
		CHAR_WIDTH);
	escape_xml(out, word, strlen(word), WORD_MAX);
	fputs("\">\n", out);
	fputs("<!-- flame graph written by csampler: click a frame to zoom, Search (or "
	      "Ctrl-F) takes a regular expression -->\n", out);
	fputs(svg_style, out);
	fputs("<defs><linearGradient id=\"background\" x1=\"0\" y1=\"0\" x2=\"0\" y2=\"1\">"
	      "<stop stop-color=\"#eeeeee\" offset=\"5%\"/><stop stop-color=\"#eeeeb0\" "
	      "offset=\"95%\"/></linearGradient></defs>\n", out);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" "
		"fill=\"url(#background)\"/>\n", IMAGE_WIDTH, height);
	fprintf(out, "<text id=\"title\" x=\"%d\" y=\"22\">", IMAGE_WIDTH / 2);
	write_title(p, out, opt);
	fputs("</text>\n", out);
	if (dropped && total) {
		fprintf(out, "<text id=\"cut\" x=\"%d\" y=\"40\">%zu frames of %" PRIu64 " ",
			IMAGE_WIDTH / 2, dropped, cut);
		escape_xml(out, word, strlen(word), WORD_MAX);
		fprintf(out, " or fewer (%.3f%%) not drawn, to keep this file small</text>\n",
			100.0 * (double)cut / (double)total);
	}
	fprintf(out, "<text id=\"reset\" class=\"button hide\" x=\"%d\" y=\"40\">Reset Zoom</text>\n",
		SIDE_PAD);
	fprintf(out, "<text id=\"search\" class=\"button\" x=\"%d\" y=\"40\" "
		"text-anchor=\"end\">Search</text>\n", IMAGE_WIDTH - SIDE_PAD);
	fprintf(out, "<text id=\"matched\" x=\"%d\" y=\"%d\" text-anchor=\"end\"> </text>\n",
		IMAGE_WIDTH - SIDE_PAD, height - 12);
	fprintf(out, "<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n", SIDE_PAD, height - 12);
}

int write_svg(const struct profile *p, FILE *out, const struct write_options *opt)
{
	struct write_options o = opt ? *opt : (struct write_options){ 0 };
	struct svg_layout lay = { .expected = p->total_samples };
	struct svg_node root;
	uint64_t total = 0;
	int height, ret = 0;
	static const struct write_frame root_frame = { WRITE_FRAME_UNKNOWN, PROFILE_NONE,
						       PROFILE_NONE };
	o.annotate = false;      /* kinds are shown by color, not by suffix */
	if (folded_foreach(p, &o, layout_stack, &lay) != 0 || close_frames(&lay, 0) < 0) {
		int err = errno ? errno : ENOMEM;
		layout_free(&lay);
		errno = err;
		return -1;
	}
	total = lay.offset;
	uint64_t cut;
	size_t dropped = svg_fit_budget(&lay, &cut);
	root = (struct svg_node){ "all", 3, 0, total, 0, root_frame, lay.base_offset };
	uint64_t max_change = 0;
	for (size_t i = 0; p->diff && i < lay.len; i++) {
		uint64_t c = lay.n[i].count > lay.n[i].base ? lay.n[i].count - lay.n[i].base
							    : lay.n[i].base - lay.n[i].count;
		if (c > max_change)
			max_change = c;
	}
	height = TOP_PAD + (int)(lay.max_depth + 1) * FRAME_HEIGHT + BOTTOM_PAD;

	write_head(p, out, opt, height, total, dropped, cut);
	fputs("<g id=\"frames\">\n", out);
	if (total) {
		write_node(p, out, &root, total, height, max_change);
		for (size_t i = 0; i < lay.len; i++)
			if (wide_enough(lay.n[i].count, total))
				write_node(p, out, &lay.n[i], total, height, max_change);
	} else {
		fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">no samples</text>\n",
			IMAGE_WIDTH / 2, TOP_PAD + 12);
	}
	fputs("</g>\n", out);
	if (total)
		write_legend(p, out, &lay, height - 28);
	fputs(svg_script, out);
	fputs("</svg>\n", out);
	layout_free(&lay);
	if (ferror(out)) {
		errno = errno ? errno : EIO;
		ret = -1;
	}
	return ret;
}
