/* pyframes: a CPython thread's chain of interpreter frames, read from the
 * target's memory through the caller's reader (issue 33's Python frames;
 * the second room after pylinetable, not yet on a sample's path).
 *
 * From the interpreter's runtime state (the address of _PyRuntime; of
 * interp_head in 2.7 and 3.6) it walks the interpreters' thread states to
 * the one of a thread id (native_thread_id; before 3.11 the tid in the
 * pthread its thread_id names), then that thread's frames from its
 * current frame through each frame's previous one (before 3.11 frame
 * objects, each run by a call of the loop of its own): per frame, its code object and the
 * code unit it runs (prev_instr before 3.13, instr_ptr since), and
 * whether C entered the evaluation loop there (where the native stack has
 * one _PyEval_EvalFrameDefault). CPython 3.11 marks that frame (is_entry);
 * from 3.12 each run of the loop puts a frame of its own on the chain
 * (owned by the C stack, or from 3.14 by the interpreter), which is not
 * a Python frame: the frame before it is the entry. A code object is read
 * for its qualified name, file name, first line and line table; its type
 * must name itself "code".
 *
 * Layouts are per interpreter version: csampler's table of 2.7 and 3.6 to
 * 3.12 on x86-64 (pyframes_layout: offsetof each field in Debian's
 * python3.11 3.11.2 and pyenv's 2.7.18, 3.6.15, 3.7.16, 3.8.18, 3.9.18,
 * 3.10.13 and 3.12.1, from their debug information), and from 3.13
 * the offsets the interpreter publishes (pydebug.h). Everything read is
 * the target's: every list and chain is bounded (PYFRAMES_MAX_* ), a chain
 * that loops or leaves readable memory ends the read with *CUT set,
 * strings are copied bounded and checked (compact ASCII, Latin-1, UCS-2
 * or UCS-4 objects only), and nothing read is trusted as a length before
 * it is bounded. Pure but for the reader; fuzzed on random memory images
 * (fuzz_pyframes). */
#ifndef CSAMPLER_PYFRAMES_H
#define CSAMPLER_PYFRAMES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PYFRAMES_MAX_THREADS 4096   /* thread states looked at, all interpreters */
#define PYFRAMES_MAX_INTERPRETERS 64
#define PYFRAMES_MAX_STRING 256     /* bytes of a name or file name kept */
#define PYFRAMES_MAX_LINETABLE 65536 /* bytes of a line table read */

/* How a thread's frames are chained, and how a frame says C entered the
 * evaluation loop there. */
enum py_frames_kind {
	PY_FRAMES_OBJECTS,              /* 2.7-3.10: frame objects (f_back), each
	                                 * run by a loop of its own */
	PY_FRAMES_IS_ENTRY,             /* 3.11: its is_entry flag */
	PY_FRAMES_OWNER,                /* 3.12+: the next frame is the loop's own */
};
/* A code object's line table. */
enum py_lines_kind {
	PY_LINES_LOCATIONS,             /* 3.11+: co_linetable, by code unit */
	PY_LINES_310,                   /* 3.10: co_linetable, by byte */
	PY_LINES_LNOTAB,                /* 3.6-3.9: co_lnotab, lines signed */
	PY_LINES_LNOTAB_UNSIGNED,       /* 2.7: co_lnotab */
};
/* Where a thread's id (a pthread_t, before 3.11) holds its kernel tid:
 * glibc's struct pthread on x86-64 (offsetof(struct pthread, tid) in
 * bookworm's glibc 2.36 and every 2.x since NPTL). */
#define PY_PTHREAD_TID 0x2d0
/* From 3.12 a frame whose owner is this or more is not a Python frame
 * (3.12, 3.13: FRAME_OWNED_BY_CSTACK; 3.14: INTERPRETER, CSTACK; 3.15:
 * INTERPRETER; the others are THREAD, GENERATOR and FRAME_OBJECT). */
#define PY_OWNER_NOT_PYTHON 3

/* The offsets a read needs (bytes). */
struct py_layout {
	unsigned major, minor;
	enum py_frames_kind frames;
	enum py_lines_kind lines;
	bool frame_in_tstate;           /* tstate_cframe is the current frame (3.13+,
	                                 * 3.10-: tstate->frame) */
	bool tstate_pthread;            /* tstate_native_thread_id is a pthread_t
	                                 * (thread_id, before 3.11) */
	bool strings_bytes;             /* names are 2.7's str: bytes, no state */
	size_t runtime_interpreters_head;  /* (2.7, 3.6: _PyRuntime is interp_head) */
	size_t interp_next, interp_threads_head;
	size_t interp_threads_next_id;  /* grows with each thread state made; 0:
	                                 * none (2.7, 3.6: the list's head is read) */
	size_t tstate_next, tstate_native_thread_id;
	size_t tstate_cframe;           /* its _PyCFrame, or its current frame */
	size_t tstate_datastack_chunk, tstate_datastack_top;  /* where its frames live */
	size_t chunk_data;              /* a data stack chunk's first frame */
	size_t cframe_current_frame;
	size_t frame_code;              /* f_code; from 3.13 f_executable (tagged in 3.14+) */
	size_t frame_previous;          /* previous; before 3.11 f_back */
	size_t frame_prev_instr;        /* prev_instr; from 3.13 instr_ptr; before
	                                 * 3.11 f_lasti (an int) */
	size_t frame_is_entry;          /* PY_FRAMES_IS_ENTRY */
	size_t frame_owner;             /* PY_FRAMES_OWNER */
	size_t code_qualname;           /* before 3.11 co_name (no co_qualname) */
	size_t code_filename, code_firstlineno;
	size_t code_linetable;          /* co_linetable; before 3.10 co_lnotab */
	size_t code_code_adaptive;
	size_t object_type, type_name;
	size_t bytes_size, bytes_data;
	size_t ascii_length, ascii_state, ascii_data, compact_data;
};

/* The layout of CPython MAJOR.MINOR, or NULL when csampler knows none. */
const struct py_layout *pyframes_layout(unsigned major, unsigned minor);

/* Read LEN bytes at ADDR of the target into BUF: 0, or -1. */
typedef int (*pyframes_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

struct py_frame {
	uint64_t code;                  /* the code object's address */
	uint32_t unit;                  /* the code unit last run (before 3.11 its
	                                 * f_lasti; its line: pyframes_line) */
	bool entry;                     /* C entered the evaluation loop here */
	uint64_t loop;                  /* (3.12+, an entry) the loop's own frame
	                                 * next in the chain: in the C stack frame of
	                                 * the loop that ran this one; 0: not known */
};

/* The thread state of RUNTIME's interpreters whose native_thread_id is
 * TID: its address, or 0 (none, or the runtime cannot be read). Walks at
 * most PYFRAMES_MAX_THREADS thread states: a caller keeps what it found. */
uint64_t pyframes_find_tstate(const struct py_layout *l, pyframes_read_fn read, void *ctx,
			      uint64_t runtime, pid_t tid);

/* What changes when a thread state is made in RUNTIME's first
 * interpreter (its address and its count of thread states made): a
 * thread found without one need not be looked for again while it stays
 * the same. 0, or -1 if it cannot be read. */
int pyframes_threads_made(const struct py_layout *l, pyframes_read_fn read, void *ctx,
			  uint64_t runtime, uint64_t *out);

/* The frames of thread state TSTATE, which must name TID, innermost first,
 * at most MAX into OUT: their number (0: no frame), or -1 when TSTATE is
 * not TID's (any more: find it again). *CUT: the chain was ended early (it
 * looped, left readable memory or had more than MAX). */
int pyframes_chain(const struct py_layout *l, pyframes_read_fn read, void *ctx, uint64_t tstate,
		   pid_t tid, struct py_frame *out, size_t max, bool *cut);

/* pyframes_find_tstate then pyframes_chain: -1 when no thread state of
 * RUNTIME names TID. */
int pyframes_thread(const struct py_layout *l, pyframes_read_fn read, void *ctx, uint64_t runtime,
		    pid_t tid, struct py_frame *out, size_t max, bool *cut);

/* The span of a thread state a capture reads at once: [0, this) holds
 * every field pyframes_chain reads of it. */
size_t pyframes_tstate_span(const struct py_layout *l);
/* The span of a frame pyframes_chain reads at once, every field it reads
 * of a frame within it; a layout whose span is over PYFRAMES_FRAME_READ_MAX
 * (one read from DWARF may be) reads no frame, and pystack_new refuses it. */
#define PYFRAMES_FRAME_READ_MAX 128u
size_t pyframes_frame_span(const struct py_layout *l);
/* The span of a code object's header: [0, this) holds its type, names,
 * first line and line table pointers (what says it is still the code
 * object a cache knew at its address). */
size_t pyframes_code_span(const struct py_layout *l);

/* What the code object CODE is. */
struct py_code {
	char qualname[PYFRAMES_MAX_STRING];  /* UTF-8, raw (writers escape) */
	char filename[PYFRAMES_MAX_STRING];
	int first_line;
};

/* The fields of a code object's header (pyframes_code_span bytes read at
 * its address: the copy BYTES). */
struct py_code_header {
	uint64_t type, qualname, filename, linetable;
	int32_t first_line;
};
void pyframes_code_header(const struct py_layout *l, const uint8_t *bytes,
			  struct py_code_header *out);

/* Read code object CODE into OUT (its header into *HEADER) and its line
 * table into *TABLE (malloc'd, *LEN bytes, at most PYFRAMES_MAX_LINETABLE;
 * NULL when it cannot be read: no line). 0, or -1 if CODE is not a
 * readable code object. */
int pyframes_code_table(const struct py_layout *l, pyframes_read_fn read, void *ctx, uint64_t code,
			struct py_code *out, struct py_code_header *header, uint8_t **table,
			size_t *len);

/* The line of a frame at UNIT (py_frame's) of a code object whose first
 * line is FIRST_LINE and line table TABLE (LEN bytes), as pylinetable
 * reads the layout's kind of table. */
int pyframes_line(const struct py_layout *l, const uint8_t *table, size_t len, int first_line,
		  uint32_t unit);

/* Read code object CODE into OUT, and the line of its code unit UNIT into
 * *LINE (a line, or pylinetable's PYLINE_NONE or PYLINE_BAD). 0, or -1 if
 * CODE is not a readable code object. */
int pyframes_code(const struct py_layout *l, pyframes_read_fn read, void *ctx, uint64_t code,
		  uint32_t unit, struct py_code *out, int *line);

#endif
