/* unwind: remote unwinding of one process with libunwind (DWARF CFI).
 *
 * One unwinder per process (one libunwind address space, UNW_CACHE_GLOBAL).
 * The hot path is split so the target pauses only for the copy:
 *   1. while the thread is stopped: unwind_capture(regs) copies the stack
 *      window [sp, min(sp + window, end of stack mapping)) with one
 *      process_vm_readv into the snapshot (no allocation);
 *   2. after it resumes: unwind_stack walks the snapshot with our own
 *      accessors: registers and stack from the snapshot, other memory from a
 *      page cache of immutable file-backed/vdso pages, else process_vm_readv;
 *      find_proc_info from each module's .eh_frame_hdr; frame-pointer fallback
 *      where no CFI exists. Bounded by max_depth; never aborts on bad tables.
 * Addresses are stored as in address.h (activation bit on the leaf and on the
 * frame right after a signal frame). */
#ifndef CSAMPLER_UNWIND_H
#define CSAMPLER_UNWIND_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "procmaps.h"
#include "runtime.h"

enum unwind_result {
	UNWIND_OK = 0,           /* reached the outermost frame */
	UNWIND_DEPTH,            /* stopped at max_depth */
	UNWIND_WINDOW,           /* needed stack beyond the copied window */
	UNWIND_NO_INFO,          /* no CFI and frame-pointer fallback failed */
	UNWIND_BAD_FRAME,        /* invalid ip/sp, cycle, or unreadable memory */
	UNWIND_NRESULTS
};

struct unwind_snapshot {
	pid_t tid;
	struct user_regs_struct regs;
	uint64_t stack_start;    /* == regs.rsp */
	size_t stack_len;        /* bytes copied into stack */
	size_t stack_cap;        /* capacity of stack */
	size_t window;           /* the most this copy could take (<= stack_cap):
	                          * its unwinder's window (unwind_set_window) */
	size_t stack_in_use;     /* from sp to its stack mapping's end (0: not
	                          * known): what a whole copy takes */
	uint8_t *stack;
	/* bytes copied below stack_start, at stack - stack_below: the red zone
	 * under sp, where an epilogue's CFI still finds the registers it has
	 * popped (at its ret: the caller's rbp at sp - 8); 0 for the kernel's
	 * copy, which starts at sp */
	size_t stack_below;
	uint8_t *stack_mem;      /* what unwind_snapshot_init allocated */
	int window_cut;          /* the stack mapping extends beyond the window */
	bool kernel_copy;        /* --backend=perf: the kernel's copy, which ends
	                          * short of the window and of the stack's end at a
	                          * page not in memory (one the thread never
	                          * touched): a walk needing more is cut there */
	bool sp_pc_only;         /* of regs, only rsp and rip are known */
	/* --backend=perf: the kernel's user call chain of the same sample, by
	 * frame pointers (FP_CHAIN_N u64s, not aligned; context marks among
	 * them), for unwind_fp_continue; 0: none */
	const uint8_t *fp_chain;
	size_t fp_chain_n;
	/* The kernel's frames, innermost first (KERNEL_N u64s, not aligned, no
	 * marks), which the recorder puts above the user frames (address.h's
	 * kernel frames): --backend=perf's part of that chain, or (--idle) a
	 * blocked thread's from /proc/TID/stack; 0: none */
	const uint8_t *kernel_chain;
	size_t kernel_n;
	bool kernel_returns;     /* every one a return address (a blocked thread's,
	                          * from /proc/TID/stack); else the first is
	                          * where the CPU was */
	/* What each runtime (runtime.h, by kind) read of the thread at the
	 * stop: its own object (opaque here; a CPython thread's Python
	 * frames, which unwind_stack puts in place of the evaluation loop's),
	 * or NULL for a runtime with none. */
	void *runtime[RUNTIME_KINDS];
};

struct unwinder;

/* PM must outlive the unwinder. PYTHON: a CPython interpreter found in
 * the process has its Python frames read at each capture (runtime.h), or
 * (false) its stacks show the interpreter's C functions. NULL with errno
 * on failure. */
struct unwinder *unwind_new(struct procmaps *pm, unsigned max_depth, bool python);
void unwind_free(struct unwinder *u);

/* Allocate a snapshot buffer of WINDOW bytes (once, at warm-up). */
int unwind_snapshot_init(struct unwind_snapshot *s, size_t window);

/* A process's stack copies start at a window (--stack-window) and, where
 * one cut its stacks (deep recursion: a compiler), grow up to
 * UNWIND_WINDOW_GROWN, or the window if larger: unwind_window_limit, the
 * capacity a sampler's snapshots are made with (memory it touches only
 * where a stack is that deep; a native thread's copy ends at its stack's
 * end anyway). */
#define UNWIND_WINDOW_GROWN (1024u * 1024u)
/* The x86-64 ABI's red zone: the bytes under sp a function may use, copied
 * with the window (stack_below). */
#define UNWIND_RED_ZONE 128u
size_t unwind_window_limit(size_t window);
/* Copy at most WINDOW bytes of U's stacks (0, the default: a snapshot's
 * whole capacity, never widened). */
void unwind_set_window(struct unwinder *u, size_t window);
/* S, of U, was cut by its window (UNWIND_WINDOW): U's window doubles, up
 * to S's capacity, as often as the stack S had in use needs. Its window
 * now. */
size_t unwind_widen(struct unwinder *u, const struct unwind_snapshot *s);
void unwind_snapshot_fini(struct unwind_snapshot *s);

/* Copy the registers and the stack window of a stopped thread, and what
 * each runtime found in the process reads of it (runtime.h: a few reads;
 * a Go thread on its system stack, the goroutine's stack; a CPython
 * thread, its Python frames). 0 or -1/errno. */
int unwind_capture(struct unwinder *u, pid_t tid, const struct user_regs_struct *regs,
		   struct unwind_snapshot *s);

/* Copy the stack window of a thread that is not running, of which only the
 * stack pointer and program counter are known (a thread blocked in a system
 * call, from /proc/TID/syscall: see blocked.h). The walk then fails where a
 * frame's rule needs another register (a caller found only through rbp).
 * A CPython thread's Python frames are read too: it cannot run meanwhile. */
int unwind_capture_sp_pc(struct unwinder *u, pid_t tid, uint64_t sp, uint64_t pc,
			 struct unwind_snapshot *s);

/* Walk the snapshot; write up to max addresses (leaf first) to addrs, set
 * *depth. Returns the unwind_result. */
enum unwind_result unwind_stack(struct unwinder *u, const struct unwind_snapshot *s,
				uint64_t *addrs, unsigned max, unsigned *depth);

/* A walk of S (the kernel's copy) ended short of its root at ADDRS[*DEPTH
 * - 1]: where the kernel's frame-pointer chain of the same sample holds
 * that address and goes on to a Go root (goexit, mstart: Go keeps frame
 * pointers, and its chain crosses from the system stack to the goroutine,
 * which the kernel did not copy), its frames from there are added (up to
 * MAX in all) and true is returned: the stack is whole. Else *DEPTH and
 * the frames before it are unchanged (those past it may be written). */
bool unwind_fp_continue(struct unwinder *u, const struct unwind_snapshot *s, uint64_t *addrs,
			unsigned *depth, unsigned max);

/* Mappings changed (exec, dlopen, dlclose): drop cached unwind info and pages. */
void unwind_flush(struct unwinder *u);

/* Thread TID of U's process ended, or is no longer followed: what U kept
 * of it (a Go thread's system stack, a CPython thread's thread state) goes,
 * and its room is made again for another thread. */
void unwind_forget_thread(struct unwinder *u, pid_t tid);

/* Whether U found runtime KIND (runtime.h) in its process, and what it
 * found (*OUT: whether its state is read, its version); false while none
 * was found (or KIND is not read: --no-python). */
bool unwind_runtime(const struct unwinder *u, unsigned kind, struct runtime_found *out);

/* How many frames runtime KIND read into S at its capture (0: none, or a
 * copy the kernel made). */
unsigned unwind_snapshot_runtime_frames(const struct unwind_snapshot *s, unsigned kind);
/* S holds nothing any runtime read (a copy the kernel made, which no
 * runtime reads: the thread was not stopped). */
void unwind_snapshot_clear_runtimes(struct unwind_snapshot *s);

const char *unwind_result_name(enum unwind_result r);

#endif
