/* pyframes: see pyframes.h. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "pyframes.h"
#include "pylinetable.h"

/* CPython 2.7 to 3.10 on x86-64 (measured with gdb on pyenv's 2.7.18,
 * 3.6.15, 3.7.16, 3.8.18, 3.9.18 and 3.10.13 and their debug
 * information): frame objects, a thread's by its pthread; 2.7's names are
 * byte strings; 2.7 and 3.6 list their interpreters from interp_head. */
#define LEGACY_COMMON \
	.frames = PY_FRAMES_OBJECTS, .frame_in_tstate = true, .tstate_pthread = true, \
	.interp_next = 0, .interp_threads_head = 8, \
	.frame_previous = 0x18, .frame_code = 0x20, \
	.object_type = 8, .type_name = 24, .bytes_size = 16
#define LEGACY_UNICODE \
	.bytes_data = 32, \
	.ascii_length = 16, .ascii_state = 32, .ascii_data = 48, .compact_data = 72
static const struct py_layout layout_2_7 = {
	.major = 2, .minor = 7, LEGACY_COMMON, .lines = PY_LINES_LNOTAB_UNSIGNED,
	.strings_bytes = true, .runtime_interpreters_head = 0,
	.tstate_next = 0, .tstate_cframe = 0x10, .tstate_native_thread_id = 0x90,
	.frame_prev_instr = 0x78,
	.code_qualname = 0x58, .code_filename = 0x50, .code_firstlineno = 0x60,
	.code_linetable = 0x68,
	.bytes_data = 36, .ascii_length = 16, .ascii_data = 36,
};
static const struct py_layout layout_3_6 = {
	.major = 3, .minor = 6, LEGACY_COMMON, LEGACY_UNICODE, .lines = PY_LINES_LNOTAB,
	.runtime_interpreters_head = 0,
	.tstate_next = 8, .tstate_cframe = 0x18, .tstate_native_thread_id = 0x98,
	.frame_prev_instr = 0x78,
	.code_qualname = 0x68, .code_filename = 0x60, .code_firstlineno = 0x24,
	.code_linetable = 0x70,
};
static const struct py_layout layout_3_7 = {
	.major = 3, .minor = 7, LEGACY_COMMON, LEGACY_UNICODE, .lines = PY_LINES_LNOTAB,
	.runtime_interpreters_head = 24, .interp_threads_next_id = 0xa00,
	.tstate_next = 8, .tstate_cframe = 0x18, .tstate_native_thread_id = 0xb0,
	.frame_prev_instr = 0x68,
	.code_qualname = 0x68, .code_filename = 0x60, .code_firstlineno = 0x24,
	.code_linetable = 0x70,
};
static const struct py_layout layout_3_8 = {
	.major = 3, .minor = 8, LEGACY_COMMON, LEGACY_UNICODE, .lines = PY_LINES_LNOTAB,
	.runtime_interpreters_head = 32, .interp_threads_next_id = 0xa68,
	.tstate_next = 8, .tstate_cframe = 0x18, .tstate_native_thread_id = 0xb0,
	.frame_prev_instr = 0x68,
	.code_qualname = 0x70, .code_filename = 0x68, .code_firstlineno = 0x28,
	.code_linetable = 0x78,
};
static const struct py_layout layout_3_9 = {
	.major = 3, .minor = 9, LEGACY_COMMON, LEGACY_UNICODE, .lines = PY_LINES_LNOTAB,
	.runtime_interpreters_head = 32, .interp_threads_next_id = 0xda8,
	.tstate_next = 8, .tstate_cframe = 0x18, .tstate_native_thread_id = 0xb0,
	.frame_prev_instr = 0x68,
	.code_qualname = 0x70, .code_filename = 0x68, .code_firstlineno = 0x28,
	.code_linetable = 0x78,
};
static const struct py_layout layout_3_10 = {
	.major = 3, .minor = 10, LEGACY_COMMON, LEGACY_UNICODE, .lines = PY_LINES_310,
	.runtime_interpreters_head = 32, .interp_threads_next_id = 0xd78,
	.tstate_next = 8, .tstate_cframe = 0x18, .tstate_native_thread_id = 0xb0,
	.frame_prev_instr = 0x60,
	.code_qualname = 0x70, .code_filename = 0x68, .code_firstlineno = 0x28,
	.code_linetable = 0x78,
};

/* CPython 3.11 on x86-64 (measured with gdb on Debian's python3.11
 * 3.11.2 and its debug information: offsetof of each field). */
static const struct py_layout layout_3_11 = {
	.major = 3, .minor = 11, .frames = PY_FRAMES_IS_ENTRY,
	.runtime_interpreters_head = 40,
	.interp_next = 0, .interp_threads_head = 16, .interp_threads_next_id = 8,
	.tstate_next = 8, .tstate_native_thread_id = 160, .tstate_cframe = 56,
	.tstate_datastack_chunk = 0x128, .tstate_datastack_top = 0x130, .chunk_data = 0x18,
	.cframe_current_frame = 8,
	.frame_code = 32, .frame_previous = 48, .frame_prev_instr = 56, .frame_is_entry = 68,
	.code_qualname = 128, .code_filename = 112, .code_firstlineno = 72, .code_linetable = 136,
	.code_code_adaptive = 184,
	.object_type = 8, .type_name = 24,
	.bytes_size = 16, .bytes_data = 32,
	.ascii_length = 16, .ascii_state = 32, .ascii_data = 48, .compact_data = 72,
};

/* CPython 3.12 on x86-64 (measured the same way on pyenv's 3.12.1): the
 * frame's owner in place of is_entry, the code object first in it, the
 * strings without their wstr. */
static const struct py_layout layout_3_12 = {
	.major = 3, .minor = 12, .frames = PY_FRAMES_OWNER,
	.runtime_interpreters_head = 40,
	.interp_next = 0, .interp_threads_head = 72, .interp_threads_next_id = 64,
	.tstate_next = 8, .tstate_native_thread_id = 144, .tstate_cframe = 56,
	.tstate_datastack_chunk = 0xe8, .tstate_datastack_top = 0xf0, .chunk_data = 0x18,
	.cframe_current_frame = 0,
	.frame_code = 0, .frame_previous = 8, .frame_prev_instr = 56, .frame_owner = 70,
	.code_qualname = 128, .code_filename = 112, .code_firstlineno = 68, .code_linetable = 136,
	.code_code_adaptive = 192,
	.object_type = 8, .type_name = 24,
	.bytes_size = 16, .bytes_data = 32,
	.ascii_length = 16, .ascii_state = 32, .ascii_data = 40, .compact_data = 56,
};

/* A frame chain longer than this is taken for a loop. */
#define MAX_CHAIN 4096

const struct py_layout *pyframes_layout(unsigned major, unsigned minor)
{
	static const struct py_layout *const known[] = {
		&layout_2_7, &layout_3_6, &layout_3_7, &layout_3_8, &layout_3_9, &layout_3_10,
		&layout_3_11, &layout_3_12,
	};
	for (size_t i = 0; i < sizeof known / sizeof *known; i++)
		if (known[i]->major == major && known[i]->minor == minor)
			return known[i];
	return NULL;
}

static uint64_t hash_mix_made(uint64_t interp, uint64_t made)
{
	return (interp * UINT64_C(0x9E3779B97F4A7C15)) ^ made ^ 1;   /* (never 0 once read) */
}

static int read_u64(pyframes_read_fn read, void *ctx, uint64_t addr, uint64_t *out)
{
	return addr ? read(ctx, addr, out, sizeof *out) : -1;
}

static size_t span_of(const size_t *ends, size_t n)
{
	size_t span = 0;
	for (size_t i = 0; i < n; i++)
		span = ends[i] > span ? ends[i] : span;
	return span;
}

size_t pyframes_tstate_span(const struct py_layout *l)
{
	size_t ends[] = { l->tstate_next + 8, l->tstate_native_thread_id + 8, l->tstate_cframe + 8,
			  l->tstate_datastack_chunk + 8, l->tstate_datastack_top + 8 };
	return span_of(ends, sizeof ends / sizeof *ends);
}

size_t pyframes_frame_span(const struct py_layout *l)
{
	size_t flag = l->frames == PY_FRAMES_OWNER ? l->frame_owner : l->frame_is_entry;
	size_t ends[] = { flag + 1, l->frame_code + 8, l->frame_prev_instr + 8,
			  l->frame_previous + 8 };
	return span_of(ends, sizeof ends / sizeof *ends);
}

size_t pyframes_code_span(const struct py_layout *l)
{
	size_t ends[] = { l->object_type + 8, l->code_qualname + 8, l->code_filename + 8,
			  l->code_firstlineno + 4, l->code_linetable + 8 };
	return span_of(ends, sizeof ends / sizeof *ends);
}

int pyframes_threads_made(const struct py_layout *l, pyframes_read_fn read, void *ctx,
			  uint64_t runtime, uint64_t *out)
{
	uint64_t interp, made = 0;
	/* (without a count, the list's head: a thread state is made at it) */
	size_t at = l->interp_threads_next_id ? l->interp_threads_next_id : l->interp_threads_head;
	if (read_u64(read, ctx, runtime + l->runtime_interpreters_head, &interp) < 0 ||
	    (interp && read_u64(read, ctx, interp + at, &made) < 0))
		return -1;
	*out = hash_mix_made(interp, made);
	return 0;
}

/* Whether thread state TS is thread TID's: its native_thread_id, or
 * (before 3.11) the tid in the pthread its thread_id names. */
static bool thread_is(const struct py_layout *l, pyframes_read_fn read, void *ctx, uint64_t ts,
		      pid_t tid)
{
	uint64_t id;
	int32_t kernel_tid;
	if (read_u64(read, ctx, ts + l->tstate_native_thread_id, &id) < 0)
		return false;
	if (!l->tstate_pthread)
		return id == (uint64_t)tid;
	return id && read(ctx, id + PY_PTHREAD_TID, &kernel_tid, sizeof kernel_tid) == 0 &&
	       kernel_tid == tid;
}

uint64_t pyframes_find_tstate(const struct py_layout *l, pyframes_read_fn read, void *ctx,
			      uint64_t runtime, pid_t tid)
{
	uint64_t interp;
	if (read_u64(read, ctx, runtime + l->runtime_interpreters_head, &interp) < 0)
		return 0;
	unsigned looked = 0;
	for (unsigned ni = 0; interp && ni < PYFRAMES_MAX_INTERPRETERS; ni++) {
		uint64_t ts;
		if (read_u64(read, ctx, interp + l->interp_threads_head, &ts) < 0)
			return 0;
		for (; ts && looked < PYFRAMES_MAX_THREADS; looked++) {
			if (thread_is(l, read, ctx, ts, tid))
				return ts;
			if (read_u64(read, ctx, ts + l->tstate_next, &ts) < 0)
				break;
		}
		if (read_u64(read, ctx, interp + l->interp_next, &interp) < 0)
			return 0;
	}
	return 0;
}

int pyframes_thread(const struct py_layout *l, pyframes_read_fn read, void *ctx, uint64_t runtime,
		    pid_t tid, struct py_frame *out, size_t max, bool *cut)
{
	*cut = false;
	uint64_t ts = pyframes_find_tstate(l, read, ctx, runtime, tid);
	return ts ? pyframes_chain(l, read, ctx, ts, tid, out, max, cut) : -1;
}

/* The current frame of thread state TS: 0, or -1. */
static int current_frame(const struct py_layout *l, pyframes_read_fn read, void *ctx, uint64_t ts,
			 uint64_t *frame)
{
	uint64_t cframe;
	if (l->frame_in_tstate)
		return read_u64(read, ctx, ts + l->tstate_cframe, frame);
	return read_u64(read, ctx, ts + l->tstate_cframe, &cframe) < 0 ||
	       read_u64(read, ctx, cframe + l->cframe_current_frame, frame) < 0 ? -1 : 0;
}

/* A code object's address as a frame holds it: from 3.14 a stack
 * reference whose low bits are tags (an object is 8-aligned at least). */
#define CODE_TAG_BITS UINT64_C(7)

int pyframes_chain(const struct py_layout *l, pyframes_read_fn read, void *ctx, uint64_t ts,
		   pid_t tid, struct py_frame *out, size_t max, bool *cut)
{
	*cut = false;
	uint64_t frame;
	if (!thread_is(l, read, ctx, ts, tid))
		return -1;
	if (current_frame(l, read, ctx, ts, &frame) < 0) {
		*cut = true;
		return 0;
	}
	bool owners = l->frames == PY_FRAMES_OWNER, objects = l->frames == PY_FRAMES_OBJECTS;
	size_t span = pyframes_frame_span(l);
	size_t n = 0;
	for (unsigned steps = 0; frame; steps++) {
		if (n == max || steps == MAX_CHAIN) {
			*cut = true;
			break;
		}
		/* the frame's fields in one read (a read of the target is a
		 * system call: one per frame, not four) */
		uint8_t fb[PYFRAMES_FRAME_READ_MAX];
		uint64_t code, prev_instr, previous;
		if (span > sizeof fb || read(ctx, frame, fb, span) < 0) {
			*cut = true;
			break;
		}
		memcpy(&code, fb + l->frame_code, sizeof code);
		memcpy(&prev_instr, fb + l->frame_prev_instr, sizeof prev_instr);
		memcpy(&previous, fb + l->frame_previous, sizeof previous);
		uint8_t flag = fb[owners ? l->frame_owner : l->frame_is_entry];
		if (objects) {
			/* a frame object: the offset it last ran (-1: not
			 * started), and a call of the loop of its own */
			int32_t lasti;
			memcpy(&lasti, fb + l->frame_prev_instr, sizeof lasti);
			out[n++] = (struct py_frame){ .code = code,
				.unit = lasti > 0 ? (uint32_t)lasti : 0, .entry = true };
		} else if (owners && flag >= PY_OWNER_NOT_PYTHON) {
			/* the evaluation loop's own frame: the one run before it
			 * is where C entered the loop */
			if (n && !out[n - 1].entry) {
				out[n - 1].entry = true;
				out[n - 1].loop = frame;
			}
		} else {
			code &= ~CODE_TAG_BITS;
			/* the code unit run (prev_instr may be one before the
			 * first: the frame has not started) */
			uint64_t first = code + l->code_code_adaptive;
			uint64_t unit = prev_instr >= first ? (prev_instr - first) / 2 : 0;
			out[n++] = (struct py_frame){ .code = code,
				.unit = unit > UINT32_MAX ? UINT32_MAX : (uint32_t)unit,
				.entry = !owners && flag != 0 };
		}
		/* a frame that names itself (or an earlier one, beyond MAX_CHAIN)
		 * ends the chain */
		if (previous == frame) {
			*cut = true;
			break;
		}
		frame = previous;
	}
	/* the outermost frame ran in the outermost loop */
	if (owners && n && !*cut)
		out[n - 1].entry = true;
	return (int)n;
}

/* Append the code point C to OUT (of SIZE, at *N, NUL kept) as UTF-8;
 * false when it does not fit. */
static bool put_utf8(char *out, size_t size, size_t *n, uint32_t c)
{
	char b[4];
	if (c == 0 || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		c = '?';    /* (no NUL in a name; no surrogate or beyond Unicode) */
	size_t k = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
	if (k == 1) {
		b[0] = (char)c;
	} else if (k == 2) {
		b[0] = (char)(0xc0 | (c >> 6));
		b[1] = (char)(0x80 | (c & 0x3f));
	} else if (k == 3) {
		b[0] = (char)(0xe0 | (c >> 12));
		b[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		b[2] = (char)(0x80 | (c & 0x3f));
	} else {
		b[0] = (char)(0xf0 | (c >> 18));
		b[1] = (char)(0x80 | ((c >> 12) & 0x3f));
		b[2] = (char)(0x80 | ((c >> 6) & 0x3f));
		b[3] = (char)(0x80 | (c & 0x3f));
	}
	if (*n + k >= size)
		return false;
	memcpy(out + *n, b, k);
	*n += k;
	return true;
}

/* The str object at ADDR into OUT (UTF-8, at most SIZE - 1 bytes: longer
 * ones are cut at a character). A compact string only (of 1, 2 or 4 bytes
 * a character: every str a code object names is one); 0, or -1. */
static int read_string(const struct py_layout *l, pyframes_read_fn read, void *ctx,
		       uint64_t addr, char *out, size_t size)
{
	uint64_t length;
	uint32_t state = 0x64;  /* (2.7's str: bytes, read as compact, 1 byte a character) */
	out[0] = '\0';
	if (read_u64(read, ctx, addr + l->ascii_length, &length) < 0 ||
	    (!l->strings_bytes && read(ctx, addr + l->ascii_state, &state, sizeof state) < 0))
		return -1;
	unsigned kind = (state >> 2) & 7u, compact = (state >> 5) & 1u, ascii = (state >> 6) & 1u;
	if (!compact || (kind != 1 && kind != 2 && kind != 4) || (ascii && kind != 1))
		return -1;
	uint8_t raw[PYFRAMES_MAX_STRING * 4];
	size_t take = length < PYFRAMES_MAX_STRING ? (size_t)length : PYFRAMES_MAX_STRING;
	if (take && read(ctx, addr + (ascii ? l->ascii_data : l->compact_data), raw, take * kind) < 0)
		return -1;
	size_t n = 0;
	for (size_t i = 0; i < take; i++) {
		uint32_t c = raw[i];
		if (kind == 2) {
			uint16_t u;
			memcpy(&u, raw + 2 * i, 2);
			c = u;
		} else if (kind == 4) {
			memcpy(&c, raw + 4 * i, 4);
		}
		if (!put_utf8(out, size, &n, c))
			break;
	}
	out[n] = '\0';
	return 0;
}

void pyframes_code_header(const struct py_layout *l, const uint8_t *bytes,
			  struct py_code_header *out)
{
	memcpy(&out->type, bytes + l->object_type, sizeof out->type);
	memcpy(&out->qualname, bytes + l->code_qualname, sizeof out->qualname);
	memcpy(&out->filename, bytes + l->code_filename, sizeof out->filename);
	memcpy(&out->linetable, bytes + l->code_linetable, sizeof out->linetable);
	memcpy(&out->first_line, bytes + l->code_firstlineno, sizeof out->first_line);
}

#define CODE_SPAN_MAX 256

int pyframes_code_table(const struct py_layout *l, pyframes_read_fn read, void *ctx, uint64_t code,
			struct py_code *out, struct py_code_header *h, uint8_t **table,
			size_t *len)
{
	uint8_t bytes[CODE_SPAN_MAX];
	uint64_t name_ptr;
	char type_name[8];
	size_t span = pyframes_code_span(l);
	memset(out, 0, sizeof *out);
	*table = NULL;
	*len = 0;
	if (!code || span > sizeof bytes || read(ctx, code, bytes, span) < 0)
		return -1;
	pyframes_code_header(l, bytes, h);
	if (read_u64(read, ctx, h->type + l->type_name, &name_ptr) < 0 ||
	    read(ctx, name_ptr, type_name, 5) < 0 || memcmp(type_name, "code", 5) != 0)
		return -1;
	if (read_string(l, read, ctx, h->qualname, out->qualname, sizeof out->qualname) < 0 ||
	    read_string(l, read, ctx, h->filename, out->filename, sizeof out->filename) < 0)
		return -1;
	out->first_line = h->first_line;
	int64_t size;
	if (read(ctx, h->linetable + l->bytes_size, &size, sizeof size) < 0 || size < 0 ||
	    size > PYFRAMES_MAX_LINETABLE)
		return 0;    /* a code object without a readable line table: no line */
	uint8_t *t = malloc(size ? (size_t)size : 1);
	if (t && (size == 0 || read(ctx, h->linetable + l->bytes_data, t, (size_t)size) == 0)) {
		*table = t;
		*len = (size_t)size;
	} else {
		free(t);
	}
	return 0;
}

int pyframes_code(const struct py_layout *l, pyframes_read_fn read, void *ctx, uint64_t code,
		  uint32_t unit, struct py_code *out, int *line)
{
	struct py_code_header h;
	uint8_t *table;
	size_t len;
	*line = PYLINE_BAD;
	if (pyframes_code_table(l, read, ctx, code, out, &h, &table, &len) < 0)
		return -1;
	if (table)
		*line = pyframes_line(l, table, len, out->first_line, unit);
	free(table);
	return 0;
}

int pyframes_line(const struct py_layout *l, const uint8_t *table, size_t len, int first_line,
		  uint32_t unit)
{
	switch (l->lines) {
	case PY_LINES_310:
		return pylinetable_310_line(table, len, first_line, (size_t)unit * 2);
	case PY_LINES_LNOTAB:
		return pylinetable_lnotab_line(table, len, first_line, unit, true);
	case PY_LINES_LNOTAB_UNSIGNED:
		return pylinetable_lnotab_line(table, len, first_line, unit, false);
	default:
		return pylinetable_line(table, len, first_line, unit);
	}
}
