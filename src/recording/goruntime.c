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
	if (!dwarfstruct_member(m, "procid", 8, &out->m_procid) ||
	    !dwarfstruct_member(m, "alllink", 8, &out->m_alllink) || out->m_procid == 0 ||
	    out->m_alllink == 0)
		out->m_procid = out->m_alllink = 0;
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

/* The magic that starts a .go.buildinfo's header, and the header's size;
 * its flags byte (at 15) has this bit when the strings follow inline. */
static const char buildinfo_magic[] = "\xff Go buildinf:";   /* (14 bytes and a NUL) */
#define BUILDINFO_HEADER 32u
#define BUILDINFO_INLINE 2u

/* The number of decimal digits at S[0..LEN) (at most 4), their value in *V. */
static size_t read_number(const uint8_t *s, size_t len, unsigned *v)
{
	size_t i = 0;
	*v = 0;
	while (i < len && i < 4 && s[i] >= '0' && s[i] <= '9')
		*v = *v * 10 + (unsigned)(s[i++] - '0');
	return i;
}

bool goruntime_version(const uint8_t *info, size_t len, unsigned *major, unsigned *minor)
{
	/* (the header is 16-byte aligned in the section; look at each slot) */
	for (size_t at = 0; len >= BUILDINFO_HEADER + 1 && at <= len - BUILDINFO_HEADER - 1; at += 16) {
		const uint8_t *h = info + at;
		if (memcmp(h, buildinfo_magic, sizeof buildinfo_magic - 1) != 0)
			continue;
		if (h[14] != 8 || !(h[15] & BUILDINFO_INLINE))
			return false;       /* (before 1.18: pointers, not strings) */
		size_t n = h[BUILDINFO_HEADER], avail = len - at - BUILDINFO_HEADER - 1;
		const uint8_t *s = h + BUILDINFO_HEADER + 1;
		if (n >= 0x80 || n > avail || n < 5 || memcmp(s, "go", 2) != 0)
			return false;       /* (a length over 127 is two varint bytes) */
		unsigned ma, mi;            /* (the outputs untouched on failure) */
		size_t d1 = read_number(s + 2, n - 2, &ma);
		if (d1 == 0 || 2 + d1 >= n || s[2 + d1] != '.' ||
		    read_number(s + 3 + d1, n - 3 - d1, &mi) == 0)
			return false;
		*major = ma;
		*minor = mi;
		return true;
	}
	return false;
}

/* The runtime's layout by release, from Go's runtime/runtime2.go (and
 * checked against each release's DWARF where one was at hand): g.m 48 and
 * g.sched 56 since before 1.18; Go 1.25 removed gobuf.ret, which moved
 * gobuf.bp from 48 to 40 and m.curg (after m.morebuf, a gobuf) from 192
 * to 184. */
static const struct {
	unsigned first, last;    /* Go 1.FIRST to 1.LAST */
	uint32_t sched_bp, m_curg;
} layouts[] = {
	{ 18, 24, 56 + 48, 192 },
	{ 25, 26, 56 + 40, 184 },
};

bool goruntime_layout_of_version(unsigned major, unsigned minor, struct goruntime_layout *out)
{
	memset(out, 0, sizeof *out);
	for (size_t i = 0; major == 1 && i < sizeof layouts / sizeof *layouts; i++) {
		if (minor < layouts[i].first || minor > layouts[i].last)
			continue;
		*out = (struct goruntime_layout){
			.g_stack_lo = 0, .g_stack_hi = 8, .g_m = 48, .g_sched_sp = 56,
			.g_sched_pc = 64, .g_sched_bp = layouts[i].sched_bp, .m_g0 = 0,
			.m_curg = layouts[i].m_curg, .m_vdso_sp = 0,
		};
		return true;
	}
	return false;
}

bool goruntime_layout_same(const struct goruntime_layout *a, const struct goruntime_layout *b)
{
	return a->g_stack_lo == b->g_stack_lo && a->g_stack_hi == b->g_stack_hi && a->g_m == b->g_m &&
	       a->g_sched_sp == b->g_sched_sp && a->g_sched_pc == b->g_sched_pc &&
	       a->g_sched_bp == b->g_sched_bp && a->m_g0 == b->m_g0 && a->m_curg == b->m_curg;
}

/* Whether CODE holds the instruction REX OP with a memory operand of base
 * register RM (its low 3 bits) plus DISP and register REG (low 3 bits), in
 * the shorter form an assembler picks (disp8 under 128, else disp32),
 * right after the PRE_LEN bytes PRE (none: NULL). */
static bool has_access(const uint8_t *code, size_t len, const uint8_t *pre, size_t pre_len,
		       uint8_t rex, uint8_t op, unsigned reg, unsigned rm, uint32_t disp)
{
	uint8_t want[16];
	size_t n = pre_len;
	if (pre_len > sizeof want - 7)
		return false;
	if (pre_len)
		memcpy(want, pre, pre_len);
	want[n++] = rex;
	want[n++] = op;
	if (disp < 128) {
		want[n++] = (uint8_t)(0x40 | reg << 3 | rm);
		want[n++] = (uint8_t)disp;
	} else {
		want[n++] = (uint8_t)(0x80 | reg << 3 | rm);
		for (int i = 0; i < 4; i++)
			want[n++] = (uint8_t)(disp >> (8 * i));
	}
	return len >= n && memmem(code, len, want, n) != NULL;
}

enum { REG_AX = 0, REG_BX = 3, REG_BP = 5, REG_R9_LOW = 1, REG_R14_LOW = 6 };

bool goruntime_code_agrees(const struct goruntime_layout *l, const uint8_t *ss, size_t ss_len,
			   const uint8_t *save, size_t save_len)
{
	/* LEAQ 8(SP), R9: the sp stored next (pc's store has the same form) */
	static const uint8_t lea_sp[] = { 0x4c, 0x8d, 0x4c, 0x24, 0x08 };
	/* MOVQ g_m(AX), BX; CMPQ m_curg(BX), AX (REX.W) */
	return has_access(ss, ss_len, NULL, 0, 0x48, 0x8b, REG_BX, REG_AX, l->g_m) &&
	       has_access(ss, ss_len, NULL, 0, 0x48, 0x3b, REG_AX, REG_BX, l->m_curg) &&
	       /* MOVQ R9, sp and pc (REX.WRB); MOVQ BP, bp (REX.WB), of R14's g */
	       has_access(save, save_len, lea_sp, sizeof lea_sp, 0x4d, 0x89, REG_R9_LOW,
			  REG_R14_LOW, l->g_sched_sp) &&
	       l->g_sched_pc != l->g_sched_sp &&
	       has_access(save, save_len, NULL, 0, 0x4d, 0x89, REG_R9_LOW, REG_R14_LOW,
			  l->g_sched_pc) &&
	       has_access(save, save_len, NULL, 0, 0x49, 0x89, REG_BP, REG_R14_LOW, l->g_sched_bp);
}
