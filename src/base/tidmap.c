/* tidmap: see tidmap.h. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tidmap.h"

static size_t home(pid_t tid, size_t cap)
{
	return ((uint32_t)tid * 2654435761u) & (cap - 1);
}

/* The slot holding TID, or the empty slot where it would go (cap > 0). */
static size_t find_slot(const struct tidmap *m, pid_t tid)
{
	size_t mask = m->cap - 1, h = home(tid, m->cap);
	while (m->slots[h].tid && m->slots[h].tid != tid)
		h = (h + 1) & mask;
	return h;
}

int tidmap_reserve(struct tidmap *m, size_t n)
{
	size_t cap = m->cap ? m->cap : 16;
	while (cap / 2 < n) {
		if (cap > SIZE_MAX / 2 / sizeof *m->slots) {
			errno = ENOMEM;
			return -1;
		}
		cap *= 2;
	}
	if (cap == m->cap)
		return 0;
	struct tidmap_slot *slots = calloc(cap, sizeof *slots);
	if (!slots)
		return -1;
	struct tidmap grown = { slots, cap, 0 };
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].tid) {
			grown.slots[find_slot(&grown, m->slots[i].tid)] = m->slots[i];
			grown.count++;
		}
	free(m->slots);
	*m = grown;
	return 0;
}

int tidmap_put(struct tidmap *m, pid_t tid, uint32_t value)
{
	if (tid == 0) {
		errno = EINVAL;
		return -1;
	}
	if (m->cap) {
		struct tidmap_slot *slot = &m->slots[find_slot(m, tid)];
		if (slot->tid) {
			slot->value = value;  /* present: never grows */
			return 0;
		}
	}
	if (tidmap_reserve(m, m->count + 1) < 0)
		return -1;
	struct tidmap_slot *slot = &m->slots[find_slot(m, tid)];
	if (!slot->tid)
		m->count++;
	slot->tid = tid;
	slot->value = value;
	return 0;
}

bool tidmap_get(const struct tidmap *m, pid_t tid, uint32_t *value)
{
	if (!m->cap || tid == 0)
		return false;
	const struct tidmap_slot *slot = &m->slots[find_slot(m, tid)];
	if (!slot->tid)
		return false;
	*value = slot->value;
	return true;
}

void tidmap_remove(struct tidmap *m, pid_t tid)
{
	if (!m->cap || tid == 0)
		return;
	size_t mask = m->cap - 1, hole = find_slot(m, tid);
	if (!m->slots[hole].tid)
		return;
	/* Move back each later entry of the run that may sit at the hole:
	 * one whose home is not cyclically within (hole, j]. */
	for (size_t j = (hole + 1) & mask; m->slots[j].tid; j = (j + 1) & mask) {
		size_t h = home(m->slots[j].tid, m->cap);
		if (((j - h) & mask) >= ((j - hole) & mask)) {
			m->slots[hole] = m->slots[j];
			hole = j;
		}
	}
	m->slots[hole].tid = 0;
	m->count--;
}

void tidmap_clear(struct tidmap *m)
{
	if (m->cap)
		memset(m->slots, 0, m->cap * sizeof *m->slots);
	m->count = 0;
}

void tidmap_free(struct tidmap *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->count = 0;
}

/* ---- tidrows ------------------------------------------------------------------ */

void *tidrows_get(struct tidrows *t, pid_t tid, bool make, bool *made)
{
	uint32_t at;
	*made = false;
	if (tidmap_get(&t->map, tid, &at))
		return t->rows + (size_t)at * t->row_size;
	if (!make || tid == 0)
		return NULL;
	if (t->nfree) {
		at = t->free[--t->nfree];
	} else {
		if (t->nrows == t->max)
			return NULL;
		if (t->nrows == t->cap) {
			size_t cap = t->cap ? 2 * t->cap : 16;
			cap = cap < t->max ? cap : t->max;
			uint8_t *rows = realloc(t->rows, cap * t->row_size);
			if (!rows)
				return NULL;
			t->rows = rows;
			uint32_t *free_ = realloc(t->free, cap * sizeof *free_);
			if (!free_)
				return NULL;
			t->free = free_;
			t->cap = cap;
		}
		at = (uint32_t)t->nrows++;
	}
	if (tidmap_put(&t->map, tid, at) < 0) {
		t->free[t->nfree++] = at;
		return NULL;
	}
	uint8_t *row = t->rows + (size_t)at * t->row_size;
	memset(row, 0, t->row_size);
	*made = true;
	return row;
}

void tidrows_forget(struct tidrows *t, pid_t tid)
{
	uint32_t at;
	if (!tidmap_get(&t->map, tid, &at))
		return;
	tidmap_remove(&t->map, tid);
	t->free[t->nfree++] = at;
}

size_t tidrows_count(const struct tidrows *t)
{
	return t->map.count;
}

void tidrows_free(struct tidrows *t)
{
	tidmap_free(&t->map);
	free(t->rows);
	free(t->free);
	t->rows = NULL;
	t->free = NULL;
	t->nrows = t->cap = t->nfree = 0;
}
