/* unwind_go: Go's stacks as Go's own traceback walks them (see
 * unwind_internal.h): at a stop, the goroutine a thread on its system
 * stack or in the vDSO works for is copied with the snapshot (gostack.h's
 * capture, behind runtime.h's table); the walk ends where Go's traceback
 * ends and crosses to that goroutine's stack where Go's does (uw_go_frame,
 * uw_go_fp_cross). Every value read from the target is checked before
 * use. */
#include "config.h"

#include <string.h>

#include "address.h"
#include "unwind_internal.h"

/* What the stop read of the walk's thread (gostack.h), or nothing (a copy
 * the kernel made). */
static const struct go_capture *go_of(const struct unwind_ctx *c)
{
	static const struct go_capture none;
	const struct go_capture *g = c->s->runtime[RUNTIME_GO];
	return g ? g : &none;
}

/* From now on the walk reads the goroutine's stack copied with the
 * snapshot (gostack's capture) instead of the window. */
static void go_walk_goroutine(struct unwind_ctx *c)
{
	const struct go_capture *g = go_of(c);
	c->crossed = true;
	c->win = g->stack;
	c->win_start = g->sp;
	c->win_len = g->stack_len;
	c->stack_end = g->stack_end;
	c->red_zone_live = false;
	c->window_cut = g->sp + g->stack_len < g->stack_end;
}

/* The walk goes from the stack in use to the goroutine's copy of S
 * (gostack's fp) at the frame pointer RBP, which points into
 * it; true if it did. */
bool uw_go_fp_cross(struct unwind_ctx *c, uint64_t rbp)
{
	const struct go_capture *g = go_of(c);
	if (!g->fp || c->crossed || rbp < g->sp || rbp >= g->stack_end)
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
	const struct go_capture *g = go_of(c);
	*end = UNWIND_BAD_FRAME;
	if (!g->base_pc || !uw_module_for_ip(c, g->base_pc - 1))
		return UW_GO_FAILED;
	*end = UNWIND_DEPTH;
	if (*n == limit)
		return UW_GO_FAILED;
	addrs[(*n)++] = g->base_pc;
	uint64_t pc = g->base_pc, sp = g->base_sp;
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

/* The walk's cursor starts afresh at PC, SP and BP (the thread's TLS base
 * kept, every other register unknown): true if it did. */
static bool go_restart_at(struct unwind_ctx *c, unw_cursor_t *cur, uint64_t pc, uint64_t sp,
			  uint64_t bp)
{
	memset(&c->regs, 0, sizeof c->regs);
	c->regs.rip = pc;
	c->regs.rsp = sp;
	c->regs.rbp = bp;
	c->regs.fs_base = c->s->regs.fs_base;
	return unw_init_remote(cur, c->u->as, c) >= 0;
}

/* The walk's leaf is the first instruction of Go's signal handler: the
 * kernel has just delivered a signal (our interrupt's stop came on the
 * way back to user code: a ptraced thread's signal is handed to the tracer
 * first, and it reaches the handler while the stop is due), and the
 * handler has run nothing. The thread was where the signal frame says
 * (gostack's capture): that place takes the leaf's (ADDRS[N - 1]), exact
 * (no call before it), and the walk goes on from there on the copy of
 * that stack. Left at the handler, such a stop was cut there (gochan, a
 * cgo build, 999 Hz: 99 of 4,035 stacks, [truncated];runtime.cgoSigtramp). */
static enum uw_go_step go_signal_entry(struct unwind_ctx *c, unw_cursor_t *cur, uint64_t *addrs,
				       unsigned *n)
{
	const struct go_capture *g = go_of(c);
	if (*n == 0 || !uw_module_for_ip(c, g->pc))
		return UW_GO_FAILED;
	go_walk_goroutine(c);
	addrs[*n - 1] = g->pc | ADDR_ACTIVATION;
	c->u->walk_sp[*n - 1] = g->sp;
	c->leaf_rsp = g->sp;
	c->leaf_rip = g->pc;
	return go_restart_at(c, cur, g->pc, g->sp, g->bp) ? UW_GO_CROSSED : UW_GO_FAILED;
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
 * copy of its stack (gostack's capture), the frames this added stored in
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
	const struct go_capture *g = go_of(c);
	if (gm->kind == GO_SIGNAL) {
		*end = UNWIND_BAD_FRAME;
		return leaf && lookup == gm->start && g->signal ? go_signal_entry(c, cur, addrs, n)
								 : UW_GO_FAILED;
	}
	if (gm->kind == GO_MCALL) {
		/* (interrupted in mcall itself, maybe before its switch to
		 * the system stack: without g0's base, the walk goes on as
		 * it can) */
		enum uw_go_step step = go_system_base(c, addrs, n, limit, end);
		return step == UW_GO_FAILED && leaf ? UW_GO_NONE : step;
	}
	if (leaf || c->crossed)
		return UW_GO_NONE;
	/* the goroutine that grew its stack there was descheduled since
	 * (newstack -> gopreempt_m -> schedule): the system stack begins
	 * afresh at morestack, as at mcall */
	if (g->g0_alone)
		return go_system_base(c, addrs, n, limit, end);
	if (!g->switched)
		return UW_GO_NONE;
	/* the goroutine's stack: from its saved sp, where the caller of
	 * systemstack (or of the function that called morestack) left its
	 * return address; rbp as it was there */
	go_walk_goroutine(c);
	*end = UNWIND_BAD_FRAME;
	uint64_t ret;
	if (!uw_read_target(c, g->sp, &ret, sizeof ret) || ret == 0 || ret >= ADDR_ACTIVATION ||
	    !uw_module_for_ip(c, ret - 1))
		return UW_GO_FAILED;
	/* morestack was called from the prologue of the function at the
	 * saved pc, which has no frame yet: a frame of its own */
	*end = UNWIND_DEPTH;
	if (gm->kind == GO_MORESTACK && uw_module_for_ip(c, g->pc - 1)) {
		if (*n == limit)
			return UW_GO_FAILED;
		addrs[(*n)++] = g->pc;
	}
	if (*n == limit)
		return UW_GO_FAILED;
	addrs[(*n)++] = ret;
	*end = UNWIND_BAD_FRAME;
	return go_restart_at(c, cur, ret, g->sp + 8, g->bp) ? UW_GO_CROSSED : UW_GO_FAILED;
}

