/* write_internal: what the writers share (write.c and write_*.c; not an
 * interface: write.h is): the kinds of frame a folded stack holds, and
 * folded_foreach, the one walk of a profile's stacks merged and ordered
 * frame by frame, with its line order. */
#ifndef CSAMPLER_WRITE_INTERNAL_H
#define CSAMPLER_WRITE_INTERNAL_H
#include <stddef.h>
#include <stdint.h>

#include "write.h"

enum write_frame_kind {
	WRITE_FRAME_NATIVE = 0,  /* a function that owns its address */
	WRITE_FRAME_INLINE,      /* inlined into the frame below it */
	WRITE_FRAME_JIT,         /* from /tmp/perf-PID.map */
	WRITE_FRAME_KERNEL,      /* the kernel's (profile_location_kernel) */
	WRITE_FRAME_UNKNOWN,     /* an address without a symbol */
	WRITE_FRAME_THREAD,      /* the thread view's root frame */
	WRITE_FRAME_MARKER,      /* "[truncated]": the stack did not reach its root */
};

struct write_frame {
	enum write_frame_kind kind;
	uint32_t function;       /* index into profile.functions, or PROFILE_NONE */
	uint32_t mapping;        /* index into profile.mappings, or PROFILE_NONE */
};

/* One merged stack: escaped frames root first, joined by ';' (no count). */
struct folded_stack {
	const char *line;
	const struct write_frame *frames; /* root first, one per frame of line */
	size_t nframes;
	uint64_t count;
	uint64_t base;           /* a --diff profile: the base's (scaled) samples */
};

/* Call fn once per distinct folded stack of P (thread root frame and _[i]/_[j]
 * suffixes as OPT says), identical stacks merged, in frame-by-frame order;
 * the stack is valid during the call only. Memory is bounded by opt->memory
 * whatever the number of stacks (sorted runs in a temp file, then merged).
 * fn returning non-zero stops the walk and is returned; -1 with errno. */
int folded_foreach(const struct profile *p, const struct write_options *opt,
		   int (*fn)(void *ctx, const struct folded_stack *s), void *ctx);
/* Frame-by-frame order of two folded lines (';' sorts before any name byte). */
int folded_line_compare(const char *a, const char *b);

#endif
