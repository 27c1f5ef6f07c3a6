/* unwind_internal: what unwind's files share (not an interface: unwind.h
 * is). unwind.c reads the target's memory through a page cache, gives
 * libunwind its accessors and walks the stack; unwind_tables.c finds the
 * module of an address, its .eh_frame_hdr search table and its Go marks;
 * unwind_fp.c steps where there is no CFI; unwind_runtimes.c gives each
 * runtime (runtime.h) its turn; unwind_go.c walks Go as Go's
 * traceback does. Each function is documented where it is defined or
 * declared here. */
#ifndef CSAMPLER_UNWIND_INTERNAL_H
#define CSAMPLER_UNWIND_INTERNAL_H
#include <libunwind.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gostack.h"
#include "procmaps.h"
#include "runtimes.h"
#include "tidmap.h"
#include "unwind.h"

#define PAGE_SIZE_CACHED 4096u
#define PAGE_CACHE_SLOTS 1024u              /* 4 MiB of immutable pages */
#define RS_CACHE_SIZE 16384                 /* libunwind's register-state cache */
#define EH_FRAME_HDR_MAX (64u << 20)        /* refuse larger .eh_frame_hdr */
#define MODULES_MAX 4096u
#define REFRESH_INTERVAL_NS 50000000ull     /* at most one maps reread per 50 ms */
#define FP_FRAME_MAX (1u << 20)             /* a frame-pointer step spans at most 1 MiB */

/* One executable mapping with what find_proc_info needs. */
struct module {
	/* key: the mapping */
	uint64_t map_start, map_end, map_offset, inode;
	unsigned dev_major, dev_minor;
	bool has_table;          /* false: no usable CFI table (no info) */
	uint64_t text_start, text_end;   /* the executable PT_LOAD, in the target */
	uint64_t hdr_addr;       /* .eh_frame_hdr in the target (table base) */
	uint64_t table_addr;     /* its binary-search table in the target */
	size_t nfde;
	int32_t *table;          /* nfde pairs (start offset, fde offset) */
	uint64_t *funcs;         /* without a table: its functions' starts (the
	                          * symbol table's, in the target), sorted */
	size_t nfuncs;
	struct go_mark *go_marks;   /* a Go binary's functions where a walk */
	size_t ngo_marks;           /* ends or changes stacks, in the target */
};

/* A Go function that Go's own traceback treats apart (runtime/traceback.go):
 * the outermost function of a stack (TOPFRAME: goexit, mstart), the signal
 * handler's entry (sigtramp, cgoSigtramp; TOPFRAME too: the code it
 * interrupted is not followed through the signal frame, so a stack that
 * reaches it is cut, unless stopped at its first instruction, where the
 * frame is read: unwind_go.c's go_signal_entry),
 * mcall (which starts the system stack afresh at its base), or one that runs its
 * callee on the system stack for a goroutine (systemstack) or that left a
 * goroutine to grow its stack (morestack). */
enum go_mark_kind { GO_ROOT, GO_SIGNAL, GO_MCALL, GO_SYSTEMSTACK, GO_MORESTACK };
struct go_mark {
	uint64_t start, end;
	enum go_mark_kind kind;
};

struct unwinder {
	struct procmaps *pm;
	unsigned max_depth;
	size_t window;           /* a stack copy's most: unwind_set_window */
	unw_addr_space_t as;
	uint64_t generation;     /* of pm when the caches were last valid */
	uint64_t last_refresh_ns;

	struct module *modules;
	size_t nmodules, modules_cap;
	size_t last_module;

	bool go_marked;          /* a module has Go marks: walks look for them */
	/* each runtime's (runtime.h, by kind): its table (NULL: not read),
	 * what its open found, and its state while threads are read */
	struct {
		const struct runtime_ops *ops;
		struct runtime_found found;
		void *state;
	} runtimes[RUNTIME_KINDS];
	uint64_t *walk_native;   /* max_depth: a walk before a splice */
	uint64_t *walk_sp;       /* max_depth: each frame's stack pointer in it */

	uint64_t *page_tags;     /* page address + 1 (0: empty) */
	uint8_t *pages;          /* PAGE_CACHE_SLOTS * PAGE_SIZE_CACHED */
};

/* The state of one unwind_stack call, libunwind's "arg". */
struct unwind_ctx {
	struct unwinder *u;
	const struct unwind_snapshot *s;
	struct user_regs_struct regs;    /* registers of the cursor's first frame */
	uint64_t leaf_rsp, leaf_rip;     /* where the walk's leaf stood: the
	                                  * snapshot's, or where Go's signal frame
	                                  * says the thread was (unwind_go.c) */
	const uint8_t *win;              /* the copy of the stack walked: the */
	uint64_t win_start;              /* window, or the goroutine's stack */
	size_t win_len;                  /* once the walk crossed to it */
	bool crossed;                    /* (to a goroutine's stack: once a walk) */
	bool switched;                   /* this step crossed: sp may fall */
	uint64_t stack_end;              /* end of the mapping holding the stack */
	bool red_zone_live;              /* the red zone under win_start is
	                                  * the thread's stack's, not copied */
	bool window_cut;                 /* the stack goes on beyond the copy */
	const uint8_t *vdso;
	uint64_t vdso_start;
	size_t vdso_len;
	bool refreshed;                  /* procmaps_refresh already tried */
	bool window_hit;                 /* needed stack beyond the copy */
	bool no_info;                    /* the last find_proc_info found no CFI */
	bool rbp_known;                  /* sp/pc-only snapshot: rbp was found since */
};

uint64_t uw_monotonic_ns(void);
void uw_module_free(struct module *m);
struct module *uw_module_for_ip(struct unwind_ctx *c, uint64_t ip);
/* The module of mapping E (current, executable), building it if new. */
struct module *uw_module_for_entry(struct unwind_ctx *c, const struct procmaps_entry *e);
/* An address in no known mapping: read U's mappings again, at most every
 * REFRESH_INTERVAL_NS; true if any mapping was found new. */
bool uw_reread_maps(struct unwinder *u);
/* Whether module M was built for mapping E (same range and file). */
bool uw_module_matches(const struct module *m, const struct procmaps_entry *e);
/* The start of the function holding IP in a module without CFI (from its
 * symbol table: Go's binaries have no .eh_frame), or 0. */
uint64_t uw_function_start(struct unwind_ctx *c, uint64_t ip);
/* unwind_fp.c. The register REG the cursor stands on, or false. */
bool uw_cursor_reg(unw_cursor_t *cur, unw_regnum_t reg, uint64_t *val);
/* unw_step failed at CUR: step by a found frame record or the rbp chain
 * instead (AT_SNAPSHOT: the cursor stands on the captured registers).
 * true: CUR stands on the caller, at *IP and *SP; false: the walk ends
 * with *END. */
bool uw_step_without_cfi(struct unwind_ctx *c, unw_cursor_t *cur, bool at_snapshot,
			 uint64_t *ip, uint64_t *sp, enum unwind_result *end);
/* unwind_fp.c: the snapshot stands on a new thread's first instructions,
 * the child side of a clone wrapper before its jump to the start code
 * (rax 0): it has no caller, its walk is whole. */
bool uw_at_thread_start(struct unwind_ctx *c);
/* unwind_fp.c: scan up from SP for the frame record [caller's rbp, return
 * address just past a direct call of START]; on success the context
 * registers are the caller's. */
bool uw_frame_record_scan(struct unwind_ctx *c, uint64_t sp, uint64_t start);
/* unwind_fp.c: the first slot at or above *SP (at most SPAN bytes up)
 * holding a return address just past a direct call of START (or of a stub
 * that jumps to it): the address into *RET, *SP moved past the slot;
 * false if none. */
bool uw_find_return_to(struct unwind_ctx *c, uint64_t *sp, uint64_t span, uint64_t start,
		       uint64_t *ret);
/* unwind_runtimes.c. Each runtime's object in snapshot S (WINDOW: its
 * stack copies' size): false out of memory (unwind_snapshot_fini frees). */
bool uw_snapshot_runtimes_new(struct unwind_snapshot *s, size_t window);
void uw_snapshot_runtimes_free(struct unwind_snapshot *s);
/* Close every runtime U opened and forget what it found (an exec). */
void uw_forget_runtimes(struct unwinder *u);
/* Whether PATH may hold a runtime U reads and has not found yet. */
bool uw_runtime_library(const struct unwinder *u, const char *path);
/* What each runtime found reads of stopped thread TID into S (copied). */
void uw_capture_runtimes(struct unwinder *u, pid_t tid, struct unwind_snapshot *s);
/* The walk ADDRS[*DEPTH] (ended with RESULT) with what each runtime read
 * into S put in place (at most MAX in all); the walk's result. */
enum unwind_result uw_splice_runtimes(struct unwinder *u, const struct unwind_snapshot *s,
				      uint64_t *addrs, unsigned max, unsigned *depth,
				      enum unwind_result result);

/* The Go mark of the function holding IP, or NULL. */
const struct go_mark *uw_go_mark(struct unwind_ctx *c, uint64_t ip);

/* unwind.c: LEN bytes of process PID at ADDR (process_vm_readv); the
 * target's memory as of the walk's snapshot (LEN <= a page). */
bool uw_read_target(struct unwind_ctx *c, uint64_t addr, void *buf, size_t len);

/* The walk's step at a frame (see unwind_go.c). */
enum uw_go_step { UW_GO_NONE, UW_GO_END, UW_GO_CROSSED, UW_GO_FAILED };
enum uw_go_step uw_go_frame(struct unwind_ctx *c, unw_cursor_t *cur, uint64_t lookup, bool leaf,
			    uint64_t *addrs, unsigned *n, unsigned limit, enum unwind_result *end);
/* Whether the frame-pointer chain goes on at RBP in the goroutine's stack
 * (it then walks that copy). */
bool uw_go_fp_cross(struct unwind_ctx *c, uint64_t rbp);

#endif
