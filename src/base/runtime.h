/* runtime: the one table of calls through which csampler reads a language
 * runtime's own state beside a native stack (CPython's frames:
 * python/pyruntime.c; Go's goroutine stacks: recording/unwind_go.c).
 * The unwinder, the recorder, the symbolizer and --dump know a runtime
 * only through its table (recording/runtimes.h lists them, by kind):
 *   - find it in a module and check it at attach (open, once a process,
 *     from the modules whose file name may_hold says, else the program's);
 *   - read a thread's state while it is stopped (capture, into the
 *     snapshot's frames object of that runtime, opaque to all others);
 *   - put what it read into the native walk (splice, after the thread
 *     resumed; a runtime whose frames are native addresses has none);
 *   - name a frame (frame_name: a runtime frame is the address
 *     addr_runtime(kind, id) of the process's names table, named when
 *     sampled, kept past the process's end for the symbols);
 *   - print a --dump traceback as the runtime prints its own (traceback);
 *   - say what it found (describe), forget a thread, free.
 * Adding a runtime is a table in its own room and a row in runtimes.c;
 * doc/internals.md says how. */
#ifndef CSAMPLER_RUNTIME_H
#define CSAMPLER_RUNTIME_H
#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/user.h>

/* The runtimes, each with its table (runtimes.h: runtime_ops_of). */
enum runtime_kind { RUNTIME_PYTHON, RUNTIME_GO, RUNTIME_KINDS };

/* A module being loaded by the unwinder, as open sees it (the target's
 * addresses are the file's plus BIAS). */
struct runtime_module {
	pid_t pid;
	Elf *elf;
	Elf_Scn *sym, *dyn;             /* its symbol tables, or NULL */
	Elf_Scn *text;                  /* .text, at TEXT_ADDR (link-time), or NULL */
	uint64_t text_addr;
	Elf_Scn *go, *go_info;          /* .gopclntab, .go.buildinfo, or NULL */
	uint64_t bias;
	const char *path;               /* as the target maps it */
	bool program;                   /* the program's own code (the first module) */
	/* a file as the target sees it (its debug file): a descriptor or -1 */
	int (*open_file)(void *ctx, const char *path);
	/* the process's names table of runtime KIND (names_new's, made at the
	 * first call, kept past the process's end); NULL out of memory */
	void *(*names)(void *ctx, unsigned kind);
	void *ctx;                      /* (of both) */
};

/* What open found in a process, for describe (codes are the runtime's). */
struct runtime_found {
	bool found;                     /* the runtime is there (false: look on) */
	unsigned status;                /* why its state is or is not read */
	unsigned source;                /* where its layout came from */
	unsigned major, minor;          /* its version, 0.0 if not known */
};

/* A stopped thread as capture sees it: its registers, and its stack as
 * just copied (a read the copy covers is not made again). */
struct runtime_stop {
	pid_t tid;
	const struct user_regs_struct *regs;
	bool sp_pc_only;                /* only rsp and rip are known (blocked.h) */
	uint64_t vdso_start;            /* the vDSO's code in the target, 0 if none */
	size_t vdso_len;
	const uint8_t *stack;
	uint64_t stack_start;
	size_t stack_len;
};

/* A native walk as splice takes it: ADDRS[N] leaf first (address.h), SP[N]
 * each frame's stack pointer; CUT: the walk ended short of its root. */
struct runtime_walk {
	const uint64_t *addrs;
	const uint64_t *sp;
	unsigned n;
	bool cut;
};

/* A runtime frame's name. */
struct runtime_frame {
	const char *function;           /* as the runtime names it (raw bytes) */
	const char *file;               /* or NULL: no file (a mark) */
	int first_line, line;           /* 0: not known */
};

/* What describe asks the recorder to say. */
enum runtime_say {
	RUNTIME_SAY_NOTHING,
	RUNTIME_SAY_VERBOSE,            /* with -v, once a process */
	RUNTIME_SAY_ONCE,               /* once a run for each reason */
};

/* Writes S to OUT escaped for a terminal (--dump's; CTX its state). */
typedef void runtime_put_fn(void *ctx, FILE *out, const char *s);

struct runtime_ops {
	const char *name;               /* its frames' mapping is "[NAME]" */
	/* Whether the file at PATH may hold it by its name alone: read before
	 * any stop (NULL: only the program's own module is looked at). */
	bool (*may_hold)(const char *path);
	/* Module M: whether the runtime is in it (F->found; false: look at
	 * the next module), and its state for reading threads (NULL: not
	 * read, F says why). */
	void *(*open)(const struct runtime_module *m, struct runtime_found *f);
	void (*close)(void *rt);
	void (*forget_thread)(void *rt, pid_t tid);
	/* A snapshot's object of this runtime (NULL out of memory). */
	void *(*frames_new)(size_t window);
	void (*frames_free)(void *frames);
	/* Nothing read (a copy the kernel made: FRAMES may be NULL). */
	void (*frames_clear)(void *frames);
	unsigned (*frames_count)(const void *frames);
	/* Stopped thread T into FRAMES (cleared first): how many frames. */
	unsigned (*capture)(void *rt, const struct runtime_stop *t, void *frames);
	/* W with what FRAMES read in place: at most MAX into OUT (*FULL:
	 * some were left out); the number written. NULL: nothing to splice. */
	unsigned (*splice)(void *rt, const void *frames, const struct runtime_walk *w,
			   uint64_t *out, unsigned max, bool *full);
	/* The names table of a process (kept past its end) and frame ID of
	 * it (frame_name; false: no such frame). NULL: its frames are native addresses. */
	void *(*names_new)(void);
	void (*names_free)(void *names);
	bool (*frame_name)(const void *names, uint32_t id, struct runtime_frame *out);
	/* --dump: the frames F[N] (outermost first) as the runtime prints a
	 * traceback, strings through PUT. NULL: none. */
	void (*traceback)(FILE *out, const struct runtime_frame *f, size_t n, runtime_put_fn *put,
			  void *ctx);
	/* What to say of F (KERNEL_COPY: the perf backend's samples, which do
	 * not stop threads): the text after "process PID " into TEXT, and
	 * *REASON (< 32) the reason said once a run. */
	enum runtime_say (*describe)(const struct runtime_found *f, bool kernel_copy, unsigned *reason,
				     char *text, size_t len);
};

#endif
