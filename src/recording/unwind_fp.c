/* unwind_fp: the steps of a walk where libunwind has no CFI (see
 * unwind_internal.h): the frame-pointer chain (bounded, strictly up the
 * stack mapping; a zero rbp ends it), a frameless leaf's return address at
 * [rsp], and the frame record found under a function's return address
 * (code with frame pointers whose rbp is unknown or used for data: a
 * blocked thread read in place, Go's assembly). Every value read from the
 * target is checked before it is used. */
#include "config.h"

#include <string.h>

#include "address.h"
#include "unwind_internal.h"

/* Registers the cursor stands on. */
bool uw_cursor_reg(unw_cursor_t *cur, unw_regnum_t reg, uint64_t *val)
{
	unw_word_t w;
	if (unw_get_reg(cur, reg, &w) < 0)
		return false;
	*val = w;
	return true;
}

enum fp_step { FP_STEPPED, FP_END, FP_FAILED };

/* One frame-pointer step from the cursor's frame: [rbp] is the caller's rbp,
 * [rbp + 8] the return address. The frame must lie above sp inside the stack
 * mapping. A zero rbp is the end of the chain (the x86_64 ABI has the
 * outermost frame, e.g. ld.so's _start, clear it). On success the context
 * registers are the caller's. */
static enum fp_step frame_pointer_step(struct unwind_ctx *c, unw_cursor_t *cur)
{
	uint64_t sp, rbp;
	if (!uw_cursor_reg(cur, UNW_X86_64_RSP, &sp) || !uw_cursor_reg(cur, UNW_X86_64_RBP, &rbp))
		return FP_FAILED;
	if (rbp == 0)
		return FP_END;
	/* (a goroutine's stack may be in the very mapping of the system
	 * stack, Go's heap: the bounds below would not tell them apart) */
	if (!uw_go_fp_cross(c, rbp) && (rbp < sp || rbp - sp > FP_FRAME_MAX || rbp + 16 > c->stack_end))
		return FP_FAILED;
	if ((rbp & 7) != 0 || rbp + 16 < rbp)
		return FP_FAILED;
	uint64_t frame[2];
	if (!uw_read_target(c, rbp, frame, sizeof frame))
		return FP_FAILED;
	uint64_t caller_rbp = frame[0], ret = frame[1];
	if (ret == 0 || ret >= ADDR_ACTIVATION)
		return FP_FAILED;
	/* keep what the cursor knows of the callee-saved registers */
	uint64_t v;
	if (uw_cursor_reg(cur, UNW_X86_64_RBX, &v)) c->regs.rbx = v;
	if (uw_cursor_reg(cur, UNW_X86_64_R12, &v)) c->regs.r12 = v;
	if (uw_cursor_reg(cur, UNW_X86_64_R13, &v)) c->regs.r13 = v;
	if (uw_cursor_reg(cur, UNW_X86_64_R14, &v)) c->regs.r14 = v;
	if (uw_cursor_reg(cur, UNW_X86_64_R15, &v)) c->regs.r15 = v;
	c->regs.rip = ret;
	c->regs.rsp = rbp + 16;
	c->regs.rbp = caller_rbp;
	return FP_STEPPED;
}

/* Whether the instruction before RET is a call (the common encodings). */
static bool follows_call(struct unwind_ctx *c, uint64_t ret)
{
	uint8_t b[7];
	if (ret < sizeof b || !uw_read_target(c, ret - sizeof b, b, sizeof b))
		return false;
	/* b[6] is the byte at ret - 1 */
	return b[2] == 0xe8 ||                                   /* call rel32 */
	       (b[1] == 0xff && b[2] == 0x15) ||                /* call *disp32(%rip) */
	       (b[1] == 0xff && (b[2] & 0xf8) == 0x90) ||       /* call *disp32(%reg) */
	       (b[5] == 0xff && (b[6] & 0xf8) == 0xd0) ||       /* call *%reg */
	       (b[5] == 0xff && (b[6] & 0xf8) == 0x10) ||       /* call *(%reg) */
	       (b[4] == 0xff && (b[5] & 0xf8) == 0x50) ||       /* call *disp8(%reg) */
	       (b[3] == 0xff && b[4] == 0x54);                  /* call *disp8(%reg,sib) */
}

/* The interrupted frame has no CFI and no frame pointer: a frameless leaf
 * (a JIT stub, a syscall wrapper's uncovered bytes) keeps its return address
 * at [rsp]. Taken only if it points just past a call in executable code. */
static bool leaf_return_step(struct unwind_ctx *c)
{
	uint64_t sp = c->leaf_rsp, ret;
	if ((sp & 7) != 0 || !uw_read_target(c, sp, &ret, sizeof ret) || ret == 0 ||
	    ret >= ADDR_ACTIVATION || !uw_module_for_ip(c, ret - 1) || !follows_call(c, ret))
		return false;
	c->regs.rip = ret;
	c->regs.rsp = sp + 8;
	return true;
}

/* The target of the direct call (e8 rel32) before RET, or 0. */
static uint64_t direct_call_target(struct unwind_ctx *c, uint64_t ret)
{
	uint8_t b[5];
	if (ret < sizeof b || !uw_read_target(c, ret - sizeof b, b, sizeof b) || b[0] != 0xe8)
		return 0;
	int32_t rel;
	memcpy(&rel, b + 1, sizeof rel);
	return ret + (uint64_t)(int64_t)rel;
}

/* Whether the instruction before RET is a direct call of TARGET. */
static bool direct_call_of(struct unwind_ctx *c, uint64_t ret, uint64_t target)
{
	return target != 0 && direct_call_target(c, ret) == target;
}

/* A snapshot that knows sp and pc only, at a frame whose caller is found
 * through rbp (code with frame pointers): rbp is unknown, so find the
 * frame's record instead. Scanning up from the frame's sp, the first 8-byte
 * aligned slot R holding the caller's rbp (0, or above R on the same stack)
 * and at R + 8 a return address just past a direct call of this very
 * function is the frame's rbp. (Uninitialized locals hold stale records of
 * earlier calls; those were calls of other functions.) A function reached
 * otherwise (an indirect call, a tail call) ends the walk. On success the
 * context registers are the caller's, rbp included, which the rest of the
 * walk uses. */

static bool found_frame_record_step(struct unwind_ctx *c, unw_cursor_t *cur)
{
	uint64_t sp;
	unw_proc_info_t pi;
	if (!c->s->sp_pc_only || c->rbp_known || !uw_cursor_reg(cur, UNW_X86_64_RSP, &sp) ||
	    (sp & 7) != 0 || unw_get_proc_info(cur, &pi) < 0 || pi.start_ip == 0)
		return false;
	return uw_frame_record_scan(c, sp, pi.start_ip);
}

/* The interrupted leaf has no CFI and its rbp leads nowhere (code with
 * frame pointers that uses rbp for data meanwhile: Go's crypto assembly):
 * its prologue saved the caller's rbp under its return address, so find
 * that record as found_frame_record_step does, the function's start taken
 * from its module's symbol table. */
static bool leaf_record_step(struct unwind_ctx *c)
{
	uint64_t sp = c->leaf_rsp, start = uw_function_start(c, c->leaf_rip);
	return (sp & 7) == 0 && start != 0 && uw_frame_record_scan(c, sp, start);
}

static bool direct_call_into(struct unwind_ctx *c, uint64_t ret, uint64_t start);

/* The return address at SP, if it lies just past a direct call of the
 * function at START (or of its ABI stub): the context then stands on the
 * caller, rbp as it was. */
static bool return_at_sp_into(struct unwind_ctx *c, uint64_t sp, uint64_t start)
{
	uint64_t ret;
	if ((sp & 7) != 0 || !uw_read_target(c, sp, &ret, sizeof ret) || ret == 0 ||
	    ret >= ADDR_ACTIVATION || !uw_module_for_ip(c, ret - 1) || !direct_call_into(c, ret, start))
		return false;
	c->regs.rip = ret;
	c->regs.rsp = sp + 8;
	return true;
}

/* At the snapshot, the interrupted frame stands on the very first
 * instruction of its function (start known: a module without CFI): nothing
 * is pushed yet, its return address is at [sp] and rbp is still its
 * caller's. The frame-pointer step skipped the caller, or ended the walk as
 * whole where the caller had no record (the perf backend's sample of a page
 * fault at runtime.check's first fetch: rbp 0 in runtime.rt0_go). */
static bool entry_return_step(struct unwind_ctx *c, unw_cursor_t *cur)
{
	uint64_t sp, ip;
	return uw_cursor_reg(cur, UNW_X86_64_RSP, &sp) && uw_cursor_reg(cur, UNW_REG_IP, &ip) &&
	       ip != 0 && uw_function_start(c, ip) == ip && return_at_sp_into(c, sp, ip);
}

/* The cursor's frame, in a module without CFI whose function starts are
 * known (symbol table, Go's function table), found by its record as
 * frame_record_scan does. At the snapshot, a frameless function (Go's
 * system call wrappers: runtime.futex, runtime.epollwait) has its return
 * address at [sp], just past a direct call of it: that is its caller
 * (rbp still unknown there). The scan past it took a stale record of an
 * earlier call of the same function, often with a zero rbp, and the walk
 * ended there as if whole (an idle Go thread read in place:
 * runtime.futex; runtime.futexsleep, and no more). */
static bool frame_record_at_function(struct unwind_ctx *c, unw_cursor_t *cur, bool at_snapshot)
{
	uint64_t sp, ip;
	if (!uw_cursor_reg(cur, UNW_X86_64_RSP, &sp) || !uw_cursor_reg(cur, UNW_REG_IP, &ip) ||
	    (sp & 7) != 0 || ip == 0)
		return false;
	/* a caller's ip is a return address: its call is the byte before */
	uint64_t start = uw_function_start(c, at_snapshot ? ip : ip - 1);
	if (start == 0)
		return false;
	if (at_snapshot && return_at_sp_into(c, sp, start))
		return true;
	return uw_frame_record_scan(c, sp, start);
}

/* Whether the instruction before RET is a direct call of START, or of a
 * stub that jumps to START within its first bytes (Go's ABI wrappers:
 * runtime.mstart calls runtime.mstart0.abi0, which jumps to mstart0). */
static bool direct_call_into(struct unwind_ctx *c, uint64_t ret, uint64_t start)
{
	uint64_t target = direct_call_target(c, ret);
	if (target == 0)
		return false;
	if (target == start)
		return true;
	int32_t rel;
	uint8_t stub[32];
	if (!uw_module_for_ip(c, target) || !uw_read_target(c, target, stub, sizeof stub))
		return false;
	for (size_t i = 0; i + 5 <= sizeof stub; i++) {
		if (stub[i] != 0xe9)
			continue;
		memcpy(&rel, stub + i + 1, sizeof rel);
		if (target + i + 5 + (uint64_t)(int64_t)rel == start)
			return true;
	}
	return false;
}

bool uw_find_return_to(struct unwind_ctx *c, uint64_t *sp, uint64_t span, uint64_t start,
		       uint64_t *ret)
{
	uint64_t from = *sp;
	for (uint64_t r = from; r - from <= span && r + 8 > r && r + 8 <= c->stack_end; r += 8) {
		uint64_t v;
		if (!uw_read_target(c, r, &v, sizeof v))
			return false;
		if (v != 0 && v < ADDR_ACTIVATION && uw_module_for_ip(c, v - 1) &&
		    direct_call_into(c, v, start)) {
			*ret = v;
			*sp = r + 8;
			return true;
		}
	}
	return false;
}

bool uw_frame_record_scan(struct unwind_ctx *c, uint64_t sp, uint64_t start)
{
	for (uint64_t r = sp; r - sp <= FP_FRAME_MAX && r + 16 > r && r + 16 <= c->stack_end;
	     r += 8) {
		uint64_t frame[2];
		if (!uw_read_target(c, r, frame, sizeof frame))
			return false;
		uint64_t caller_rbp = frame[0], ret = frame[1];
		if (caller_rbp != 0 && (caller_rbp <= r || caller_rbp - r > FP_FRAME_MAX ||
					(caller_rbp & 7) != 0 || caller_rbp >= c->stack_end))
			continue;
		if (ret == 0 || ret >= ADDR_ACTIVATION || !uw_module_for_ip(c, ret - 1) ||
		    !direct_call_of(c, ret, start))
			continue;
		c->regs.rip = ret;
		c->regs.rsp = r + 16;
		c->regs.rbp = caller_rbp;
		c->rbp_known = true;
		return true;
	}
	return false;
}

/* The interrupted thread is a new one, not past its first instructions:
 * the child side of a clone or clone3 wrapper (glibc's: "syscall; test
 * %rax,%rax; jl error; jz thread_start"), whose CFI ended before the
 * syscall as the child's stack is fresh. rax 0 takes it to its start code,
 * whose CFI marks the outermost frame: it has no caller, and its stack is
 * whole (cut short, these were 6% of a thread-churn program's samples).
 * PC may stand on the test, the jl or the jz. */
bool uw_at_thread_start(struct unwind_ctx *c)
{
	uint8_t b[11 + 12];   /* PC at b[11] */
	uint64_t pc = c->s->regs.rip;
	if (c->s->sp_pc_only || c->leaf_rip != pc || c->s->regs.rax != 0 || pc < 11 ||
	    !uw_read_target(c, pc - 11, b, sizeof b))
		return false;
	/* how far before PC the syscall starts: PC on the test, on the jl,
	 * on the jz after a jl rel8, after a jl rel32 */
	static const unsigned back[] = { 2, 5, 7, 11 };
	for (size_t k = 0; k < sizeof back / sizeof *back; k++) {
		const uint8_t *at = b + 11 - back[k];
		if (at[0] != 0x0f || at[1] != 0x05 || at[2] != 0x48 || at[3] != 0x85 || at[4] != 0xc0)
			continue;
		at += 5;
		if (at[0] == 0x7c)                        /* jl rel8 */
			at += 2;
		else if (at[0] == 0x0f && at[1] == 0x8c)  /* jl rel32 */
			at += 6;
		else
			continue;
		/* (PC on the jz: the jl before it is the one that fits) */
		if (k >= 2 && at != b + 11)
			continue;
		if (at[0] == 0x74 || (at[0] == 0x0f && at[1] == 0x84))    /* jz */
			return true;
	}
	return false;
}

/* unw_step failed at CUR: step by a found frame record or the rbp chain
 * instead (AT_SNAPSHOT: the cursor stands on the captured registers, where
 * a leaf may not have a frame yet). true: CUR stands on the caller, at *IP
 * and *SP; false: the walk ends with *END. */
bool uw_step_without_cfi(struct unwind_ctx *c, unw_cursor_t *cur, bool at_snapshot,
			 uint64_t *ip, uint64_t *sp, enum unwind_result *end)
{
	/* (before the window: the stack of a thread that has no caller may
	 * lie at its very top) */
	if (at_snapshot && uw_at_thread_start(c)) {
		*end = UNWIND_OK;
		return false;
	}
	*end = UNWIND_BAD_FRAME;
	if (c->window_hit) {
		*end = UNWIND_WINDOW;
		return false;
	}
	enum fp_step fp;
	if (!c->no_info) {
		/* a rule needed a register a blocked thread's snapshot does not have */
		if (!found_frame_record_step(c, cur))
			return false;
		fp = FP_STEPPED;
	} else if (c->s->sp_pc_only && !c->rbp_known) {
		/* code with frame pointers, rbp unknown (a blocked thread read in
		 * place): the frame's record under its return address */
		fp = frame_record_at_function(c, cur, at_snapshot) ? FP_STEPPED : FP_FAILED;
	} else if (at_snapshot && entry_return_step(c, cur)) {
		fp = FP_STEPPED;
	} else {
		fp = frame_pointer_step(c, cur);
	}
	if (fp == FP_END) {
		/* rbp 0 ends the chain in compiled code; JIT code (anonymous
		 * memory) may hold 0 in rbp anywhere */
		uint64_t at = 0;
		struct module *m = uw_cursor_reg(cur, UNW_REG_IP, &at) ? uw_module_for_ip(c, at) : NULL;
		*end = m != NULL && m->inode == 0 ? UNWIND_NO_INFO : UNWIND_OK;
		return false;
	}
	if (fp == FP_FAILED &&
	    !(at_snapshot && (leaf_return_step(c) || (!c->s->sp_pc_only && leaf_record_step(c))))) {
		*end = c->window_hit ? UNWIND_WINDOW : UNWIND_NO_INFO;
		return false;
	}
	if (unw_init_remote(cur, c->u->as, c) < 0)
		return false;
	*ip = c->regs.rip;
	*sp = c->regs.rsp;
	return true;
}

