/* timeline: every sample in the order it was taken, with its time, for the
 * timeline outputs (pure: no ptrace; its scratch is a temp file).
 *
 * A recstore of {time, thread key, flags, count, depth} + depth addresses
 * (leaf first, as the stackmap gets them). Memory is bounded: the buffer is
 * reserved at creation, large enough for a max_depth stack, so timeline_add
 * never allocates; the rest goes to an unlinked temp file in $TMPDIR.
 * A sample timeline_add could not store is counted (timeline_lost). */
#ifndef CSAMPLER_TIMELINE_H
#define CSAMPLER_TIMELINE_H
#include <stdint.h>

struct timeline;

struct timeline_entry {
	uint64_t time_ns;        /* CLOCK_MONOTONIC */
	uint32_t thread_key;
	uint32_t flags;          /* STACK_* (stackmap.h) */
	uint32_t count;          /* periods */
	uint32_t depth;
	const uint64_t *addrs;   /* depth addresses, leaf first */
};

/* NULL with errno on failure. */
struct timeline *timeline_new(unsigned max_depth);
void timeline_free(struct timeline *tl);
/* 0, or -1 with errno (the sample is counted lost). depth is cut to max_depth. */
int timeline_add(struct timeline *tl, const struct timeline_entry *e);
/* Call fn once per sample in the order added; fn returning non-zero stops the
 * walk and is returned; -1 with errno on a read error. */
int timeline_foreach(const struct timeline *tl,
		     int (*fn)(void *ctx, const struct timeline_entry *e), void *ctx);
uint64_t timeline_lost(const struct timeline *tl);

#endif
