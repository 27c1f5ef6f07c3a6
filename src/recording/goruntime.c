/* goruntime: the Go runtime's structure layouts (see goruntime.h). */
#include "config.h"

#include <string.h>

#include "dwarfstruct.h"
#include "goruntime.h"

/* The structure types wanted. */
enum { T_G, T_M, T_GOBUF, T_STACK, T_COUNT };
static const char *const type_names[T_COUNT] = {
	"runtime.g", "runtime.m", "runtime.gobuf", "runtime.stack",
};

bool goruntime_layout_read(Dwarf *dw, struct goruntime_layout *out)
{
	Dwarf_Die found[T_COUNT];
	bool have[T_COUNT];
	memset(out, 0, sizeof *out);
	if (dwarfstruct_find(dw, type_names, T_COUNT, found, have) < T_COUNT)
		return false;
	uint32_t stack, sched, lo, hi, sp, pc, bp;
	uint64_t stack_size, gobuf_size;
	Dwarf_Die *g = &found[T_G], *m = &found[T_M], *buf = &found[T_GOBUF], *st = &found[T_STACK];
	if (!dwarfstruct_size(st, &stack_size) || !dwarfstruct_size(buf, &gobuf_size) ||
	    !dwarfstruct_member(st, "lo", 8, &lo) || !dwarfstruct_member(st, "hi", 8, &hi) ||
	    !dwarfstruct_member(buf, "sp", 8, &sp) || !dwarfstruct_member(buf, "pc", 8, &pc) ||
	    !dwarfstruct_member(buf, "bp", 8, &bp) ||
	    !dwarfstruct_member(g, "stack", stack_size, &stack) ||
	    !dwarfstruct_member(g, "sched", gobuf_size, &sched) ||
	    !dwarfstruct_member(g, "m", 8, &out->g_m) || !dwarfstruct_member(m, "g0", 8, &out->m_g0) ||
	    !dwarfstruct_member(m, "curg", 8, &out->m_curg))
		return false;
	if (!dwarfstruct_member(m, "vdsoSP", 8, &out->m_vdso_sp))
		out->m_vdso_sp = 0;
	out->g_stack_lo = stack + lo;
	out->g_stack_hi = stack + hi;
	out->g_sched_sp = sched + sp;
	out->g_sched_pc = sched + pc;
	out->g_sched_bp = sched + bp;
	/* a stop reads the first GORUNTIME_G_READ bytes of a g */
	uint32_t g_fields[] = { out->g_stack_lo, out->g_stack_hi, out->g_m, out->g_sched_sp,
				out->g_sched_pc, out->g_sched_bp };
	for (size_t i = 0; i < sizeof g_fields / sizeof *g_fields; i++)
		if (g_fields[i] + 8 > GORUNTIME_G_READ)
			return false;
	return true;
}
