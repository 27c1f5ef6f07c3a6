/* gostack: Go behind runtime.h's table (gostack_ops). Found in the first
 * module with Go's function table (.gopclntab), its runtime's layout read
 * there (goruntime: from its DWARF, else csampler's table of its release
 * where its code agrees); at each stop of a thread on its system stack (or
 * in a vDSO call), the goroutine it works for is copied (struct
 * go_capture, the snapshot's object of RUNTIME_GO), for the walk to cross
 * to as Go's own traceback does (unwind_go.c). Every value read from the
 * target is checked before use. Go's frames are native addresses: no
 * names table, no splice. */
#ifndef CSAMPLER_GOSTACK_H
#define CSAMPLER_GOSTACK_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime.h"

/* runtime_found.source of Go: enum goruntime_source. */
extern const struct runtime_ops gostack_ops;

/* What a stop read of a Go thread. A thread stopped on its system stack
 * (g0) while the goroutine it runs waits there for it (runtime.systemstack,
 * runtime.morestack): that goroutine's saved sp, pc and bp, the end of its
 * stack, and a copy of its stack from that sp (at most the window). Or
 * (fp) a goroutine that moved its sp off its own stack (a vDSO call, made
 * on the system stack; its frame pointers lead back): that stack, copied
 * from just under its sp at the call (m.vdsoSP), else from its start. Or
 * (signal) a thread stopped at the first instruction of Go's signal
 * handler (runtime.sigtramp, runtime.cgoSigtramp), on its signal stack:
 * the registers the kernel saved in the signal frame there, where the
 * thread was when the signal came (sp, pc, bp), and its stack from that
 * sp, as the kernel delivered the signal and the handler has done
 * nothing yet. */
struct go_capture {
	bool switched, fp, signal;
	bool g0_alone;                  /* on the system stack, no goroutine on its m
	                                 * (m.curg nil: the scheduler runs there) */
	uint64_t base_pc, base_sp;      /* on the system stack: its g0's saved pc and
	                                 * sp, where mcall and morestack start it
	                                 * afresh (in mstart0, called by mstart); 0:
	                                 * none */
	uint64_t sp, pc, bp, stack_end;
	uint8_t *stack;
	size_t stack_len, window;
};

/* Whether a Go function's NAME (LEN bytes) is WANT, with or without the
 * ".abi0" of an assembly function's symbol. */
bool gostack_name_is(const char *name, size_t len, const char *want);

#endif
