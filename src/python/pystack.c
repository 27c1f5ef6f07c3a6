/* pystack: see pystack.h. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "address.h"
#include "intern.h"
#include "procfs.h"
#include "tidmap.h"
#include "pydebug.h"
#include "pyframes.h"
#include "pylinetable.h"
#include "pystack.h"

#define THREADS_MAX 65536u              /* threads whose thread state is kept */
#define CHUNK_READ_MAX (64u * 1024)     /* bytes of the frame stack chunk copied */
#define TSTATE_READ_MAX 1024u
#define CODE_SPAN_MAX 256u
#define CODES_FIRST 1024u               /* slots of code objects named, at first */
#define CODES_MAX 65536u                /* at most (then all are forgotten) */
#define MEMO 4u                         /* (unit, id) pairs kept per code object */
#define TABLE_BYTES_MAX (32u << 20)     /* line tables kept, at most (then forgotten) */
#define IOV_BATCH 64u

struct code_entry {
	uint64_t code;                  /* 0: empty slot */
	struct py_code_header header;   /* as read when named */
	const char *qualname, *filename; /* pynames' */
	uint8_t *table;                 /* its line table, or NULL */
	size_t table_len;
	struct { uint32_t unit, id; } memo[MEMO];
	unsigned memo_next;
};

struct thread_slot {
	pid_t tid;                      /* 0: not looked for yet */
	uint64_t tstate;                /* 0: none found when the interpreter's */
	uint64_t made;                  /* thread states made were this */
	unsigned backoff, skips;        /* none found: stops to pass before the next look */
};

/* The most stops a thread with no thread state found passes before it is
 * looked for again, the interpreter having made none since. */
#define LOOK_BACKOFF_MAX 64u

/* A copy of the target's memory a read may be served from. */
struct region {
	uint64_t start;
	const uint8_t *bytes;
	size_t len;
};

struct pystack {
	pid_t pid;                      /* its memory read (0: through READ) */
	pyframes_read_fn read;          /* (pystack_new_reader's) */
	void *read_ctx;
	struct py_layout layout;        /* as checked at attach */
	const struct py_layout *l;      /* &layout */
	enum pystack_layout_source source;
	size_t tstate_span, code_span;  /* the layout's, read at each stop */
	struct pystack_symbols syms;
	struct pynames *names;
	uint32_t cut_id;                /* PYSTACK_CUT_NAME's frame */
	struct tidrows threads;         /* struct thread_slot, by tid */
	struct code_entry *codes;       /* open addressing by address */
	size_t ncodes, code_slots;      /* (code_slots a power of two) */
	size_t table_bytes;             /* of the line tables kept */
	uint8_t tstate[TSTATE_READ_MAX];
	uint8_t *chunk;                 /* CHUNK_READ_MAX */
	uint8_t *headers;               /* PYSTACK_MAX_FRAMES * CODE_SPAN_MAX */
	struct py_frame frames[PYSTACK_MAX_FRAMES];
	struct region regions[3];
	size_t nregions;
};

/* ---- the symbols ------------------------------------------------------------ */

static void symbols_from(Elf *elf, Elf_Scn *scn, uint64_t bias, struct pystack_symbols *out,
			 struct pystack_symbols *other)
{
	GElf_Shdr sh;
	Elf_Data *data = scn && gelf_getshdr(scn, &sh) ? elf_getdata(scn, NULL) : NULL;
	if (!data || sh.sh_entsize == 0)
		return;
	size_t n = sh.sh_size / sh.sh_entsize;
	for (size_t i = 0; i < n && i < (1u << 22); i++) {
		GElf_Sym s;
		if (!gelf_getsym(data, (int)i, &s) || s.st_value == 0 || s.st_shndx == SHN_UNDEF)
			continue;
		const char *name = elf_strptr(elf, sh.sh_link, s.st_name);
		if (!name || (name[0] != '_' && name[0] != 'P' && name[0] != 'i'))
			continue;
		uint64_t at = bias + s.st_value;
		if (strcmp(name, "_PyRuntime") == 0)
			out->runtime = at;
		else if (strcmp(name, "interp_head") == 0 && !out->runtime)
			out->runtime = at;
		else if (strcmp(name, "PyEval_EvalFrameEx") == 0 && s.st_size > 0 && !other->eval_start) {
			other->eval_start = at;   /* (2.7's loop; a wrapper from 3.6) */
			other->eval_end = at + s.st_size;
		} else if (strcmp(name, "Py_Version") == 0)
			out->version = at;
		else if (strcmp(name, "PyCode_Type") == 0)
			out->code_type = at;
		else if (strcmp(name, "_PyEval_EvalFrameDefault") == 0 && s.st_size > 0) {
			out->eval_start = at;
			out->eval_end = at + s.st_size;
		}
	}
}

bool pystack_symbols(Elf *elf, Elf_Scn *sym, Elf_Scn *dyn, uint64_t bias,
		     struct pystack_symbols *out)
{
	struct pystack_symbols ex = { 0 };
	*out = (struct pystack_symbols){ 0 };
	symbols_from(elf, dyn, bias, out, &ex);
	if (sym && (!out->runtime || !out->eval_start || !out->code_type))
		symbols_from(elf, sym, bias, out, &ex);
	if (!out->eval_start) {
		out->eval_start = ex.eval_start;
		out->eval_end = ex.eval_end;
	}
	return out->runtime && out->eval_start && out->code_type;
}

bool pystack_name_version(const char *path, unsigned *major, unsigned *minor)
{
	const char *base = path ? strrchr(path, '/') : NULL;
	base = base ? base + 1 : path;
	*major = *minor = 0;
	if (!base)
		return false;
	if (strncmp(base, "lib", 3) == 0)
		base += 3;
	if (strncmp(base, "python", 6) != 0 || (base[6] != '2' && base[6] != '3') || base[7] != '.')
		return false;
	unsigned m = 0;
	const char *p = base + 8;
	for (int i = 0; i < 3 && *p >= '0' && *p <= '9'; i++, p++)
		m = m * 10 + (unsigned)(*p - '0');
	/* (then the end, "m" (3.6, 3.7's ABI), "d", "t" or ".so") */
	if (p == base + 8 || (*p != '\0' && *p != '.' && *p != 'm' && *p != 'd' && *p != 't'))
		return false;
	*major = (unsigned)(base[6] - '0');
	*minor = m;
	return true;
}

/* ---- reads --------------------------------------------------------------------- */


/* pyframes' reader: from a copy made at this stop where one holds the
 * bytes, else from the target. */
static int read_at(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct pystack *ps = ctx;
	for (size_t i = 0; i < ps->nregions; i++) {
		const struct region *r = &ps->regions[i];
		if (addr >= r->start && addr - r->start <= r->len && len <= r->len - (addr - r->start)) {
			memcpy(buf, r->bytes + (addr - r->start), len);
			return 0;
		}
	}
	return ps->read(ps->read_ctx, addr, buf, len);
}

/* A process's memory, as a pyframes reader (CTX: its pid). */
static int read_process(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return procfs_read_memory_all(*(const pid_t *)ctx, addr, buf, len) ? 0 : -1;
}

static void add_region(struct pystack *ps, uint64_t start, const uint8_t *bytes, size_t len)
{
	if (len && ps->nregions < sizeof ps->regions / sizeof *ps->regions)
		ps->regions[ps->nregions++] = (struct region){ start, bytes, len };
}

/* ---- life ------------------------------------------------------------------------ */

/* The version of the interpreter at SYMS (its Py_Version, read through
 * READ, else its file's name's): false if it has neither or it cannot be
 * read. */
static bool version_via(pyframes_read_fn read, void *ctx, const struct pystack_symbols *syms,
			unsigned *major, unsigned *minor)
{
	uint64_t version = 0;
	*major = *minor = 0;
	if (!syms->version && syms->name_major) {
		*major = syms->name_major;
		*minor = syms->name_minor;
		return true;
	}
	if (!syms->version || read(ctx, syms->version, &version, sizeof version) < 0)
		return false;
	*major = (unsigned)(version >> 24) & 0xff;
	*minor = (unsigned)(version >> 16) & 0xff;
	return true;
}

/* The layout the interpreter at SYMS publishes (3.13+) into *OUT:
 * PYDEBUG_OK, or why not. */
static enum pydebug_result published_layout(pyframes_read_fn read, void *ctx,
					    const struct pystack_symbols *syms, unsigned major,
					    unsigned minor, struct py_layout *out)
{
	uint8_t bytes[PYDEBUG_READ];
	if (read(ctx, syms->runtime, bytes, sizeof bytes) < 0)
		return PYDEBUG_NONE;
	return pydebug_layout(bytes, sizeof bytes, major, minor, out);
}

static struct pystack *make(pid_t pid, pyframes_read_fn read, void *ctx,
			    const struct pystack_symbols *syms, const struct py_layout *layout,
			    struct pynames *names, enum pystack_status *status, unsigned *major,
			    unsigned *minor);

struct pystack *pystack_new(pid_t pid, const struct pystack_symbols *syms,
			    const struct py_layout *layout, struct pynames *names,
			    enum pystack_status *status, unsigned *major, unsigned *minor)
{
	return make(pid, read_process, &pid, syms, layout, names, status, major, minor);
}

struct pystack *pystack_new_reader(pyframes_read_fn read, void *ctx,
				   const struct pystack_symbols *syms, const struct py_layout *layout,
				   struct pynames *names, enum pystack_status *status,
				   unsigned *major, unsigned *minor)
{
	return make(0, read, ctx, syms, layout, names, status, major, minor);
}

/* pystack_new's, reading the target through READ (CTX); PID the process
 * whose memory that is, or 0. */
static struct pystack *make(pid_t pid, pyframes_read_fn read, void *ctx,
			    const struct pystack_symbols *syms, const struct py_layout *layout,
			    struct pynames *names, enum pystack_status *status, unsigned *major,
			    unsigned *minor)
{
	*status = syms->version || syms->name_major ? PYSTACK_MISMATCH : PYSTACK_OLD;
	if (!version_via(read, ctx, syms, major, minor))
		return NULL;
	struct py_layout published;
	enum pystack_layout_source source = PYSTACK_LAYOUT_INTERPRETER;
	const struct py_layout *l = NULL;
	if (*major == 3 && *minor >= 13) {
		enum pydebug_result r = published_layout(read, ctx, syms, *major, *minor, &published);
		if (r == PYDEBUG_FREE_THREADED) {
			*status = PYSTACK_FREE_THREADED;
			return NULL;
		}
		l = r == PYDEBUG_OK ? &published : NULL;
	} else if (layout && layout->major == *major && layout->minor == *minor) {
		l = layout;
		source = PYSTACK_LAYOUT_DWARF;
	} else {
		l = pyframes_layout(*major, *minor);
		source = PYSTACK_LAYOUT_TABLE;
	}
	if (!l) {
		*status = PYSTACK_UNKNOWN_VERSION;
		return NULL;
	}
	/* the code type, where the layout says its name is, names itself */
	uint64_t name_ptr;
	char name[5];
	if (read(ctx, syms->code_type + l->type_name, &name_ptr, sizeof name_ptr) < 0 ||
	    read(ctx, name_ptr, name, sizeof name) < 0 || memcmp(name, "code", 5) != 0 ||
	    pyframes_tstate_span(l) > TSTATE_READ_MAX || pyframes_code_span(l) > CODE_SPAN_MAX ||
	    pyframes_frame_span(l) > PYFRAMES_FRAME_READ_MAX)
		return NULL;
	struct pystack *ps = calloc(1, sizeof *ps);
	if (!ps)
		return NULL;
	ps->pid = pid;
	ps->read = pid ? read_process : read;
	ps->read_ctx = pid ? (void *)&ps->pid : ctx;
	ps->layout = *l;
	ps->l = &ps->layout;
	ps->source = source;
	ps->tstate_span = pyframes_tstate_span(l);
	ps->code_span = pyframes_code_span(l);
	ps->syms = *syms;
	ps->names = names;
	ps->threads = (struct tidrows)TIDROWS_INIT(sizeof(struct thread_slot), THREADS_MAX);
	ps->chunk = malloc(CHUNK_READ_MAX);
	ps->headers = malloc((size_t)PYSTACK_MAX_FRAMES * CODE_SPAN_MAX);
	ps->codes = calloc(CODES_FIRST, sizeof *ps->codes);
	ps->code_slots = CODES_FIRST;
	const char *cut = pynames_string(names, PYSTACK_CUT_NAME), *none = pynames_string(names, "");
	ps->cut_id = pynames_frame(names, cut, none, 0, 0);
	if (!ps->chunk || !ps->headers || !ps->codes || ps->cut_id == PYNAMES_FULL) {
		pystack_free(ps);
		return NULL;
	}
	*status = PYSTACK_ON;
	return ps;
}

static void forget_codes(struct pystack *ps)
{
	for (size_t i = 0; i < ps->code_slots; i++)
		free(ps->codes[i].table);
	memset(ps->codes, 0, ps->code_slots * sizeof *ps->codes);
	ps->ncodes = 0;
	ps->table_bytes = 0;
}

void pystack_free(struct pystack *ps)
{
	if (!ps)
		return;
	if (ps->codes)
		forget_codes(ps);
	free(ps->codes);
	tidrows_free(&ps->threads);
	free(ps->chunk);
	free(ps->headers);
	free(ps);
}

enum pystack_layout_source pystack_layout_source(const struct pystack *ps)
{
	return ps->source;
}

void pystack_forget_thread(struct pystack *ps, pid_t tid)
{
	tidrows_forget(&ps->threads, tid);
}

void pystack_eval_range(const struct pystack *ps, uint64_t *start, uint64_t *end)
{
	*start = ps->syms.eval_start;
	*end = ps->syms.eval_end;
}

/* ---- a stop ---------------------------------------------------------------------- */

/* TID's thread state: kept from the last look, else looked for. A thread
 * with none (not a Python thread, or not yet: the interpreter starting)
 * is looked for again at once when the interpreter made a thread state
 * since (one read: pyframes_threads_made), else after 1, 2, 4 ... up to
 * LOOK_BACKOFF_MAX of its stops: a new thread's state is made by the thread
 * that starts it, and names its thread only once that runs (CPython's
 * t_bootstrap), so a thread stopped in between has none yet, and with no
 * state made after (every thread started at once) it kept none for good:
 * one of six threads started together lost its Python frames for the
 * whole run. */
static uint64_t thread_state(struct pystack *ps, pid_t tid, bool again)
{
	bool fresh;
	struct thread_slot none = { 0 }, *t = tidrows_get(&ps->threads, tid, true, &fresh);
	if (!t)
		t = &none;      /* (no room: looked for at each stop) */
	if (t->tid == tid && !again && t->tstate)
		return t->tstate;
	ps->nregions = 0;
	uint64_t made = 0;
	if (pyframes_threads_made(ps->l, read_at, ps, ps->syms.runtime, &made) < 0)
		return 0;
	bool missed_since = t->tid == tid && !again && t->made == made;  /* (no state made) */
	if (missed_since && t->skips) {
		t->skips--;
		return 0;
	}
	unsigned backoff = missed_since ? t->backoff : 0;
	*t = (struct thread_slot){ .tid = tid, .made = made,
		.tstate = pyframes_find_tstate(ps->l, read_at, ps, ps->syms.runtime, tid) };
	if (!t->tstate) {
		t->backoff = backoff ? (backoff < LOOK_BACKOFF_MAX ? 2 * backoff : backoff) : 1;
		t->skips = t->backoff;
	}
	return t->tstate;
}

/* Copy the thread state TS and the frame stack chunk it uses now (its
 * innermost CHUNK_READ_MAX bytes): the reads pyframes_chain makes of
 * them then cost nothing. */
static bool copy_thread(struct pystack *ps, uint64_t ts)
{
	const struct py_layout *l = ps->l;
	size_t span = ps->tstate_span;
	if (ps->read(ps->read_ctx, ts, ps->tstate, span) < 0)
		return false;
	add_region(ps, ts, ps->tstate, span);
	uint64_t chunk, top;
	if (l->frames == PY_FRAMES_OBJECTS)
		return true;    /* (frame objects: no frame stack to copy) */
	memcpy(&chunk, ps->tstate + l->tstate_datastack_chunk, sizeof chunk);
	memcpy(&top, ps->tstate + l->tstate_datastack_top, sizeof top);
	uint64_t first = chunk + l->chunk_data;
	if (!chunk || first < chunk || top <= first)
		return true;
	if (top - first > CHUNK_READ_MAX)
		first = top - CHUNK_READ_MAX;
	size_t len = (size_t)(top - first);
	/* (the top is where the next frame goes: the last ones lie below it) */
	if (ps->read(ps->read_ctx, first, ps->chunk, len) == 0)
		add_region(ps, first, ps->chunk, len);
	return true;
}

static struct code_entry *code_slot(struct pystack *ps, uint64_t code)
{
	size_t mask = ps->code_slots - 1, j = (size_t)hash_u64(code) & mask;
	while (ps->codes[j].code && ps->codes[j].code != code)
		j = (j + 1) & mask;
	return &ps->codes[j];
}

/* Room for a capture's code objects (PYSTACK_MAX_FRAMES more) within
 * three quarters of the slots: the table doubled, up to CODES_MAX, then
 * emptied (a program that makes code without end names it again). */
static void make_code_room(struct pystack *ps)
{
	if (ps->table_bytes > TABLE_BYTES_MAX / 2) {
		forget_codes(ps);   /* (a program whose code is all large: named again) */
		return;
	}
	if ((ps->ncodes + PYSTACK_MAX_FRAMES) * 4 <= ps->code_slots * 3)
		return;
	size_t n = ps->code_slots * 2;
	struct code_entry *grown = n <= CODES_MAX ? calloc(n, sizeof *grown) : NULL;
	if (!grown) {
		forget_codes(ps);
		return;
	}
	struct code_entry *old = ps->codes;
	size_t old_slots = ps->code_slots;
	ps->codes = grown;
	ps->code_slots = n;
	for (size_t i = 0; i < old_slots; i++)
		if (old[i].code)
			*code_slot(ps, old[i].code) = old[i];
	free(old);
}

/* CODE's header in HEADER is the one E was named from. */
static bool same_code(const struct code_entry *e, const struct py_code_header *h)
{
	return e->header.type == h->type && e->header.qualname == h->qualname &&
	       e->header.filename == h->filename && e->header.linetable == h->linetable &&
	       e->header.first_line == h->first_line;
}

/* Name code object CODE in E (its slot): its names and line table read.
 * false if it is not a readable code object. */
static bool name_code(struct pystack *ps, struct code_entry *e, uint64_t code)
{
	struct py_code pc;
	struct py_code_header h;
	uint8_t *table;
	size_t len;
	if (pyframes_code_table(ps->l, read_at, ps, code, &pc, &h, &table, &len) < 0)
		return false;
	const char *qualname = pynames_string(ps->names, pc.qualname);
	const char *filename = pynames_string(ps->names, pc.filename);
	if (!qualname || !filename) {
		free(table);
		return false;
	}
	if (table && ps->table_bytes + len > TABLE_BYTES_MAX) {
		free(table);     /* (no room for its lines: the frames get none) */
		table = NULL;
		len = 0;
	}
	ps->table_bytes += len;
	if (e->code) {
		ps->table_bytes -= e->table_len;
		free(e->table);
	} else {
		ps->ncodes++;
	}
	*e = (struct code_entry){ .code = code, .header = h, .qualname = qualname,
				  .filename = filename, .table = table, .table_len = len };
	for (unsigned i = 0; i < MEMO; i++)
		e->memo[i].unit = UINT32_MAX;
	return true;
}

/* The frame of E at code unit UNIT. */
static uint32_t frame_id(struct pystack *ps, struct code_entry *e, uint32_t unit)
{
	for (unsigned i = 0; i < MEMO; i++)
		if (e->memo[i].unit == unit)
			return e->memo[i].id;
	int line = e->table ? pyframes_line(ps->l, e->table, e->table_len, e->header.first_line,
					    unit)
			    : PYLINE_BAD;
	uint32_t id = pynames_frame(ps->names, e->qualname, e->filename, e->header.first_line,
				    line > 0 ? line : 0);
	if (id != PYNAMES_FULL) {
		e->memo[e->memo_next] = (typeof(e->memo[0])){ unit, id };
		e->memo_next = (e->memo_next + 1) % MEMO;
	}
	return id;
}

/* The headers of the code objects of the first N frames, in batches of
 * IOV_BATCH per read: how many, from the first, were read. */
static size_t read_headers(struct pystack *ps, size_t n)
{
	size_t span = ps->code_span;
	if (!ps->pid) {
		/* (a reader of the caller's: one read each) */
		for (size_t i = 0; i < n; i++)
			if (ps->read(ps->read_ctx, ps->frames[i].code, ps->headers + i * span, span) < 0)
				return i;
		return n;
	}
	struct iovec local[IOV_BATCH], remote[IOV_BATCH];
	for (size_t done = 0; done < n;) {
		size_t k = n - done < IOV_BATCH ? n - done : IOV_BATCH;
		for (size_t i = 0; i < k; i++) {
			local[i] = (struct iovec){ ps->headers + (done + i) * span, span };
			remote[i] = (struct iovec){ (void *)(uintptr_t)ps->frames[done + i].code, span };
		}
		ssize_t got = process_vm_readv(ps->pid, local, k, remote, k, 0);
		if (got < 0)
			return done;
		if ((size_t)got < k * span)
			return done + (size_t)got / span;
		done += k;
	}
	return n;
}

/* Read TID's chain of frames into ps->frames (at most MAX): their number,
 * or -1 when it runs no Python. */
static int read_chain(struct pystack *ps, pid_t tid, const uint8_t *stack, uint64_t stack_start,
		      size_t len, size_t max, bool *cut)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		uint64_t ts = thread_state(ps, tid, attempt > 0);
		if (!ts)
			return -1;
		ps->nregions = 0;
		add_region(ps, stack_start, stack, len);
		if (!copy_thread(ps, ts))
			continue;
		int n = pyframes_chain(ps->l, read_at, ps, ts, tid, ps->frames, max, cut);
		if (n >= 0)
			return n;
	}
	/* no thread state of TID now (the slot says none since then) */
	return -1;
}

static unsigned capture_into(struct pystack *ps, pid_t tid, const uint8_t *stack,
			     uint64_t stack_start, size_t len, uint64_t *addrs, bool *entry,
			     uint64_t *loop, unsigned max);

/* What a capture read (pystack.h). */
struct pystack_frames {
	uint64_t addrs[PYSTACK_MAX_FRAMES];
	bool entry[PYSTACK_MAX_FRAMES];
	uint64_t loop[PYSTACK_MAX_FRAMES];
	unsigned n;
};

struct pystack_frames *pystack_frames_new(void)
{
	return calloc(1, sizeof(struct pystack_frames));
}

void pystack_frames_free(struct pystack_frames *f)
{
	free(f);
}

void pystack_frames_clear(struct pystack_frames *f)
{
	if (f)
		f->n = 0;
}

unsigned pystack_frames_count(const struct pystack_frames *f)
{
	return f ? f->n : 0;
}

struct pystack_run pystack_frames_run(const struct pystack_frames *f)
{
	return (struct pystack_run){ .addrs = f->addrs, .entry = f->entry, .loop = f->loop,
				     .n = f->n };
}

unsigned pystack_capture(struct pystack *ps, pid_t tid, const uint8_t *stack, uint64_t stack_start,
			 size_t len, struct pystack_frames *out)
{
	out->n = capture_into(ps, tid, stack, stack_start, len, out->addrs, out->entry, out->loop,
			      PYSTACK_MAX_FRAMES);
	return out->n;
}

/* pystack_capture's, into ADDRS, ENTRY and LOOP (MAX each). */
static unsigned capture_into(struct pystack *ps, pid_t tid, const uint8_t *stack,
			     uint64_t stack_start, size_t len, uint64_t *addrs, bool *entry,
			     uint64_t *loop, unsigned max)
{
	if (max < 2)
		return 0;
	make_code_room(ps);
	bool cut = false;
	size_t room = max - 1 < PYSTACK_MAX_FRAMES ? max - 1 : PYSTACK_MAX_FRAMES;
	int n = read_chain(ps, tid, stack, stack_start, len, room, &cut);
	if (n <= 0)
		return 0;
	size_t readable = read_headers(ps, (size_t)n);
	size_t span = ps->code_span;
	unsigned k = 0;
	for (size_t i = 0; i < (size_t)n; i++) {
		struct py_code_header h;
		struct code_entry *e = NULL;
		if (i < readable) {
			pyframes_code_header(ps->l, ps->headers + i * span, &h);
			e = code_slot(ps, ps->frames[i].code);
			if ((!e->code || !same_code(e, &h)) && !name_code(ps, e, ps->frames[i].code))
				e = NULL;
		}
		uint32_t id = e ? frame_id(ps, e, ps->frames[i].unit) : PYNAMES_FULL;
		if (id == PYNAMES_FULL) {
			cut = true;   /* an unreadable code object ends what is known */
			break;
		}
		addrs[k] = addr_runtime(RUNTIME_PYTHON, id);
		loop[k] = ps->frames[i].loop;
		entry[k++] = ps->frames[i].entry;
	}
	if (cut) {
		addrs[k] = addr_runtime(RUNTIME_PYTHON, ps->cut_id);
		loop[k] = 0;
		entry[k++] = true;
	}
	return k;
}

/* ---- the splice ------------------------------------------------------------------ */

/* Append A to OUT (at *K, of MAX); false when full. */
static bool put(uint64_t *out, unsigned *k, unsigned max, uint64_t a)
{
	if (*k == max)
		return false;
	out[(*k)++] = a;
	return true;
}

/* The end of the stack frame of NATIVE's frame I: its caller's stack
 * pointer (the outermost's: a megabyte on). */
static uint64_t frame_end(const uint64_t *native_sp, unsigned n, unsigned i)
{
	return i + 1 < n ? native_sp[i + 1] : native_sp[i] + (1u << 20);
}

unsigned pystack_splice(const uint64_t *native, const uint64_t *native_sp, unsigned n,
			const struct pystack_run *py, uint64_t eval_start, uint64_t eval_end,
			bool walk_cut, uint64_t *out, unsigned max, bool *full)
{
	unsigned k = 0, j = 0, npy = py->n;
	unsigned group_of = UINT_MAX, group_end = 0;  /* the entry ending the run from J */
	*full = true;
	for (unsigned i = 0; i < n; i++) {
		if (j < npy && group_of != j) {
			group_of = j;
			for (group_end = j; group_end + 1 < npy && !py->entry[group_end]; group_end++)
				;
		}
		uint64_t at = j < npy && py->loop && native_sp ? py->loop[group_end] : 0;
		bool by_sp = at && n && at >= native_sp[0] && at < frame_end(native_sp, n, n - 1);
		uint64_t pc = addr_lookup_pc(native[i]);
		bool loop = j < npy && !addr_is_runtime(native[i]) &&
			    (by_sp ? at >= native_sp[i] && at < frame_end(native_sp, n, i)
				   : pc >= eval_start && pc < eval_end);
		if (loop) {
			/* the loop ran the frames from the next through an entry one */
			bool last;
			do {
				last = py->entry[j];
				if (!put(out, &k, max, py->addrs[j++]))
					return k;
			} while (!last && j < npy);
		} else if (!put(out, &k, max, native[i])) {
			return k;
		}
	}
	for (; walk_cut && j < npy; j++)
		if (!put(out, &k, max, py->addrs[j]))
			return k;
	*full = false;
	return k;
}
