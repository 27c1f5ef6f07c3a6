/* goruntime: where a Go thread keeps the goroutine it runs, for crossing
 * from the system stack (g0) back to that goroutine's stack as Go's own
 * traceback does (runtime.systemstack, runtime.morestack).
 *
 * goruntime_layout_read takes the offsets of the runtime's structures from
 * the binary's DWARF (runtime.g: stack.lo/hi, m, sched.sp/pc/bp; runtime.m:
 * g0, curg, vdsoSP where present); false when the binary has no DWARF for them (built with
 * -ldflags=-w, or not Go). Every offset is checked to lie within its
 * structure's size. Without DWARF, goruntime_layout_of_version gives the
 * layout of the binary's Go release (goruntime_version reads it from
 * .go.buildinfo), used only where goruntime_code_agrees finds the same
 * offsets in the runtime's own code; else nothing is crossed. All three are
 * pure and bounded by their inputs. The reads at a stop are gostack's
 * (unwind.h); linux/amd64 keeps the running g at -8 from the thread pointer
 * (fs_base) when Go links itself (no cgo). */
#ifndef CSAMPLER_GORUNTIME_H
#define CSAMPLER_GORUNTIME_H
#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stdint.h>

#define GORUNTIME_TLS_G (-8)        /* the g at fs_base - 8 */
#define GORUNTIME_G_READ 256u       /* the bytes of a g read at a stop, at most */

struct goruntime_layout {
	uint32_t g_stack_lo, g_stack_hi, g_m, g_sched_sp, g_sched_pc, g_sched_bp;
	uint32_t m_g0, m_curg;
	uint32_t m_vdso_sp;      /* the goroutine's sp in a vDSO call; 0: unknown */
	/* for the list of every m (runtime.allm), which names each m's thread
	 * (procid): from DWARF only, 0 unknown */
	uint32_t m_procid, m_alllink;
};

/* The layout of the Go runtime whose DWARF is DW (a whole binary's). */
bool goruntime_layout_read(Dwarf *dw, struct goruntime_layout *out);

/* Where a Go binary's layout came from, or why it is not known. */
enum goruntime_source {
	GORUNTIME_DWARF,            /* its DWARF (its release not in the table) */
	GORUNTIME_DWARF_AS_TABLE,   /* its DWARF, as the table of its release says */
	GORUNTIME_DWARF_NOT_TABLE,  /* its DWARF, which the table of its release
	                             * does not match (the DWARF is used) */
	GORUNTIME_TABLE,            /* csampler's table of its release, checked */
	GORUNTIME_NO_VERSION,       /* no DWARF, and no release found (.go.buildinfo) */
	GORUNTIME_UNKNOWN_VERSION,  /* no DWARF, and a release the table lacks */
	GORUNTIME_CODE_DIFFERS,     /* no DWARF, and its code disagrees with the table */
};

/* Whether SOURCE gives a layout (DWARF or the table), not a reason why none. */
static inline bool goruntime_source_known(enum goruntime_source source)
{
	return source == GORUNTIME_DWARF || source == GORUNTIME_DWARF_AS_TABLE ||
	       source == GORUNTIME_DWARF_NOT_TABLE || source == GORUNTIME_TABLE;
}

/* The Go release (1.MINOR: *MAJOR, *MINOR) named by a .go.buildinfo
 * section's LEN bytes at INFO (the inline form of Go 1.18 on: a 32-byte
 * header, then the version as a length-prefixed string "go1.N[.P...]");
 * false if it names none (*MAJOR and *MINOR then untouched). */
bool goruntime_version(const uint8_t *info, size_t len, unsigned *major, unsigned *minor);

/* The runtime's layout of Go MAJOR.MINOR on linux/amd64 (1.18 on, as far
 * as csampler knows); false for another release. vdsoSP and the allm
 * walk's offsets are left unknown. */
bool goruntime_layout_of_version(unsigned major, unsigned minor, struct goruntime_layout *out);

/* Whether layouts A and B have the same offsets (vdsoSP and the allm
 * walk's aside). */
bool goruntime_layout_same(const struct goruntime_layout *a, const struct goruntime_layout *b);

/* Whether the code of runtime.systemstack (SS, SS_LEN bytes) and of
 * gosave_systemstack_switch (SAVE, SAVE_LEN bytes) uses L's offsets: g.m
 * (MOVQ g_m(AX), BX), m.curg (CMPQ m_curg(BX), AX), and g.sched's sp
 * (after LEAQ 8(SP), R9), pc and bp (MOVQ R9/BP, (g_sched+gobuf_*)(R14)),
 * as Go 1.17 on assembles them. */
bool goruntime_code_agrees(const struct goruntime_layout *l, const uint8_t *ss, size_t ss_len,
			   const uint8_t *save, size_t save_len);

#endif
