/* goruntime: where a Go thread keeps the goroutine it runs, for crossing
 * from the system stack (g0) back to that goroutine's stack as Go's own
 * traceback does (runtime.systemstack, runtime.morestack).
 *
 * goruntime_layout_read takes the offsets of the runtime's structures from
 * the binary's DWARF (runtime.g: stack.lo/hi, m, sched.sp/pc/bp; runtime.m:
 * g0, curg, vdsoSP where present); false when the binary has no DWARF for them (built with
 * -ldflags=-w, or not Go), and then nothing is crossed. Every offset is
 * checked to lie within its structure's size. The reads at a stop are
 * unwind's (unwind.h); linux/amd64 keeps the running g at -8 from the
 * thread pointer (fs_base) when Go links itself (no cgo). */
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
};

/* The layout of the Go runtime whose DWARF is DW (a whole binary's). */
bool goruntime_layout_read(Dwarf *dw, struct goruntime_layout *out);

#endif
