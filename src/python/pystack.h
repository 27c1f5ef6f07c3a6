/* pystack: a CPython process's Python frames at each stop, spliced into
 * its native stacks (issue 33).
 *
 * Found from a module's ELF symbols (pystack_symbols: _PyRuntime, in a
 * static python3.x or a libpython3.x); checked once against what the
 * interpreter holds (pystack_new: its Py_Version names a version whose
 * layout is known, from 3.13 the one it publishes (pydebug), and its code
 * type names itself "code"), or off with the reason said (pystack_status).
 *
 * While a thread is stopped, pystack_capture reads its chain of interpreter
 * frames (pyframes) with few reads of the target: its thread state (found
 * once by tid and kept), the frame stack chunk the interpreter keeps its
 * frames in, in one read, and every code object's header in one more (a
 * code object is named when it is first seen, or when the header read at
 * its address is not the one named there: it was freed and another made
 * in its place). Each frame becomes one address, addr_python(id) of the
 * process's pynames (named at the sample: the code object may be freed
 * before the profile is built). After the thread resumes, pystack_splice
 * puts them where the native stack has the evaluation loop that ran them:
 * each _PyEval_EvalFrameDefault frame gives way to the Python frames it
 * runs, down to the next entry frame (where C entered the loop again).
 * A chain that loops, leaves readable memory or is deeper than the
 * capture's room ends with the frame PYSTACK_CUT_NAME. Never allocates
 * once every code object sampled is named. */
#ifndef CSAMPLER_PYSTACK_H
#define CSAMPLER_PYSTACK_H
#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pyframes.h"
#include "pynames.h"
#include "runtime.h"

#define PYSTACK_MAX_FRAMES 512          /* Python frames read per sample */
#define PYSTACK_CUT_NAME "[python: frames cut]"

/* What a module's symbols say of the interpreter in it (addresses in the
 * target: the module's load BIAS added). */
struct pystack_symbols {
	uint64_t runtime;               /* _PyRuntime (2.7, 3.6: interp_head) */
	uint64_t version;               /* Py_Version (3.11+), 0 if none */
	unsigned name_major, name_minor; /* the version its file's name says, 0.0
	                                 * if none (pystack_name_version) */
	uint64_t code_type;             /* PyCode_Type */
	uint64_t eval_start, eval_end;  /* _PyEval_EvalFrameDefault (2.7:
	                                 * PyEval_EvalFrameEx) */
	/* a file not named for Python (a program that embeds it), before
	 * 3.11: its .bss, which holds Py_GetVersion's text once the
	 * interpreter started (pystack_version_text); else 0 */
	uint64_t bss_start;
	size_t bss_len;
};
/* The interpreter's symbols in the symbol table SYM or dynamic table DYN
 * of ELF; false unless it has _PyRuntime (or interp_head, a local symbol:
 * the symbol table only) and the evaluation loop. */
bool pystack_symbols(Elf *elf, Elf_Scn *sym, Elf_Scn *dyn, uint64_t bias,
		     struct pystack_symbols *out);
/* Whether the file at PATH may hold a CPython interpreter by its name: a
 * static python3.x or python2.x, a libpython3.x or libpython2.x. */
bool pystack_may_be_python(const char *path);
/* Whether a module (ELF, its symbol table SYM and dynamic table DYN,
 * loaded at BIAS, from PATH) holds a CPython interpreter: its symbols
 * (the whole symbol table only of a file named for Python) and the
 * version its file's name says into OUT. */
bool pystack_find(Elf *elf, Elf_Scn *sym, Elf_Scn *dyn, uint64_t bias, const char *path,
		  struct pystack_symbols *out);

/* The version in the text Py_GetVersion made ("3.8.18 (default, ...",
 * at the start of a string) among LEN bytes at BUF: false unless every
 * such text there names the same MAJOR.MINOR (2.7, or 3.x). Before 3.11
 * an interpreter a program embeds has no Py_Version, and this text, in
 * its .bss once the interpreter started, is what says its version. */
bool pystack_version_text(const uint8_t *buf, size_t len, unsigned *major, unsigned *minor);

/* The version a file's PATH names (python3.8, libpython3.6m.so.1.0,
 * libpython2.7.so): false if none. Before 3.11 the interpreter has no
 * Py_Version, and its file's name is what says its version. */
bool pystack_name_version(const char *path, unsigned *major, unsigned *minor);

enum pystack_status {
	PYSTACK_ON,
	PYSTACK_OLD,                    /* before 3.11 (no Py_Version) in a file
	                                 * whose name does not say its version */
	PYSTACK_UNKNOWN_VERSION,        /* a version csampler has no layout of */
	PYSTACK_MISMATCH,               /* the layout does not fit what it holds */
	PYSTACK_FREE_THREADED,          /* a build without the GIL (3.13t+) */
};

/* Where the layout a pystack reads with came from. */
enum pystack_layout_source {
	PYSTACK_LAYOUT_TABLE,           /* csampler's table of its version */
	PYSTACK_LAYOUT_DWARF,           /* its debug information */
	PYSTACK_LAYOUT_INTERPRETER,     /* the offsets it publishes (3.13+) */
};

struct pystack;
struct py_layout;

/* Process PID's interpreter at SYMS, its frames named in NAMES (which
 * must outlive it), laid out as it publishes (3.13+), else as LAYOUT says
 * (its debug information's: pydwarf.h) when that is of its version, else
 * (LAYOUT NULL) as csampler's table of its version does. *STATUS says whether its frames can be read; NULL unless
 * PYSTACK_ON (or out of memory). *MAJOR, *MINOR: its version, when read. */
struct pystack *pystack_new(pid_t pid, const struct pystack_symbols *syms,
			    const struct py_layout *layout, struct pynames *names,
			    enum pystack_status *status, unsigned *major, unsigned *minor);
/* pystack_new's, the target's memory read through READ (CTX) instead of a
 * process's: for the tests and the fuzz harness (fuzz_pystack), which
 * give it a memory image. */
struct pystack *pystack_new_reader(pyframes_read_fn read, void *ctx,
				   const struct pystack_symbols *syms, const struct py_layout *layout,
				   struct pynames *names, enum pystack_status *status,
				   unsigned *major, unsigned *minor);
/* pystack_new of the interpreter pystack_find found in ELF, with its own
 * debug information's layout where csampler's table of 3.11 or 3.12 does
 * not fit (its DWARF, else its debug file by build-id, opened by
 * OPEN_FILE(CTX, PATH) as the target sees it: a descriptor or -1). */
struct pystack *pystack_open(pid_t pid, const struct pystack_symbols *syms, Elf *elf,
			     int (*open_file)(void *ctx, const char *path), void *ctx,
			     struct pynames *names, enum pystack_status *status, unsigned *major,
			     unsigned *minor);
void pystack_free(struct pystack *ps);
enum pystack_layout_source pystack_layout_source(const struct pystack *ps);
/* Thread TID ended (or is no longer followed): what was kept of it goes.
 * What is kept of a thread (its thread state) is found by its tid
 * exactly, at most 65536 threads at once. */
void pystack_forget_thread(struct pystack *ps, pid_t tid);
/* The evaluation loop's code: [*START, *END). */
void pystack_eval_range(const struct pystack *ps, uint64_t *start, uint64_t *end);

/* What a capture read of a thread: its Python frames, innermost first (at
 * most PYSTACK_MAX_FRAMES), for the splice once it runs again. Opaque: a
 * snapshot holds one (pystack_frames_new), and reads it through
 * pystack_frames_run. */
struct pystack_frames;
struct pystack_frames *pystack_frames_new(void);
void pystack_frames_free(struct pystack_frames *f);
/* None read (a snapshot of a thread of no CPython). F may be NULL (a
 * snapshot the perf backend fills, which never captures): none. */
void pystack_frames_clear(struct pystack_frames *f);
unsigned pystack_frames_count(const struct pystack_frames *f);

/* Stopped thread TID's Python frames into OUT: each an addr_python id,
 * whether C entered the loop there, and (of an entry, 3.12+) where the
 * loop that ran it keeps its own frame in its C stack frame; their
 * number, 0 when the thread runs no Python. STACK (LEN bytes from
 * STACK_START) is the thread's stack as just copied: a read it covers is
 * not made again. */
unsigned pystack_capture(struct pystack *ps, pid_t tid, const uint8_t *stack, uint64_t stack_start,
			 size_t len, struct pystack_frames *out);

/* NATIVE[N] (a walk, leaf first; NATIVE_SP[N] each frame's stack pointer,
 * or NULL) with each evaluation loop frame replaced by the Python frames
 * PY[NPY] it ran: those from the next one not yet placed through the next
 * ENTRY one. The loop's frame is the one whose stack frame [its sp, its
 * caller's) holds that entry's LOOP address (3.12+: a build's hot and
 * cold parts of the loop alike, named or not), else (no LOOP, no
 * NATIVE_SP, or a LOOP outside the walk's stack) the one whose lookup pc
 * is in [EVAL_START, EVAL_END). Python frames left when the native walk
 * ends are put at its end only if it was cut (WALK_CUT): else they are not
 * the stack's. At most MAX into OUT (*FULL: some were left out); the
 * number written. */
struct pystack_run {
	const uint64_t *addrs;          /* PY */
	const bool *entry;
	const uint64_t *loop;           /* or NULL */
	unsigned n;                     /* NPY */
};
/* F's frames as pystack_splice takes them (valid while F is unchanged). */
struct pystack_run pystack_frames_run(const struct pystack_frames *f);
unsigned pystack_splice(const uint64_t *native, const uint64_t *native_sp, unsigned n,
			const struct pystack_run *py, uint64_t eval_start, uint64_t eval_end,
			bool walk_cut, uint64_t *out, unsigned max, bool *full);

#endif
