/* top: see top.h.
 *
 * The normal sampler runs in the session's loop, as a profiling run does
 * (session_run: the tick clock, the signals, SIGWINCH for a resize, stdin
 * polled for keys), counting into a small stackmap. Every
 * second that stackmap is swapped for a fresh one and folded into per-function
 * counts (self: the innermost frame of the leaf address; total: every distinct
 * function of the stack, inlined ones included), which go into a ring of the
 * last TOP_WINDOW_SECONDS seconds. The screen shows the ring's sum.
 *
 * Symbolization is cached per (pid, address) across refreshes: an address is
 * looked up once, its frames kept as pairs of ids of interned, escaped names
 * (the symbolizer may be recreated when a library is loaded, so no string of
 * it is kept): the function's name, and its source line ("file.c:12 in f",
 * marked with a leading LINE_MARK byte, which no escaped name holds). Both
 * kinds are counted; the screen shows one ('l' switches).
 *
 * Keys: q quits, s/t sort by self/total, l switches functions and source
 * lines, T shows a row per thread (marked THREAD_MARK, counted as the
 * lines are), n full or shortened names (names.h), p freezes the screen
 * while sampling goes on, r empties the window, ? lists the keys. */
#include "config.h"

#include <curses.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "address.h"
#include "addrmap.h"
#include "array.h"
#include "clock.h"
#include "dump.h"
#include "error.h"
#include "escape.h"
#include "names.h"
#include "procmaps.h"
#include "procfs.h"
#include "backend.h"
#include "session.h"
#include "stackmap.h"
#include "symcache.h"
#include "target.h"
#include "top.h"
#include "tracer.h"

#include "write.h"

#define TOP_WINDOW_SECONDS 10
#define TOP_WINDOW_STACKS 4096         /* per-second stackmap; more spills, exactly */
#define TOP_NAME_MAX 1024              /* escaped function names are cut here */
#define LINE_MARK '\001'                /* first byte of a source line's name */
#define THREAD_MARK '\002'              /* first byte of a thread's row ('T') */

struct fn_count {
	uint32_t fn;
	uint64_t self, total;
};

/* One second of the ring. */
struct second {
	struct fn_count *counts;
	size_t n, cap;
	uint64_t samples;
	uint64_t duration_ns;
};

/* Per-function accumulators, indexed by function id. */
struct accum {
	uint64_t *self, *total, *stamp;
	size_t cap;
	uint64_t stamp_now;                /* one per stack: count a function once */
	uint32_t *touched;                 /* ids with total > 0 */
	size_t ntouched, touched_cap;
};

enum loop_end { LOOP_QUIT, LOOP_EXITED, LOOP_DURATION, LOOP_ERROR };

struct top {
	const struct options *opt;
	struct session s;                  /* s.map: the second being sampled */
	SCREEN *screen;
	pid_t pid;
	char command[512];                 /* escaped */

	struct intern fns;             /* function names (escaped); ids are indexes */
	struct symcache *symbols;          /* made at the first second */
	struct addrmap addresses;          /* (pid, address) -> its ids in ids[] */
	uint32_t *ids;                     /* per address: n, then n (function, line) pairs */
	size_t nids, ids_cap;
	uint32_t blocked_fn;               /* "[blocked]", or UINT32_MAX until needed */
	uint32_t no_stack_fn;              /* "[no stack]", or UINT32_MAX until needed */

	struct second ring[TOP_WINDOW_SECONDS];
	size_t ring_next, ring_filled;
	uint64_t second_start_ns;
	struct accum acc;

	struct fn_count *rows;             /* the window, sorted hottest first */
	size_t nrows, rows_cap;
	uint64_t window_samples, window_ns;
	struct stackmap_scaler scale;      /* the second being counted: each thread's CPU */
	const char *status;                /* a note for the header, or NULL */
	enum loop_end end;                 /* how the loop ended (tracer thread) */
	uint64_t elapsed_ns;
	bool sort_total;                   /* 't': by total; 's': by self */
	bool by_line;                      /* 'l': source lines, not functions */
	bool full_names;                   /* 'n': names as demangled, not shortened */
	bool paused;                       /* 'p': the screen is frozen */
	bool show_keys;                    /* '?': the keys listed instead of the rows */
	bool by_thread;                    /* 'T': a row per thread, not per function */
	size_t thread_rows;                /* thread rows interned (thread_intern) */
};

/* ---- function names -------------------------------------------------------------- */

static int accum_reserve(struct accum *a, size_t n)
{
	void *const arrays[] = { &a->self, &a->total, &a->stamp };
	const size_t sizes[] = { sizeof *a->self, sizeof *a->total, sizeof *a->stamp };
	return array_grow_each(arrays, sizes, 3, &a->cap, n, 256);
}

/* The id of the escaped name NAME; UINT32_MAX out of memory. */
static uint32_t name_id(struct top *tp, const char *name)
{
	/* the counts have a slot for a new id before the id exists */
	if (accum_reserve(&tp->acc, tp->fns.n + 1) < 0)
		return UINT32_MAX;
	int64_t id = intern_index(&tp->fns, name, strlen(name));
	return id < 0 ? UINT32_MAX : (uint32_t)id;
}

/* The id of NAME (raw, target-controlled), interning its escaped form. */
static uint32_t fn_intern(struct top *tp, const char *raw)
{
	char name[TOP_NAME_MAX];
	escape_terminal(raw, name, sizeof name);
	return name_id(tp, name);
}

/* The id of frame F's source line: "file.c:12 in FUNCTION" (the file's
 * base name), or the function's name alone when the line is unknown. */
static uint32_t line_intern(struct top *tp, const struct symbol_frame *f, const char *fn)
{
	char raw[TOP_NAME_MAX];
	const char *file = f->file ? strrchr(f->file, '/') : NULL;
	file = file ? file + 1 : f->file;
	if (file && *file && f->line > 0)
		snprintf(raw, sizeof raw, "%c%s:%d in %s", LINE_MARK, file, f->line, fn);
	else
		snprintf(raw, sizeof raw, "%c%s", LINE_MARK, fn);
	char name[TOP_NAME_MAX];
	/* escape all but the mark */
	name[0] = LINE_MARK;
	escape_terminal(raw + 1, name + 1, sizeof name - 1);
	return name_id(tp, name);
}

/* The id of thread TI's row: "NAME-TID" (escaped), marked THREAD_MARK.
 * Names stay interned for the run: after TOP_THREAD_ROWS threads, the
 * others of a name share "NAME-*", and after twice as many distinct rows,
 * one "[other threads]" (a service that makes a thread per request would
 * otherwise grow the table for good). */
#define TOP_THREAD_ROWS 256
static uint32_t thread_intern(struct top *tp, const struct recorder_thread *ti)
{
	char raw[TOP_NAME_MAX], name[TOP_NAME_MAX];
	if (tp->thread_rows >= 2 * TOP_THREAD_ROWS)
		snprintf(raw, sizeof raw, "[other threads]");
	else if (tp->thread_rows >= TOP_THREAD_ROWS)
		snprintf(raw, sizeof raw, "%s-*", ti ? ti->name : "?");
	else
		snprintf(raw, sizeof raw, "%s-%d", ti ? ti->name : "?", ti ? (int)ti->tid : 0);
	name[0] = THREAD_MARK;
	escape_terminal(raw, name + 1, sizeof name - 1);
	size_t before = tp->fns.n;
	uint32_t id = name_id(tp, name);
	tp->thread_rows += tp->fns.n > before;
	return id;
}

/* ---- symbolization, cached per address ----------------------------------------------- */

/* Look the recorder's processes up from now on, those seen since the last
 * second too (symcache makes a symbolizer again where a library was
 * loaded). -1 out of memory. */
static int symbols_follow(struct top *tp)
{
	if (!tp->symbols) {
		struct symbolize_options so = { .no_inline = tp->opt->no_inline,
						.addresses_only = tp->opt->addresses };
		tp->symbols = symcache_new(&so, tp->opt->verbose);
		if (!tp->symbols)
			return -1;
	}
	for (size_t i = symcache_nprocesses(tp->symbols); i < recorder_nprocesses(tp->s.recorder); i++)
		if (symcache_add_process(tp->symbols, recorder_process_maps(tp->s.recorder, i)) < 0)
			return -1;
	symcache_share_kernel(tp->symbols, recorder_kernel_symbols(tp->s.recorder));
	return 0;
}

/* The ids of ADDR's frames (innermost first): *n pairs of a function id and
 * a source line id. The pointer is valid until the next call. NULL on
 * allocation failure. */
static const uint32_t *lookup_address(struct top *tp, pid_t pid, uint64_t addr, uint32_t *n)
{
	uint32_t *slot = addrmap_slot(&tp->addresses, pid, addr);
	if (!slot)
		return NULL;
	if (*slot == ADDRMAP_EMPTY) {
		struct symcache_result r;
		if (symcache_lookup(tp->symbols, pid, addr, &r) < 0 || tp->nids + 1 + 2 * r.n >= UINT32_MAX ||
		    array_grow(&tp->ids, &tp->ids_cap, tp->nids + 1 + 2 * r.n, sizeof *tp->ids, 4096) < 0)
			return NULL;
		uint32_t first = (uint32_t)tp->nids;
		tp->ids[first] = (uint32_t)r.n;
		for (size_t i = 0; i < r.n; i++) {
			const struct symbol_frame *f = &r.frames[i];
			const char *fn = f->function ? f->function : "??";
			uint32_t id = fn_intern(tp, fn);
			uint32_t line = line_intern(tp, f, fn);
			if (id == UINT32_MAX || line == UINT32_MAX)
				return NULL;
			tp->ids[first + 1 + 2 * i] = id;
			tp->ids[first + 2 + 2 * i] = line;
		}
		tp->nids += 1 + 2 * r.n;
		*slot = first;
	}
	*n = tp->ids[*slot];
	return &tp->ids[*slot + 1];
}

/* ---- counting ------------------------------------------------------------------------ */

static int accum_add(struct accum *a, uint32_t fn, uint64_t self, uint64_t total)
{
	if (a->total[fn] == 0) {
		if (array_grow(&a->touched, &a->touched_cap, a->ntouched + 1, sizeof *a->touched, 16) < 0)
			return -1;
		a->touched[a->ntouched++] = fn;
	}
	a->self[fn] += self;
	a->total[fn] += total;
	return 0;
}

/* Move the accumulated counts to OUT (grown as needed) and clear them. */
static int accum_drain(struct accum *a, struct fn_count **out, size_t *n, size_t *cap)
{
	int ret = array_grow(out, cap, a->ntouched, sizeof **out, 16);
	*n = 0;
	for (size_t i = 0; i < a->ntouched; i++) {
		uint32_t fn = a->touched[i];
		if (ret == 0)
			(*out)[(*n)++] = (struct fn_count){ fn, a->self[fn], a->total[fn] };
		a->self[fn] = a->total[fn] = 0;
	}
	a->ntouched = 0;
	return ret;
}

static int count_stack(void *ctx, const struct stackmap_entry *e)
{
	struct top *tp = ctx;
	struct accum *a = &tp->acc;
	const struct recorder_thread *ti = recorder_thread(tp->s.recorder, e->thread_key);
	pid_t pid = ti ? ti->pid : tp->pid;

	uint64_t count = stackmap_scaler_count(&tp->scale, e->thread_key, e->flags, e->count);
	if (!count)
		return 0;
	tp->ring[tp->ring_next].samples += count;
	a->stamp_now++;
	/* (its thread's row: all of the stack's samples are the thread's own) */
	uint32_t th = thread_intern(tp, ti);
	if (th == UINT32_MAX)
		return 1;
	a->stamp[th] = a->stamp_now;
	if (accum_add(a, th, count, count) < 0)
		return 1;
	if (e->depth == 0) {
		/* --idle: a blocked thread we could not interrupt; else a stack
		 * the unwinder could not start. */
		bool blocked = (e->flags & STACK_NOT_CAPTURED) != 0;
		uint32_t *fn = blocked ? &tp->blocked_fn : &tp->no_stack_fn;
		if (*fn == UINT32_MAX)
			*fn = fn_intern(tp, blocked ? "[blocked]" : "[no stack]");
		if (*fn == UINT32_MAX)
			return 1;
		return accum_add(a, *fn, count, count) < 0;
	}
	for (uint32_t i = 0; i < e->depth; i++) {
		uint32_t n;
		const uint32_t *ids = lookup_address(tp, pid, e->addrs[i], &n);
		if (!ids)
			return 1;
		for (uint32_t k = 0; k < 2 * n; k++) {
			uint32_t fn = ids[k];
			/* the innermost frame of the leaf: its function and its line */
			uint64_t self = (i == 0 && k < 2) ? count : 0;
			if (a->stamp[fn] == a->stamp_now) {
				a->self[fn] += self;
				continue;
			}
			a->stamp[fn] = a->stamp_now;
			if (accum_add(a, fn, self, count) < 0)
				return 1;
		}
	}
	return 0;
}

static int compare_rows(const void *x, const void *y, void *ctx)
{
	const struct fn_count *a = x, *b = y;
	const struct top *tp = ctx;
	uint64_t a1 = tp->sort_total ? a->total : a->self, b1 = tp->sort_total ? b->total : b->self;
	uint64_t a2 = tp->sort_total ? a->self : a->total, b2 = tp->sort_total ? b->self : b->total;
	if (a1 != b1)
		return a1 < b1 ? 1 : -1;
	if (a2 != b2)
		return a2 < b2 ? 1 : -1;
	return strcmp(tp->fns.strs[a->fn], tp->fns.strs[b->fn]);
}

static bool is_line_row(const struct top *tp, const struct fn_count *r)
{
	return tp->fns.strs[r->fn][0] == LINE_MARK;
}

/* Whether row R is one of the view's: functions, source lines or threads. */
static bool in_view(const struct top *tp, const struct fn_count *r)
{
	char mark = tp->fns.strs[r->fn][0];
	if (tp->by_thread)
		return mark == THREAD_MARK;
	return mark != THREAD_MARK && is_line_row(tp, r) == tp->by_line;
}

/* Sum the ring into the sorted rows. */
static int window_rows(struct top *tp)
{
	tp->window_samples = tp->window_ns = 0;
	for (size_t s = 0; s < tp->ring_filled; s++) {
		const struct second *sec = &tp->ring[s];
		tp->window_samples += sec->samples;
		tp->window_ns += sec->duration_ns;
		for (size_t i = 0; i < sec->n; i++)
			if (accum_add(&tp->acc, sec->counts[i].fn, sec->counts[i].self, sec->counts[i].total) < 0)
				return -1;
	}
	if (accum_drain(&tp->acc, &tp->rows, &tp->nrows, &tp->rows_cap) < 0)
		return -1;
	qsort_r(tp->rows, tp->nrows, sizeof *tp->rows, compare_rows, tp);
	return 0;
}

/* 'r': start the window afresh, dropping the second being sampled too. */
static void reset_window(struct top *tp, uint64_t now)
{
	size_t stacks = tp->opt->max_stacks < TOP_WINDOW_STACKS ? tp->opt->max_stacks : TOP_WINDOW_STACKS;
	struct stackmap *fresh = stackmap_new(stacks, tp->opt->max_depth);
	if (fresh) {
		struct stackmap *old = tp->s.map;
		recorder_set_stackmap(tp->s.recorder, fresh);
		tp->s.map = fresh;
		stackmap_free(old);
	}
	for (size_t i = 0; i < TOP_WINDOW_SECONDS; i++)
		tp->ring[i].n = tp->ring[i].samples = tp->ring[i].duration_ns = 0;
	tp->ring_next = tp->ring_filled = 0;
	tp->nrows = 0;
	tp->window_samples = tp->window_ns = 0;
	tp->second_start_ns = now;
}

/* The second ends: sample into a fresh map, fold the old one into the ring. */
static int close_second(struct top *tp, uint64_t now)
{
	size_t stacks = tp->opt->max_stacks < TOP_WINDOW_STACKS ? tp->opt->max_stacks : TOP_WINDOW_STACKS;
	struct stackmap *fresh = stackmap_new(stacks, tp->opt->max_depth);
	if (!fresh)
		return -1;
	struct stackmap *old = tp->s.map;
	recorder_set_stackmap(tp->s.recorder, fresh);
	tp->s.map = fresh;

	struct second *sec = &tp->ring[tp->ring_next];
	sec->samples = 0;
	sec->n = 0;
	sec->duration_ns = now - tp->second_start_ns;
	tp->second_start_ns = now;
	int r = symbols_follow(tp) < 0 ||
		stackmap_scaler_init(&tp->scale, old, tp->opt->idle ? 0 : clock_period_ns(tp->opt->rate)) < 0
		? -1 : stackmap_foreach(old, count_stack, tp);
	stackmap_scaler_fini(&tp->scale);
	stackmap_free(old);
	recorder_collect_threads(tp->s.recorder);
	if (accum_drain(&tp->acc, &sec->counts, &sec->n, &sec->cap) < 0 || r != 0)
		return -1;
	tp->ring_next = (tp->ring_next + 1) % TOP_WINDOW_SECONDS;
	if (tp->ring_filled < TOP_WINDOW_SECONDS)
		tp->ring_filled++;
	/* paused: the rows on the screen stay as they are */
	return tp->paused ? 0 : window_rows(tp);
}

/* ---- the screen ---------------------------------------------------------------------- */

static void read_command(struct top *tp)
{
	char buf[4096];
	procfs_read_cmdline(tp->pid, buf, sizeof buf);
	escape_terminal(buf, tp->command, sizeof tp->command);
}

/* TEXT on line Y; cut to the screen's width with "..." at the end, so a cut
 * name never looks whole. */
static void draw_line(int y, const char *text)
{
	if (y >= LINES)
		return;
	if (COLS > 3 && strlen(text) > (size_t)COLS) {
		mvaddnstr(y, 0, text, COLS - 3);
		addstr("...");
		return;
	}
	mvaddnstr(y, 0, text, COLS);
}

/* '?': what each key does, in place of the rows. */
static void draw_keys(int y)
{
	static const char *const keys[] = {
		"  q        quit (csampler detaches; the target runs on)",
		"  s / t    sort by self or by total time",
		"  l        functions or source lines (file:line in function)",
		"  T        a row per thread (NAME-TID), or the functions again",
		"  n        short or full names (C++ and Rust arguments, hashes)",
		"  p, space pause or resume (the rows stay as they are)",
		"  r        reset: empty the window, count afresh",
		"  ?        these keys, or the rows again",
	};
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
		draw_line(y + (int)i, keys[i]);
}

static void draw(struct top *tp)
{
	char line[TOP_NAME_MAX + 64], name[TOP_NAME_MAX];
	const struct target_thread *tl;
	size_t nthreads = target_done(tp->s.target) ? 0 : target_threads(tp->s.target, &tl);
	struct recorder_stats st;
	recorder_get_stats(tp->s.recorder, &st);
	double window_s = (double)tp->window_ns / 1e9;
	double period_s = (double)clock_period_ns(tp->opt->rate) / 1e9;

	erase();
	snprintf(line, sizeof line, "csampler --top  pid %d  %s", (int)tp->pid, tp->command);
	draw_line(0, line);
	/* (samples a second over the rate: the CPUs the threads kept busy) */
	double per_s = window_s > 0 ? (double)tp->window_samples / window_s : 0.0;
	snprintf(line, sizeof line, "threads %zu  %.2f CPUs busy (%.1f samples/s at %u Hz)  window %.0fs  "
		 "samples %llu  pause p50 %.0f us", nthreads, per_s / (double)tp->opt->rate, per_s,
		 tp->opt->rate, window_s, (unsigned long long)tp->window_samples,
		 (double)st.pause_p50_ns / 1e3);
	draw_line(1, line);
	snprintf(line, sizeof line, "%s%s  sorted by %s  q quit  s/t sort  l %s  n %s names  p %s  ? keys",
		 tp->paused ? "PAUSED  " : "", tp->status ? tp->status : "",
		 tp->sort_total ? "total" : "self", tp->by_line ? "functions" : "lines",
		 tp->full_names ? "short" : "full", tp->paused ? "resume" : "pause");
	draw_line(2, line + (line[0] == ' ' ? 2 : 0));
	if (LINES > 3) {
		attron(A_REVERSE);
		mvhline(3, 0, ' ', COLS);
		draw_line(3, tp->by_thread ? "  SELF%  TOTAL%   SELF s  TOTAL s  THREAD"
			     : tp->by_line ? "  SELF%  TOTAL%   SELF s  TOTAL s  SOURCE LINE"
					   : "  SELF%  TOTAL%   SELF s  TOTAL s  FUNCTION");
		attroff(A_REVERSE);
	}
	if (tp->show_keys) {
		draw_keys(4);
	} else if (tp->ring_filled == 0 || tp->window_samples == 0) {
		draw_line(4, tp->ring_filled == 0 ? "  (collecting samples)" : "  (no samples: the threads are idle)");
	} else {
		int y = 4;
		for (size_t i = 0; i < tp->nrows && y < LINES; i++) {
			const struct fn_count *r = &tp->rows[i];
			if (!in_view(tp, r))
				continue;
			const char *n = tp->fns.strs[r->fn] + (tp->by_line || tp->by_thread ? 1 : 0);
			if (!tp->full_names && !tp->by_thread) {
				names_shorten(n, name, sizeof name);
				n = name;
			}
			snprintf(line, sizeof line, "%7.1f %7.1f %8.2f %8.2f  %s",
				 100.0 * (double)r->self / (double)tp->window_samples,
				 100.0 * (double)r->total / (double)tp->window_samples,
				 (double)r->self * period_s, (double)r->total * period_s, n);
			draw_line(y++, line);
		}
	}
	refresh();
}

static void resize_screen(void)
{
	struct winsize ws;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0)
		resizeterm(ws.ws_row, ws.ws_col);
}

/* ---- the loop ------------------------------------------------------------------------ */

static void on_target_event(void *ctx, const struct target_event *ev)
{
	struct top *tp = ctx;
	if (ev->kind == TARGET_EV_EXEC && ev->pid == tp->pid)
		read_command(tp);
}

/* die(): the session detached first; give the terminal back. */
static void end_screen_on_die(void *arg)
{
	struct top *tp = arg;
	if (tp->screen)
		endwin();
}

/* A key that changes the view; false for any other. */
static bool handle_key(struct top *tp, int ch, uint64_t now)
{
	switch (ch) {
	case 's':
	case 't':
		tp->sort_total = ch == 't';
		qsort_r(tp->rows, tp->nrows, sizeof *tp->rows, compare_rows, tp);
		return true;
	case 'l':
		tp->by_line = !tp->by_line;
		tp->by_thread = false;
		return true;
	case 'T':
		tp->by_thread = !tp->by_thread;
		return true;
	case 'n':
		tp->full_names = !tp->full_names;
		return true;
	case 'p':
	case ' ':
		tp->paused = !tp->paused;
		return tp->paused || window_rows(tp) == 0;
	case 'r':
		reset_window(tp, now);
		return true;
	case '?':
		tp->show_keys = !tp->show_keys;
		return true;
	case KEY_RESIZE:
		return true;
	default:
		return false;
	}
}

static bool on_resize(void *ctx, int signo)
{
	(void)signo;
	resize_screen();
	draw(ctx);
	return false;
}

/* The terminal: keys, or hung up. true ends the loop. */
static bool on_keys(void *ctx, short revents)
{
	struct top *tp = ctx;
	if (revents & (POLLHUP | POLLERR | POLLNVAL))
		return true;  /* the terminal went away */
	int ch;
	bool quit = false;
	while ((ch = getch()) != ERR) {
		if (ch == 'q' || ch == 'Q')
			quit = true;
		else if (ch == 12)  /* Ctrl-L */
			clearok(curscr, TRUE);
		else if (!handle_key(tp, ch, clock_monotonic_ns()))
			continue;
		draw(tp);
	}
	return quit;
}

static int on_second(void *ctx, uint64_t now)
{
	struct top *tp = ctx;
	if (close_second(tp, now) < 0)
		return -1;
	if (!tp->paused)
		draw(tp);
	return 0;
}

static enum loop_end top_loop(struct top *tp, uint64_t start_ns)
{
	struct session_hooks h = {
		.ctx = tp, .on_extra_signal = on_resize,
		.extra_fd = isatty(STDIN_FILENO) ? STDIN_FILENO : -1,
		.on_extra_fd = isatty(STDIN_FILENO) ? on_keys : NULL,
		.on_second = on_second,
		.quiet_clock = true,  /* a warning would land on the curses screen */
	};
	draw(tp);
	switch (session_run(&tp->s, start_ns, &h)) {
	case SESSION_END_GONE:
		return LOOP_EXITED;
	case SESSION_END_DURATION:
		return LOOP_DURATION;
	case SESSION_END_STOPPED:
		return LOOP_QUIT;
	case SESSION_END_ERROR:
	default:
		return LOOP_ERROR;
	}
}

static void top_free(struct top *tp)
{
	symcache_free(tp->symbols);
	addrmap_free(&tp->addresses);
	free(tp->ids);
	intern_free(&tp->fns);
	for (size_t i = 0; i < TOP_WINDOW_SECONDS; i++)
		free(tp->ring[i].counts);
	free(tp->acc.self);
	free(tp->acc.total);
	free(tp->acc.stamp);
	free(tp->acc.touched);
	free(tp->rows);
	session_end(&tp->s);
}

/* The tracer thread's part: attach or launch, drive the screen and the
 * samples until the loop ends, let go. Returns 0 (tp->end says how the loop
 * ended) or the status to exit with. */
static int top_traced(void *arg)
{
	struct top *tp = arg;
	const struct options *o = tp->opt;
	size_t stacks = o->max_stacks < TOP_WINDOW_STACKS ? o->max_stacks : TOP_WINDOW_STACKS;
	int status = session_attach(&tp->s, stacks, on_target_event, end_screen_on_die, tp);
	if (status != 0)
		return status;
	tp->pid = target_main_pid(tp->s.target);

	const char *term = getenv("TERM");
	tp->screen = newterm(NULL, stdout, stdin);
	if (!tp->screen) {
		session_detach(&tp->s);
		warn("--top cannot drive the terminal type '%s'", term ? term : "(TERM unset)");
		return CS_EXIT_USAGE;
	}
	cbreak();
	noecho();
	nodelay(stdscr, TRUE);
	keypad(stdscr, TRUE);
	curs_set(0);

	if (target_start(tp->s.target) < 0) {
		session_detach(&tp->s);
		endwin();
		return CS_EXIT_FAILURE;
	}
	read_command(tp);
	uint64_t start = clock_monotonic_ns();
	tp->second_start_ns = start;
	tp->end = top_loop(tp, start);
	tp->elapsed_ns = clock_monotonic_ns() - start;
	session_detach(&tp->s);
	endwin();
	return 0;
}

int top_run(const struct options *o)
{
	if (!isatty(STDOUT_FILENO)) {
		warn("--top needs a terminal on stdout");
		return CS_EXIT_USAGE;
	}
	struct top tp = { .opt = o, .blocked_fn = UINT32_MAX, .no_stack_fn = UINT32_MAX };
	struct session_config sc;
	options_session_config(o, &sc);
	int status = session_open(&tp.s, &sc, SIGWINCH);
	if (status != 0)
		return status;
	status = tracer_run(top_traced, &tp);
	if (status < 0) {
		warn_errno("cannot start the tracer thread");
		status = CS_EXIT_SYSTEM;
	}
	if (status != 0)
		goto out;

	struct recorder_stats st;
	recorder_get_stats(tp.s.recorder, &st);
	switch (tp.end) {
	case LOOP_ERROR:
		warn("--top stopped: sampling failed (out of memory or a poll error)");
		status = CS_EXIT_SYSTEM;
		break;
	case LOOP_EXITED:
		if (!o->quiet)
			warn("pid %d exited", (int)tp.pid);
		if (o->command && target_exit_status(tp.s.target) >= 0)
			status = target_exit_status(tp.s.target);
		break;
	case LOOP_QUIT:
	case LOOP_DURATION:
		break;
	}
	if (!o->quiet)
		warn("%llu samples in %.1f s, pause p50 %.1f us p99 %.1f us", (unsigned long long)st.samples,
		     (double)tp.elapsed_ns / 1e9, (double)st.pause_p50_ns / 1e3,
		     (double)st.pause_p99_ns / 1e3);
out:
	if (tp.screen)
		delscreen(tp.screen);
	top_free(&tp);
	return status;
}
