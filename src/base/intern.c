/* intern: see intern.h. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "intern.h"

#define CHUNK_SIZE (64u * 1024u)

struct intern_chunk {
	struct intern_chunk *next;
	size_t used, size;
	char data[];
};

uint64_t hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= UINT64_C(0xff51afd7ed558ccd);
	x ^= x >> 33;
	x *= UINT64_C(0xc4ceb9fe1a85ec53);
	x ^= x >> 33;
	return x;
}

uint64_t hash_bytes(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = UINT64_C(14695981039346656037);
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= UINT64_C(1099511628211);
	}
	return h;
}

static char *arena_copy(struct intern *t, const char *s, size_t len)
{
	struct intern_chunk *c = t->chunks;
	if (!c || c->size - c->used < len + 1) {
		size_t size = len + 1 > CHUNK_SIZE ? len + 1 : CHUNK_SIZE;
		c = malloc(sizeof *c + size);
		if (!c)
			return NULL;
		c->used = 0;
		c->size = size;
		c->next = t->chunks;
		t->chunks = c;
	}
	char *p = c->data + c->used;
	c->used += len + 1;
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

static int grow_slots(struct intern *t)
{
	size_t nslots = t->nslots ? t->nslots * 2 : 256;
	uint32_t *slot = calloc(nslots, sizeof *slot);
	if (!slot)
		return -1;
	for (size_t i = 0; i < t->n; i++) {
		size_t j = hash_bytes(t->strs[i], strlen(t->strs[i])) & (nslots - 1);
		while (slot[j])
			j = (j + 1) & (nslots - 1);
		slot[j] = (uint32_t)i + 1;
	}
	free(t->slot);
	t->slot = slot;
	t->nslots = nslots;
	return 0;
}

int64_t intern_find(const struct intern *t, const char *s, size_t len)
{
	if (t->nslots == 0)
		return -1;
	size_t mask = t->nslots - 1;
	for (size_t j = hash_bytes(s, len) & mask; t->slot[j]; j = (j + 1) & mask) {
		const char *e = t->strs[t->slot[j] - 1];
		if (strncmp(e, s, len) == 0 && e[len] == '\0')
			return t->slot[j] - 1;
	}
	return -1;
}

int64_t intern_index(struct intern *t, const char *s, size_t len)
{
	int64_t known = intern_find(t, s, len);
	if (known >= 0)
		return known;
	if (t->n >= UINT32_MAX - 1 || ((t->n + 1) * 2 > t->nslots && grow_slots(t) < 0))
		return -1;
	size_t mask = t->nslots - 1, j;
	for (j = hash_bytes(s, len) & mask; t->slot[j]; j = (j + 1) & mask)
		;
	if (array_grow(&t->strs, &t->cap, t->n + 1, sizeof *t->strs, 256) < 0)
		return -1;
	char *copy = arena_copy(t, s, len);
	if (!copy)
		return -1;
	t->strs[t->n] = copy;
	t->slot[j] = (uint32_t)t->n + 1;
	return (int64_t)t->n++;
}

const char *intern_string(struct intern *t, const char *s, size_t len)
{
	int64_t i = intern_index(t, s, len);
	return i < 0 ? NULL : t->strs[i];
}

void intern_free(struct intern *t)
{
	while (t->chunks) {
		struct intern_chunk *next = t->chunks->next;
		free(t->chunks);
		t->chunks = next;
	}
	free(t->strs);
	free(t->slot);
	memset(t, 0, sizeof *t);
}
