/* timeline: samples in time order (see timeline.h). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "recstore.h"
#include "timeline.h"

#define TIMELINE_BUFFER (1024 * 1024)

struct timeline {
	struct recstore store;
	unsigned max_depth;
	uint64_t lost;
};

struct timeline_record {
	uint64_t time_ns;
	uint32_t thread_key, flags, count, depth;
};

struct timeline *timeline_new(unsigned max_depth)
{
	struct timeline *tl = calloc(1, sizeof *tl);
	if (!tl)
		return NULL;
	tl->max_depth = max_depth;
	recstore_init(&tl->store, TIMELINE_BUFFER, "timeline");
	/* one record of the deepest stack, with its length word and padding */
	size_t deepest = sizeof(struct timeline_record) + (size_t)max_depth * sizeof(uint64_t) + 16;
	if (recstore_reserve(&tl->store, deepest) < 0) {
		free(tl);
		errno = ENOMEM;
		return NULL;
	}
	return tl;
}

void timeline_free(struct timeline *tl)
{
	if (!tl)
		return;
	recstore_free(&tl->store);
	free(tl);
}

int timeline_add(struct timeline *tl, const struct timeline_entry *e)
{
	uint32_t depth = e->depth > tl->max_depth ? tl->max_depth : e->depth;
	struct timeline_record r = { e->time_ns, e->thread_key, e->flags, e->count, depth };
	if (recstore_append(&tl->store, &r, sizeof r, e->addrs, depth * sizeof *e->addrs) < 0) {
		tl->lost += e->count;
		return -1;
	}
	return 0;
}

struct walk {
	int (*fn)(void *ctx, const struct timeline_entry *e);
	void *ctx;
};

static int walk_record(void *ctx, const void *rec, size_t len)
{
	const struct walk *w = ctx;
	struct timeline_record r;
	if (len < sizeof r)
		return 0;
	memcpy(&r, rec, sizeof r);
	if ((len - sizeof r) / sizeof(uint64_t) < r.depth)
		return 0;
	struct timeline_entry e = {
		.time_ns = r.time_ns, .thread_key = r.thread_key, .flags = r.flags,
		.count = r.count, .depth = r.depth,
		/* records are 8-aligned, and the header is 24 bytes */
		.addrs = (const uint64_t *)(const void *)((const unsigned char *)rec + sizeof r),
	};
	return w->fn(w->ctx, &e);
}

int timeline_foreach(const struct timeline *tl,
		     int (*fn)(void *ctx, const struct timeline_entry *e), void *ctx)
{
	struct walk w = { fn, ctx };
	return recstore_foreach(&tl->store, walk_record, &w);
}

uint64_t timeline_lost(const struct timeline *tl)
{
	return tl->lost;
}
