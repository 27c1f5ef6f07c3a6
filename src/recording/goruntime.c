/* goruntime: the Go runtime's structure layouts (see goruntime.h). */
#include "config.h"

#include <dwarf.h>
#include <string.h>

#include "goruntime.h"

/* Units and top-level entries looked at, at most (the runtime's types are
 * in the unit of package runtime, among a few hundred). */
#define UNITS_MAX 20000u
#define ENTRIES_MAX 2000000u

/* The structure types wanted, found among a unit's top-level entries. */
enum { T_G, T_M, T_GOBUF, T_STACK, T_COUNT };
static const char *const type_names[T_COUNT] = {
	"runtime.g", "runtime.m", "runtime.gobuf", "runtime.stack",
};

static bool die_size(Dwarf_Die *die, uint64_t *size)
{
	Dwarf_Attribute a;
	Dwarf_Word w;
	if (!dwarf_attr(die, DW_AT_byte_size, &a) || dwarf_formudata(&a, &w) != 0)
		return false;
	*size = w;
	return true;
}

/* The offset of member NAME of structure S (a constant location), of a
 * field of SIZE bytes that lies within S; false if none. */
static bool member(Dwarf_Die *s, const char *name, uint64_t size, uint32_t *off)
{
	uint64_t struct_size;
	Dwarf_Die child;
	if (!die_size(s, &struct_size) || dwarf_child(s, &child) != 0)
		return false;
	unsigned steps = 0;
	do {
		if (dwarf_tag(&child) != DW_TAG_member)
			continue;
		const char *n = dwarf_diename(&child);
		Dwarf_Attribute a;
		Dwarf_Word w;
		if (!n || strcmp(n, name) != 0 || !dwarf_attr(&child, DW_AT_data_member_location, &a) ||
		    dwarf_formudata(&a, &w) != 0)
			continue;
		if (w > struct_size || size > struct_size - w || w > UINT32_MAX)
			return false;
		*off = (uint32_t)w;
		return true;
	} while (++steps < 4096 && dwarf_siblingof(&child, &child) == 0);
	return false;
}

bool goruntime_layout_read(Dwarf *dw, struct goruntime_layout *out)
{
	Dwarf_Die found[T_COUNT];
	bool have[T_COUNT] = { false };
	unsigned nhave = 0, entries = 0;
	Dwarf_Off off = 0, next;
	size_t hsize;
	memset(out, 0, sizeof *out);
	if (!dw)
		return false;
	for (unsigned units = 0; nhave < T_COUNT && units < UNITS_MAX &&
	     dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0; units++, off = next) {
		Dwarf_Die cu, die;
		if (!dwarf_offdie(dw, off + hsize, &cu) || dwarf_child(&cu, &die) != 0)
			continue;
		do {
			if (dwarf_tag(&die) != DW_TAG_structure_type)
				continue;
			const char *n = dwarf_diename(&die);
			for (unsigned t = 0; n && t < T_COUNT; t++)
				if (!have[t] && strcmp(n, type_names[t]) == 0) {
					found[t] = die;
					have[t] = true;
					nhave++;
				}
		} while (nhave < T_COUNT && ++entries < ENTRIES_MAX && dwarf_siblingof(&die, &die) == 0);
	}
	if (nhave < T_COUNT)
		return false;
	uint32_t stack, sched, lo, hi, sp, pc, bp;
	uint64_t stack_size, gobuf_size;
	if (!die_size(&found[T_STACK], &stack_size) || !die_size(&found[T_GOBUF], &gobuf_size) ||
	    !member(&found[T_STACK], "lo", 8, &lo) || !member(&found[T_STACK], "hi", 8, &hi) || !member(&found[T_GOBUF], "sp", 8, &sp) ||
	    !member(&found[T_GOBUF], "pc", 8, &pc) || !member(&found[T_GOBUF], "bp", 8, &bp) ||
	    !member(&found[T_G], "stack", stack_size, &stack) ||
	    !member(&found[T_G], "sched", gobuf_size, &sched) ||
	    !member(&found[T_G], "m", 8, &out->g_m) || !member(&found[T_M], "g0", 8, &out->m_g0) ||
	    !member(&found[T_M], "curg", 8, &out->m_curg))
		return false;
	if (!member(&found[T_M], "vdsoSP", 8, &out->m_vdso_sp))
		out->m_vdso_sp = 0;
	out->g_stack_lo = stack + lo;
	out->g_stack_hi = stack + hi;
	out->g_sched_sp = sched + sp;
	out->g_sched_pc = sched + pc;
	out->g_sched_bp = sched + bp;
	/* a stop reads the first GORUNTIME_G_READ bytes of a g */
	uint32_t g_fields[] = { out->g_stack_lo, out->g_stack_hi, out->g_m, out->g_sched_sp, out->g_sched_pc,
				out->g_sched_bp };
	for (size_t i = 0; i < sizeof g_fields / sizeof *g_fields; i++)
		if (g_fields[i] + 8 > GORUNTIME_G_READ)
			return false;
	return true;
}
