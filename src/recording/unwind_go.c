/* unwind_go: Go's stacks as Go's own traceback walks them (see
 * unwind_internal.h): at a stop, the goroutine a thread on its system
 * stack or in the vDSO works for is copied with the snapshot
 * (uw_capture_go); the walk ends where Go's traceback ends and crosses to
 * that goroutine's stack where Go's does (uw_go_frame, uw_go_fp_cross).
 * The runtime's layout is goruntime's; every value read from the target
 * is checked before use. */
#include "config.h"

#include <string.h>
#include <sys/uio.h>

#include "address.h"
#include "procfs.h"
#include "unwind_internal.h"

/* The largest goroutine stack believed (Go's limit is 1 GB). */
#define GO_STACK_MAX (1ull << 30)

/* Copy the goroutine stack [SP, min(HI, SP + S's window)) of TID into S. */
static bool copy_go_stack(pid_t tid, uint64_t sp, uint64_t hi, struct unwind_snapshot *s)
{
	if (sp == 0 || (sp & 7) != 0 || sp >= hi || hi - sp > GO_STACK_MAX)
		return false;
	size_t len = hi - sp < s->window ? (size_t)(hi - sp) : s->window;
	ssize_t n = procfs_read_memory(tid, sp, s->go_stack, len);
	if (n < 16)
		return false;
	s->go_stack_len = (size_t)n;
	s->go_stack_end = hi;
	return true;
}

/* S is a stopped thread's copy: if it runs Go (its g is at fs_base - 8,
 * its g's m has that thread's g0) and its walk will need a goroutine's
 * stack besides the one in use, copy it into S:
 *   - on the system stack (g is g0) while a goroutine of its m waits
 *     there (m.curg, whose m is this one, with a saved sp below its
 *     stack's end): that goroutine's saved registers and stack;
 *   - on a goroutine whose sp is off its stack while rbp is on it (a vDSO
 *     call runs on the system stack): that stack from rbp.
 * Nothing read is trusted: any value out of line leaves S without. */
void uw_capture_go(struct unwinder *u, pid_t tid, struct unwind_snapshot *s)
{
	s->go_switch = s->go_fp = s->go_g0_alone = false;
	s->go_stack_len = 0;
	s->go_base_pc = s->go_base_sp = 0;
	if (!u->go_known || s->regs.fs_base < 64)
		return;
	/* a thread seen before, stopped off its system stack and not in the
	 * vDSO, runs a goroutine on that goroutine's stack: nothing to read */
	bool made;
	struct go_thread none = { 0 }, *gt = tidrows_get(&u->go_threads, tid, true, &made);
	if (!gt)
		gt = &none;     /* (no room: read at each stop) */
	uint64_t vdso_start = 0, sp = s->regs.rsp, rip = s->regs.rip;
	size_t vdso_len = 0;
	(void)procmaps_vdso_image(u->pm, &vdso_len, &vdso_start);
	bool in_vdso = vdso_len && rip >= vdso_start && rip - vdso_start < vdso_len;
	if (gt->tid == tid && !in_vdso && (sp < gt->g0_lo || sp >= gt->g0_hi))
		return;
	const struct goruntime_layout *l = &u->go;
	uint64_t g, m, g0 = 0, curg = 0, lo, hi;
	uint8_t gb[GORUNTIME_G_READ];
	if (!procfs_read_memory_all(tid, s->regs.fs_base + (uint64_t)(int64_t)GORUNTIME_TLS_G, &g, sizeof g) ||
	    g == 0 || g + GORUNTIME_G_READ < g || !procfs_read_memory_all(tid, g, gb, sizeof gb))
		return;
	memcpy(&m, gb + l->g_m, 8);
	memcpy(&lo, gb + l->g_stack_lo, 8);
	memcpy(&hi, gb + l->g_stack_hi, 8);
	if (m == 0 || m + l->m_curg + 8 < m)
		return;
	uint64_t vdso_sp = 0;
	struct iovec local[3] = { { &g0, sizeof g0 }, { &curg, sizeof curg },
				  { &vdso_sp, sizeof vdso_sp } };
	struct iovec remote[3] = { { (void *)(uintptr_t)(m + l->m_g0), 8 },
				   { (void *)(uintptr_t)(m + l->m_curg), 8 },
				   { (void *)(uintptr_t)(m + l->m_vdso_sp), 8 } };
	int nv = l->m_vdso_sp && m + l->m_vdso_sp + 8 > m ? 3 : 2;
	if (process_vm_readv(tid, local, (unsigned long)nv, remote, (unsigned long)nv, 0) != 8 * nv)
		return;
	/* remember its system stack: g's if it is g0, else g0's (read once) */
	uint64_t g0_stack[2] = { lo, hi };
	if (g0 != 0 && (g == g0 || (gt->tid != tid && g0 + l->g_stack_hi + 8 > g0 &&
				    procfs_read_memory_all(tid, g0 + l->g_stack_lo, &g0_stack[0], 8) &&
				    procfs_read_memory_all(tid, g0 + l->g_stack_hi, &g0_stack[1], 8))))
		*gt = (struct go_thread){ .tid = tid, .g0_lo = g0_stack[0], .g0_hi = g0_stack[1] };
	if (g != g0) {
		/* off its stack: in a vDSO call (vdsoSP: its sp at the call;
		 * the caller's frame record lies just under it) */
		uint64_t from = vdso_sp >= lo && vdso_sp < hi ? vdso_sp - (vdso_sp - lo < 256 ? vdso_sp - lo : 256) : lo;
		if (g0 != 0 && lo < hi && (sp < lo || sp >= hi) && copy_go_stack(tid, from, hi, s)) {
			s->go_sp = s->go_bp = from;
			s->go_pc = 0;
			s->go_fp = true;
		}
		return;
	}
	s->go_g0_alone = curg == 0;
	uint64_t base_pc, base_sp;
	memcpy(&base_pc, gb + l->g_sched_pc, 8);
	memcpy(&base_sp, gb + l->g_sched_sp, 8);
	if (base_pc != 0 && base_sp > sp && base_sp < hi && (base_sp & 7) == 0) {
		s->go_base_pc = base_pc;
		s->go_base_sp = base_sp;
	}
	uint8_t cg[GORUNTIME_G_READ];
	if (curg == 0 || curg == g0 || curg + GORUNTIME_G_READ < curg ||
	    !procfs_read_memory_all(tid, curg, cg, sizeof cg))
		return;
	uint64_t cm, gsp, gpc, gbp, ghi;
	memcpy(&cm, cg + l->g_m, 8);
	memcpy(&gsp, cg + l->g_sched_sp, 8);
	memcpy(&gpc, cg + l->g_sched_pc, 8);
	memcpy(&gbp, cg + l->g_sched_bp, 8);
	memcpy(&ghi, cg + l->g_stack_hi, 8);
	if (cm != m || gpc == 0 || !copy_go_stack(tid, gsp, ghi, s))
		return;
	s->go_sp = gsp;
	s->go_pc = gpc;
	s->go_bp = gbp;
	s->go_switch = true;
}

/* From now on the walk reads the goroutine's stack copied with the
 * snapshot (uw_capture_go) instead of the window. */
static void go_walk_goroutine(struct unwind_ctx *c)
{
	const struct unwind_snapshot *s = c->s;
	c->crossed = true;
	c->win = s->go_stack;
	c->win_start = s->go_sp;
	c->win_len = s->go_stack_len;
	c->stack_end = s->go_stack_end;
	c->red_zone_live = false;
	c->window_cut = s->go_sp + s->go_stack_len < s->go_stack_end;
}

/* The walk goes from the stack in use to the goroutine's copy of S
 * (uw_capture_go's go_fp) at the frame pointer RBP, which points into
 * it; true if it did. */
bool uw_go_fp_cross(struct unwind_ctx *c, uint64_t rbp)
{
	const struct unwind_snapshot *s = c->s;
	if (!s->go_fp || c->crossed || rbp < s->go_sp || rbp >= s->go_stack_end)
		return false;
	go_walk_goroutine(c);
	c->switched = true;
	return true;
}

/* The walk reached mcall (or morestack with no goroutine to return to)
 * on the system stack, which they start afresh at g0's saved sp: the
 * frames above it are the thread's first, mstart0's (at g0's saved pc)
 * and its callers' to mstart (through an ABI wrapper), each return address
 * the first just past a direct call of the function above it (only these
 * call them; mstart's rbp is whatever the thread began with, so there is
 * no frame record to follow). Go's traceback ends at mcall; these frames
 * give the stack its root: UW_GO_END once mstart is reached. Without
 * them (g0's saved registers were not read: the perf backend's sample,
 * a runtime whose layout is unknown) the stack does not reach its root:
 * UW_GO_FAILED, cut (*END). */
#define GO_BASE_SPAN 1024u    /* mstart0's frame is a few words */
#define GO_BASE_FRAMES 4u     /* mstart0, its ABI wrapper, mstart */
static enum uw_go_step go_system_base(struct unwind_ctx *c, uint64_t *addrs, unsigned *n,
				      unsigned limit, enum unwind_result *end)
{
	const struct unwind_snapshot *s = c->s;
	*end = UNWIND_BAD_FRAME;
	if (!s->go_base_pc || !uw_module_for_ip(c, s->go_base_pc - 1))
		return UW_GO_FAILED;
	*end = UNWIND_DEPTH;
	if (*n == limit)
		return UW_GO_FAILED;
	addrs[(*n)++] = s->go_base_pc;
	uint64_t pc = s->go_base_pc, sp = s->go_base_sp;
	for (unsigned i = 0; i < GO_BASE_FRAMES; i++) {
		if (*n == limit) {
			*end = UNWIND_DEPTH;
			return UW_GO_FAILED;
		}
		uint64_t start = uw_function_start(c, pc - 1);
		if (!start || !uw_find_return_to(c, &sp, GO_BASE_SPAN, start, &pc))
			break;
		addrs[(*n)++] = pc;
		const struct go_mark *gm = uw_go_mark(c, pc - 1);
		if (gm && gm->kind == GO_ROOT)
			return UW_GO_END;
	}
	*end = UNWIND_BAD_FRAME;
	return UW_GO_FAILED;
}

/* Where the walk meets a function Go's own traceback treats apart: the
 * frame just stored, whose function holds LOOKUP (its ip, or ip - 1 for a
 * return address); LEAF: the interrupted frame. UW_GO_END: the stack is whole
 * there (Go's traceback ends there too: goexit, mstart; at mcall, after
 * the frames of the system stack's base: go_system_base); at sigtramp it
 * is cut (UW_GO_FAILED: the goroutine the signal interrupted is not
 * followed; Go's traceback ends there, but the summary must not call it
 * whole).
 * UW_GO_CROSSED: the frame was systemstack's or morestack's on the system
 * stack, and the walk goes on from the goroutine's saved registers on the
 * copy of its stack (uw_capture_go), the frames this added stored in
 * ADDRS. UW_GO_FAILED: that crossing found nothing it could use (*END says
 * why). UW_GO_NONE: neither; the walk goes on as it was. */
enum uw_go_step uw_go_frame(struct unwind_ctx *c, unw_cursor_t *cur, uint64_t lookup, bool leaf,
			     uint64_t *addrs, unsigned *n, unsigned limit, enum unwind_result *end)
{
	const struct go_mark *gm = uw_go_mark(c, lookup);
	if (!gm)
		return UW_GO_NONE;
	if (gm->kind == GO_ROOT)
		return UW_GO_END;
	if (gm->kind == GO_SIGNAL) {
		*end = UNWIND_BAD_FRAME;
		return UW_GO_FAILED;
	}
	const struct unwind_snapshot *s = c->s;
	if (gm->kind == GO_MCALL) {
		/* (interrupted in mcall itself, maybe before its switch to
		 * the system stack: without g0's base, the walk goes on as
		 * it can) */
		enum uw_go_step g = go_system_base(c, addrs, n, limit, end);
		return g == UW_GO_FAILED && leaf ? UW_GO_NONE : g;
	}
	if (leaf || c->crossed)
		return UW_GO_NONE;
	/* the goroutine that grew its stack there was descheduled since
	 * (newstack -> gopreempt_m -> schedule): the system stack begins
	 * afresh at morestack, as at mcall */
	if (s->go_g0_alone)
		return go_system_base(c, addrs, n, limit, end);
	if (!s->go_switch)
		return UW_GO_NONE;
	/* the goroutine's stack: from its saved sp, where the caller of
	 * systemstack (or of the function that called morestack) left its
	 * return address; rbp as it was there */
	go_walk_goroutine(c);
	*end = UNWIND_BAD_FRAME;
	uint64_t ret;
	if (!uw_read_target(c, s->go_sp, &ret, sizeof ret) || ret == 0 || ret >= ADDR_ACTIVATION ||
	    !uw_module_for_ip(c, ret - 1))
		return UW_GO_FAILED;
	/* morestack was called from the prologue of the function at the
	 * saved pc, which has no frame yet: a frame of its own */
	*end = UNWIND_DEPTH;
	if (gm->kind == GO_MORESTACK && uw_module_for_ip(c, s->go_pc - 1)) {
		if (*n == limit)
			return UW_GO_FAILED;
		addrs[(*n)++] = s->go_pc;
	}
	if (*n == limit)
		return UW_GO_FAILED;
	addrs[(*n)++] = ret;
	memset(&c->regs, 0, sizeof c->regs);
	c->regs.rip = ret;
	c->regs.rsp = s->go_sp + 8;
	c->regs.rbp = s->go_bp;
	c->regs.fs_base = s->regs.fs_base;
	*end = UNWIND_BAD_FRAME;
	if (unw_init_remote(cur, c->u->as, c) < 0)
		return UW_GO_FAILED;
	return UW_GO_CROSSED;
}

