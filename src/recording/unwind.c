/* unwind: see unwind.h.
 *
 * libunwind does the DWARF work; we give it our own accessors (an address
 * space per process, UNW_CACHE_GLOBAL) so that it never touches ptrace:
 *   - access_reg: the registers of the snapshot (or the registers an own
 *     frame-pointer step produced, see below);
 *   - access_mem: the copied stack window first; a read past the window into
 *     the stack mapping fails and marks the result UNWIND_WINDOW (the live
 *     stack has moved on since the copy); the vdso from its copied image;
 *     pages of read-only file-backed mappings from a page cache filled with
 *     process_vm_readv (they do not change while mapped); anything else with
 *     process_vm_readv directly;
 *   - find_proc_info: per module (one executable file-backed mapping, or the
 *     vdso) we read the program headers with libelf through the descriptor
 *     procmaps keeps, locate PT_GNU_EH_FRAME and compute the load bias from
 *     the mapping and its PT_LOAD (correct for lld's non-page-aligned
 *     p_offset), check the .eh_frame_hdr encodings ourselves (libunwind
 *     aborts on a table not encoded datarel|sdata4) and keep a copy of the
 *     binary-search table. A lookup finds the entry locally and hands
 *     libunwind a one-entry remote table, so dwarf_search_unwind_table only
 *     parses that FDE.
 * Where a frame has no CFI, find_proc_info says so through the context
 * instead of returning -UNW_ENOINFO (libunwind's own fallback guesses and can
 * report a broken chain as complete); we then follow the frame-pointer chain
 * one frame (bounded, strictly increasing, inside the stack mapping; a zero
 * rbp ends the chain as the ABI prescribes) and restart libunwind from the
 * registers that step recovered. For the interrupted frame alone, a
 * frameless leaf without CFI (a JIT stub) is stepped through [rsp] when that
 * holds an address just past a call. Those steps are unwind_fp.c's. Go's stacks (no CFI, several stacks
 * per thread) are walked as Go's traceback walks them: unwind_go.c.
 * libunwind 1.6.2 costs two rt_sigprocmask calls per frame (the lock of its
 * global register-state cache); everything else here is user space once the
 * caches are warm. */
#include "config.h"

#include <errno.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/uio.h>
#include <time.h>

#include "address.h"
#include "intern.h"
#include "procfs.h"
#include "unwind_internal.h"

/* libunwind exports the remote-table search but no header declares it. */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
					       unw_dyn_info_t *di, unw_proc_info_t *pi,
					       int need_unwind_info, void *arg);

uint64_t uw_monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- target memory ----------------------------------------------------- */

/* Pages that cannot change while mapped: read-only views of files. */
static bool entry_is_immutable(const struct procmaps_entry *e)
{
	return e->current && e->readable && !e->writable && !e->shared &&
	       (e->inode != 0 || (e->path && e->path[0] == '/'));
}

static size_t page_slot(uint64_t page)
{
	return (size_t)(hash_u64(page / PAGE_SIZE_CACHED) % PAGE_CACHE_SLOTS);
}

/* The cached copy of the immutable page at PAGE, filling it if needed; NULL
 * if the page is not immutable or cannot be read. */
static const uint8_t *cached_page(struct unwind_ctx *c, uint64_t page)
{
	struct unwinder *u = c->u;
	size_t slot = page_slot(page);
	uint8_t *data = u->pages + slot * PAGE_SIZE_CACHED;
	if (u->page_tags[slot] == page + 1)
		return data;
	const struct procmaps_entry *e = procmaps_find(u->pm, page);
	if (!e || page < e->start || page + PAGE_SIZE_CACHED > e->end || !entry_is_immutable(e))
		return NULL;
	/* from the process; else, for a file's code, from the file: a sample
	 * the kernel took (--backend=perf) is unwound after the fact, when the
	 * process may have exec'd or exited */
	int fd;
	if (!procfs_read_memory_all(c->s->tid, page, data, PAGE_SIZE_CACHED) &&
	    ((fd = procmaps_open_file(u->pm, e)) < 0 ||
	     pread(fd, data, PAGE_SIZE_CACHED, (off_t)(e->offset + (page - e->start))) !=
		     PAGE_SIZE_CACHED)) {
		u->page_tags[slot] = 0;
		return NULL;
	}
	u->page_tags[slot] = page + 1;
	return data;
}

/* Read LEN bytes (LEN <= a page) of the target at ADDR as of the snapshot. */
bool uw_read_target(struct unwind_ctx *c, uint64_t addr, void *buf, size_t len)
{
	const struct unwind_snapshot *s = c->s;
	if (addr + len < addr)
		return false;
	/* the copied stack window */
	uint64_t copy_end = c->win_start + c->win_len;
	if (addr >= c->win_start && addr + len <= copy_end) {
		memcpy(buf, c->win + (addr - c->win_start), len);
		return true;
	}
	if (addr + len > copy_end && addr < c->stack_end && addr >= c->win_start) {
		/* beyond the copy, inside the stack: the live stack has changed */
		if (c->window_cut)
			c->window_hit = true;
		return false;
	}
	/* the red zone under sp, not in the copy (the kernel's starts at sp):
	 * what the thread has written there since (further down the same
	 * mapping may lie another stack: a Go thread's, in a heap arena) */
	if (addr < c->win_start && addr + len > c->win_start - UNWIND_RED_ZONE && c->red_zone_live)
		return false;
	/* the vdso, from its image */
	if (c->vdso && addr >= c->vdso_start && addr + len <= c->vdso_start + c->vdso_len) {
		memcpy(buf, c->vdso + (addr - c->vdso_start), len);
		return true;
	}
	/* immutable pages through the cache */
	uint64_t page = addr & ~(uint64_t)(PAGE_SIZE_CACHED - 1);
	if (addr + len <= page + PAGE_SIZE_CACHED) {
		const uint8_t *p = cached_page(c, page);
		if (p) {
			memcpy(buf, p + (addr - page), len);
			return true;
		}
	} else {
		size_t first = (size_t)(page + PAGE_SIZE_CACHED - addr);
		const uint8_t *p = cached_page(c, page);
		const uint8_t *q = p ? cached_page(c, page + PAGE_SIZE_CACHED) : NULL;
		if (p && q) {
			memcpy(buf, p + (addr - page), first);
			memcpy((uint8_t *)buf + first, q, len - first);
			return true;
		}
	}
	return procfs_read_memory_all(s->tid, addr, buf, len);
}

/* ---- libunwind accessors ------------------------------------------------- */

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
			  int need_unwind_info, void *arg)
{
	struct unwind_ctx *c = arg;
	c->no_info = false;
	struct module *m = uw_module_for_ip(c, ip);
	if (!m)
		return -UNW_EINVALIDIP;
	if (!m->has_table || ip < m->text_start || ip >= m->text_end) {
		c->no_info = true;
		return -UNW_ESTOPUNWIND;
	}
	int64_t rel = (int64_t)(ip - m->hdr_addr);
	if (rel < INT32_MIN || rel > INT32_MAX) {
		c->no_info = true;
		return -UNW_ESTOPUNWIND;
	}
	/* the last entry whose start <= rel */
	size_t lo = 0, hi = m->nfde;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if ((int64_t)m->table[2 * mid] <= rel)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0) {
		c->no_info = true;
		return -UNW_ESTOPUNWIND;
	}
	unw_dyn_info_t di;
	memset(&di, 0, sizeof di);
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.start_ip = m->text_start;
	di.end_ip = m->text_end;
	di.u.rti.segbase = m->hdr_addr;
	di.u.rti.table_data = m->table_addr + (lo - 1) * 8;
	di.u.rti.table_len = 8 / sizeof(unw_word_t);
	int ret = UNW_OBJ(dwarf_search_unwind_table)(as, ip, &di, pi, need_unwind_info, arg);
	if (ret == -UNW_ENOINFO || ret == -UNW_EINVAL) {
		/* ip is past the end of the FDE found: a gap without CFI (libunwind
		 * says EINVAL for some: node's V8 builtins, embedded in its text
		 * without CFI, stopped 95% of the stacks as bad frames) */
		c->no_info = true;
		return -UNW_ESTOPUNWIND;
	}
	return ret;
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
	(void)as, (void)pi, (void)arg;
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *addr, void *arg)
{
	(void)as, (void)addr, (void)arg;
	return -UNW_ENOINFO;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *valp, int write,
		      void *arg)
{
	(void)as;
	if (write)
		return -UNW_EREADONLYREG;
	return uw_read_target(arg, addr, valp, sizeof *valp) ? 0 : -UNW_EINVAL;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *valp, int write,
		      void *arg)
{
	(void)as;
	const struct unwind_ctx *c = arg;
	const struct user_regs_struct *r = &c->regs;
	if (write)
		return -UNW_EREADONLYREG;
	/* a snapshot of a blocked thread knows sp and pc only (and rbp once
	 * found_frame_record_step found it) */
	if (c->s->sp_pc_only && reg != UNW_X86_64_RSP && reg != UNW_X86_64_RIP &&
	    !(reg == UNW_X86_64_RBP && c->rbp_known))
		return -UNW_EBADREG;
	switch (reg) {
	case UNW_X86_64_RAX: *valp = r->rax; break;
	case UNW_X86_64_RDX: *valp = r->rdx; break;
	case UNW_X86_64_RCX: *valp = r->rcx; break;
	case UNW_X86_64_RBX: *valp = r->rbx; break;
	case UNW_X86_64_RSI: *valp = r->rsi; break;
	case UNW_X86_64_RDI: *valp = r->rdi; break;
	case UNW_X86_64_RBP: *valp = r->rbp; break;
	case UNW_X86_64_RSP: *valp = r->rsp; break;
	case UNW_X86_64_R8: *valp = r->r8; break;
	case UNW_X86_64_R9: *valp = r->r9; break;
	case UNW_X86_64_R10: *valp = r->r10; break;
	case UNW_X86_64_R11: *valp = r->r11; break;
	case UNW_X86_64_R12: *valp = r->r12; break;
	case UNW_X86_64_R13: *valp = r->r13; break;
	case UNW_X86_64_R14: *valp = r->r14; break;
	case UNW_X86_64_R15: *valp = r->r15; break;
	case UNW_X86_64_RIP: *valp = r->rip; break;
	default: return -UNW_EBADREG;
	}
	return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write,
			void *arg)
{
	(void)as, (void)reg, (void)val, (void)write, (void)arg;
	return -UNW_EBADREG;
}

static int resume(unw_addr_space_t as, unw_cursor_t *cursor, void *arg)
{
	(void)as, (void)cursor, (void)arg;
	return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len,
			 unw_word_t *offp, void *arg)
{
	(void)as, (void)addr, (void)buf, (void)len, (void)offp, (void)arg;
	return -UNW_ENOINFO;
}

/* ---- public API ------------------------------------------------------------ */

/* Read the program's own code module now (its first executable mapping
 * of a file), before any stop: what a stop must know of it (the runtimes
 * in it: a Go runtime's layout) is then known at the first. */
static void load_program_module(struct unwinder *u)
{
	struct unwind_ctx c = { .u = u, .stack_end = UINT64_MAX };
	size_t n = procmaps_count(u->pm);
	bool program = false;
	for (size_t i = 0; i < n; i++) {
		const struct procmaps_entry *e = procmaps_at(u->pm, i);
		if (!e || !e->current || !e->executable || !e->path || e->path[0] != '/')
			continue;
		/* and a runtime's library (libpython3.x), which a stop reads */
		if (!program || uw_runtime_library(u, e->path))
			(void)uw_module_for_entry(&c, e);
		program = true;
	}
}

struct unwinder *unwind_new(struct procmaps *pm, unsigned max_depth, bool python)
{
	if (!pm || max_depth == 0) {
		errno = EINVAL;
		return NULL;
	}
	if (elf_version(EV_CURRENT) == EV_NONE) {
		errno = ENOSYS;
		return NULL;
	}
	struct unwinder *u = calloc(1, sizeof *u);
	if (!u)
		return NULL;
	u->pm = pm;
	u->max_depth = max_depth;
	for (unsigned k = 0; k < RUNTIME_KINDS; k++)
		if (k != RUNTIME_PYTHON || python)
			u->runtimes[k].ops = runtime_ops_of(k);
	u->page_tags = calloc(PAGE_CACHE_SLOTS, sizeof *u->page_tags);
	u->pages = malloc((size_t)PAGE_CACHE_SLOTS * PAGE_SIZE_CACHED);
	u->walk_native = malloc(max_depth * sizeof *u->walk_native);
	u->walk_sp = malloc(max_depth * sizeof *u->walk_sp);
	unw_accessors_t accessors = {   /* copied by unw_create_addr_space */
		.find_proc_info = find_proc_info,
		.put_unwind_info = put_unwind_info,
		.get_dyn_info_list_addr = get_dyn_info_list_addr,
		.access_mem = access_mem,
		.access_reg = access_reg,
		.access_fpreg = access_fpreg,
		.resume = resume,
		.get_proc_name = get_proc_name,
	};
	if (u->page_tags && u->pages && u->walk_native && u->walk_sp)
		u->as = unw_create_addr_space(&accessors, 0);
	if (!u->as) {
		free(u->walk_native);
		free(u->walk_sp);
		free(u->page_tags);
		free(u->pages);
		free(u);
		errno = ENOMEM;
		return NULL;
	}
	unw_set_caching_policy(u->as, UNW_CACHE_GLOBAL);
	unw_set_cache_size(u->as, RS_CACHE_SIZE, 0);
	u->generation = procmaps_generation(pm);
	load_program_module(u);
	return u;
}

void unwind_free(struct unwinder *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->nmodules; i++)
		uw_module_free(&u->modules[i]);
	free(u->modules);
	unw_destroy_addr_space(u->as);
	uw_forget_runtimes(u);
	free(u->walk_native);
	free(u->walk_sp);
	free(u->page_tags);
	free(u->pages);
	free(u);
}

void unwind_flush(struct unwinder *u)
{
	unw_flush_cache(u->as, 0, 0);
	for (size_t i = 0; i < u->nmodules; i++)
		uw_module_free(&u->modules[i]);
	u->nmodules = 0;
	u->last_module = 0;
	memset(u->page_tags, 0, PAGE_CACHE_SLOTS * sizeof *u->page_tags);
	u->generation = procmaps_generation(u->pm);
	u->go_marked = false;   /* (an exec: another program) */
	uw_forget_runtimes(u);
	load_program_module(u);
}

/* The mappings changed (a library loaded or unloaded, memory mapped): keep
 * the modules whose mapping is still there, the same file at the same
 * place, and drop the others with every cached page and libunwind's caches
 * (a table is built once per mapping: a process that maps memory all the
 * time must not rebuild them all each time). */
static void drop_changed_modules(struct unwinder *u)
{
	size_t kept = 0;
	for (size_t i = 0; i < u->nmodules; i++) {
		struct module *m = &u->modules[i];
		const struct procmaps_entry *e = procmaps_find(u->pm, m->map_start);
		if (e && e->current && uw_module_matches(m, e))
			u->modules[kept++] = *m;
		else
			uw_module_free(m);
	}
	if (kept != u->nmodules) {
		unw_flush_cache(u->as, 0, 0);
		memset(u->page_tags, 0, PAGE_CACHE_SLOTS * sizeof *u->page_tags);
	}
	u->nmodules = kept;
	u->last_module = 0;
	u->generation = procmaps_generation(u->pm);
}

int unwind_snapshot_init(struct unwind_snapshot *s, size_t window)
{
	memset(s, 0, sizeof *s);
	if (window == 0) {
		errno = EINVAL;
		return -1;
	}
	s->stack_mem = malloc(UNWIND_RED_ZONE + window);
	s->stack = s->stack_mem ? s->stack_mem + UNWIND_RED_ZONE : NULL;
	if (!s->stack || !uw_snapshot_runtimes_new(s, window)) {
		unwind_snapshot_fini(s);
		return -1;
	}
	s->stack_cap = s->window = window;
	return 0;
}

void unwind_snapshot_fini(struct unwind_snapshot *s)
{
	free(s->stack_mem);
	uw_snapshot_runtimes_free(s);
	memset(s, 0, sizeof *s);
}

/* Copy the stack window from SP into S (the registers are set). */
static int copy_stack(struct unwinder *u, pid_t tid, uint64_t sp, struct unwind_snapshot *s)
{
	s->tid = tid;
	s->stack_start = sp;
	s->stack_len = 0;
	s->window_cut = 0;
	s->stack_in_use = 0;
	s->kernel_copy = false;
	s->window = u->window && u->window < s->stack_cap ? u->window : s->stack_cap;
	size_t len = s->window;
	const struct procmaps_entry *e = procmaps_find(u->pm, sp);
	bool known = e && e->current && sp >= e->start && sp < e->end;
	/* a thread made since the mappings were read has its stack in a
	 * mapping not known yet: read them again, or the copy runs past the
	 * stack's end and the walk cannot tell where the stack ends */
	if (!known && uw_reread_maps(u)) {
		e = procmaps_find(u->pm, sp);
		known = e && e->current && sp >= e->start && sp < e->end;
	}
	s->stack_in_use = known && e->end - sp <= SIZE_MAX ? (size_t)(e->end - sp) : 0;
	if (known && e->end - sp < len)
		len = (size_t)(e->end - sp);
	/* (one not known ends where the next known mapping starts, at the
	 * latest: read past it, a walk took the code above, a library's, for
	 * its live stack, and new threads' stacks just below one were cut) */
	uint64_t next = known ? 0 : procmaps_next_start(u->pm, sp);
	bool whole = next > sp && next - sp <= len;
	if (whole)
		len = (size_t)(next - sp);
	if (sp + len < sp)
		len = (size_t)(UINT64_MAX - sp);
	/* with the red zone under sp, where it is in the stack's mapping: one
	 * read (reading it after the thread runs on gave the walk what the
	 * thread wrote there since: a return address 0, a stack "complete"
	 * two frames deep) */
	size_t below = known && sp - e->start >= UNWIND_RED_ZONE ? UNWIND_RED_ZONE : 0;
	ssize_t n = procfs_read_memory(tid, sp - below, s->stack - below, below + len);
	if (n < 0) {
		if (errno != EFAULT)
			return -1;
		n = 0;       /* a bad stack pointer: the leaf alone, then a bad frame */
	}
	if ((size_t)n < below)
		below = 0, n = 0;
	s->stack_below = below;
	s->stack_len = (size_t)n - below;
	/* an unknown mapping read in full, not up to a known one, may go on */
	s->window_cut = known ? e->end - sp > s->window : !whole && (size_t)n == s->window;
	return 0;
}

size_t unwind_window_limit(size_t window)
{
	return window > UNWIND_WINDOW_GROWN ? window : UNWIND_WINDOW_GROWN;
}

void unwind_set_window(struct unwinder *u, size_t window)
{
	u->window = window;
}

size_t unwind_widen(struct unwinder *u, const struct unwind_snapshot *s)
{
	/* (a stack in a mapping not known, a thread's made since they were
	 * read, is read a whole window anyway: its cut says nothing of depth) */
	if (!u->window || !s->window_cut || s->kernel_copy || s->window != u->window ||
	    u->window >= s->stack_cap || s->stack_in_use <= s->window)
		return u->window;
	/* at once to what the stack in use takes, where its mapping says and
	 * that fits (a goroutine's stack lies in a heap mapping, whose end
	 * is no stack's: one step) */
	size_t w = u->window;
	do
		w = w <= s->stack_cap / 2 ? 2 * w : s->stack_cap;
	while (w < s->stack_in_use && s->stack_in_use <= s->stack_cap);
	u->window = w;
	return w;
}

int unwind_capture(struct unwinder *u, pid_t tid, const struct user_regs_struct *regs,
		   struct unwind_snapshot *s)
{
	s->regs = *regs;
	s->sp_pc_only = false;
	if (copy_stack(u, tid, regs->rsp, s) < 0)
		return -1;
	uw_capture_runtimes(u, tid, s);
	return 0;
}

int unwind_capture_sp_pc(struct unwinder *u, pid_t tid, uint64_t sp, uint64_t pc,
			 struct unwind_snapshot *s)
{
	memset(&s->regs, 0, sizeof s->regs);
	s->regs.rsp = sp;
	s->regs.rip = pc;
	s->sp_pc_only = true;
	if (copy_stack(u, tid, sp, s) < 0)
		return -1;
	uw_capture_runtimes(u, tid, s);
	return 0;
}

/* The walk's context for snapshot S: the end of the mapping that holds the
 * stack (or of the copy, when the copy is all there is), the vdso image. */
static void ctx_init(struct unwind_ctx *c, struct unwinder *u, const struct unwind_snapshot *s)
{
	*c = (struct unwind_ctx){ .u = u, .s = s, .regs = s->regs, .stack_end = UINT64_MAX,
				  .leaf_rsp = s->regs.rsp, .leaf_rip = s->regs.rip,
				  .win = s->stack - s->stack_below,
				  .win_start = s->stack_start - s->stack_below,
				  .win_len = s->stack_below + s->stack_len };
	const struct procmaps_entry *se = procmaps_find(u->pm, s->stack_start);
	if (se && se->current && s->stack_start >= se->start && s->stack_start < se->end)
		c->stack_end = se->end;
	else if (!s->window_cut)
		c->stack_end = s->stack_start + s->stack_len;
	else
		c->stack_end = procmaps_next_start(u->pm, s->stack_start);
	c->red_zone_live = s->stack_below == 0;
	c->window_cut = s->window_cut ||
			(s->kernel_copy && s->stack_start + s->stack_len < c->stack_end);
	c->vdso = procmaps_vdso_image(u->pm, &c->vdso_len, &c->vdso_start);
}

/* Whether a step from (PREV_IP, PREV_SP) to (IP, SP) reached a real caller:
 * the stack pointer grows, except where a signal frame switches stacks
 * (sigaltstack), and a return address points just past a call in
 * executable code. */
static bool plausible_caller(struct unwind_ctx *c, uint64_t ip, uint64_t sp, uint64_t prev_ip,
			     uint64_t prev_sp, bool signal_frame, bool switched)
{
	if (ip >= ADDR_ACTIVATION || (!signal_frame && !switched && sp <= prev_sp) ||
	    (ip == prev_ip && sp == prev_sp))
		return false;
	return uw_module_for_ip(c, signal_frame ? ip : ip - 1) != NULL;
}

/* Append frame ADDR, whose stack pointer is SP, to the walk ADDRS[*N]
 * (below the unwinder's max_depth). Its sp is kept for a runtime's splice
 * (a process running Python crosses to no goroutine, whose frames the Go
 * steps add without one). */
static void walk_put(struct unwinder *u, uint64_t *addrs, unsigned *n, uint64_t addr, uint64_t sp)
{
	u->walk_sp[*n] = sp;
	addrs[(*n)++] = addr;
}

enum unwind_result unwind_stack(struct unwinder *u, const struct unwind_snapshot *s,
				uint64_t *addrs, unsigned max, unsigned *depth)
{
	*depth = 0;
	unsigned limit = max < u->max_depth ? max : u->max_depth;
	if (limit == 0)
		return UNWIND_DEPTH;
	if (procmaps_generation(u->pm) != u->generation)
		drop_changed_modules(u);
	struct unwind_ctx c;
	ctx_init(&c, u, s);
	unsigned n = 0;
	walk_put(u, addrs, &n, s->regs.rip | ADDR_ACTIVATION, s->regs.rsp);
	unw_cursor_t cur;
	if (s->regs.rip == 0 || s->regs.rip >= ADDR_ACTIVATION || unw_init_remote(&cur, u->as, &c) < 0) {
		*depth = n;
		return UNWIND_BAD_FRAME;
	}
	enum unwind_result result = UNWIND_DEPTH;
	bool at_snapshot = true;      /* the cursor stands on the captured registers */
	enum uw_go_step leaf = u->go_marked ? uw_go_frame(&c, &cur, s->regs.rip, true, addrs, &n,
							  limit, &result)
					    : UW_GO_NONE;
	if (leaf == UW_GO_END || leaf == UW_GO_FAILED) {
		*depth = n;
		return leaf == UW_GO_END ? UNWIND_OK : result;
	}
	uint64_t prev_ip = c.regs.rip, prev_sp = c.regs.rsp;   /* (or go_signal_entry's) */
	/* every iteration stores a frame or ends: at most limit + 1 steps */
	for (;;) {
		c.window_hit = false;
		c.no_info = false;
		c.switched = false;
		int ret = unw_step(&cur);
		uint64_t ip, sp;
		/* After a step, libunwind 1.6's unw_is_signal_frame tells whether
		 * the frame stepped from (addrs[n - 1]) was a signal frame. */
		bool signal_frame = ret > 0 && unw_is_signal_frame(&cur) > 0;
		if (signal_frame) /* resumes at its exact address: no call before it */
			addrs[n - 1] |= ADDR_ACTIVATION;
		if (ret == 0) {
			result = UNWIND_OK;
			break;
		}
		if (ret < 0) {
			if (!uw_step_without_cfi(&c, &cur, at_snapshot, &ip, &sp, &result))
				break;
		} else if (!uw_cursor_reg(&cur, UNW_REG_IP, &ip) || !uw_cursor_reg(&cur, UNW_REG_SP, &sp)) {
			result = UNWIND_BAD_FRAME;
			break;
		}
		if (ip == 0 || !plausible_caller(&c, ip, sp, prev_ip, prev_sp, signal_frame, c.switched)) {
			/* (libunwind's guess by rbp, where no CFI covers a new
			 * thread's first instructions: the rbp it was born with) */
			result = ip == 0 || (at_snapshot && uw_at_thread_start(&c)) ? UNWIND_OK
										     : UNWIND_BAD_FRAME;
			break;
		}
		if (n == limit) {
			result = UNWIND_DEPTH;
			break;
		}
		walk_put(u, addrs, &n, signal_frame ? ip | ADDR_ACTIVATION : ip, sp);
		at_snapshot = false;
		prev_ip = ip;
		prev_sp = sp;
		/* (a process with no Go code pays nothing for Go's marks) */
		enum uw_go_step g = !u->go_marked ? UW_GO_NONE :
				    uw_go_frame(&c, &cur, signal_frame ? ip : ip - 1, false, addrs,
						&n, limit, &result);
		if (g == UW_GO_END) {
			result = UNWIND_OK;
			break;
		}
		if (g == UW_GO_FAILED)
			break;
		if (g == UW_GO_CROSSED) {
			prev_ip = c.regs.rip;
			prev_sp = c.regs.rsp;
		}
	}
	*depth = n;
	return uw_splice_runtimes(u, s, addrs, max, depth, result);
}

/* The kernel's call chains hold context marks (PERF_CONTEXT_USER...): the
 * top 4095 values. */
#define FP_CHAIN_MARK ((uint64_t)-4095)

static uint64_t fp_chain_at(const struct unwind_snapshot *s, size_t i)
{
	uint64_t v;
	memcpy(&v, s->fp_chain + 8 * i, sizeof v);
	return v;
}

bool unwind_fp_continue(struct unwinder *u, const struct unwind_snapshot *s, uint64_t *addrs,
			unsigned *depth, unsigned max)
{
	size_t n = s->fp_chain_n;
	if (!s->fp_chain || n < 2 || *depth == 0 || !u->go_marked)
		return false;
	/* where the walk ended, in the chain: of the places that hold its
	 * last address (recursion repeats one), the nearest to its depth */
	uint64_t last = addr_value(addrs[*depth - 1]);
	size_t at = n, nearest = SIZE_MAX;
	for (size_t i = 0; i < n; i++) {
		size_t dist = i > *depth ? i - *depth : *depth - i;
		if (dist < nearest && fp_chain_at(s, i) == last) {
			at = i;
			nearest = dist;
		}
	}
	/* the frames after it, written past the walk's: kept only if each is
	 * code and the last is in a Go root */
	struct unwind_ctx c;
	ctx_init(&c, u, s);
	unsigned d = *depth;
	for (size_t i = at + 1; i < n; i++) {
		uint64_t ip = fp_chain_at(s, i);
		if (ip >= FP_CHAIN_MARK)
			continue;
		if (d == max || !uw_module_for_ip(&c, ip - 1))
			return false;
		addrs[d++] = ip;
	}
	const struct go_mark *root = d > *depth ? uw_go_mark(&c, addrs[d - 1] - 1) : NULL;
	if (!root || root->kind != GO_ROOT)
		return false;
	*depth = d;
	return true;
}

const char *unwind_result_name(enum unwind_result r)
{
	switch (r) {
	case UNWIND_OK: return "ok";
	case UNWIND_DEPTH: return "depth";
	case UNWIND_WINDOW: return "window";
	case UNWIND_NO_INFO: return "no-info";
	case UNWIND_BAD_FRAME: return "bad-frame";
	case UNWIND_NRESULTS: break;
	}
	return "unknown";
}
