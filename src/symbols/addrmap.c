/* addrmap: see addrmap.h. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "addrmap.h"
#include "intern.h"

static size_t slot_hash(pid_t pid, uint64_t addr, size_t cap)
{
	return (size_t)hash_u64(addr ^ (uint64_t)(uint32_t)pid << 32) & (cap - 1);
}

static int grow(struct addrmap *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 4096;
	struct addrmap_slot *ns = malloc(ncap * sizeof *ns);
	if (!ns)
		return -1;
	for (size_t i = 0; i < ncap; i++)
		ns[i].value = ADDRMAP_EMPTY;
	m->used = 0;
	for (size_t i = 0; i < m->cap; i++) {
		if (m->slots[i].value == ADDRMAP_EMPTY)
			continue;
		size_t h = slot_hash(m->slots[i].pid, m->slots[i].addr, ncap);
		while (ns[h].value != ADDRMAP_EMPTY)
			h = (h + 1) & (ncap - 1);
		ns[h] = m->slots[i];
		m->used++;
	}
	free(m->slots);
	m->slots = ns;
	m->cap = ncap;
	return 0;
}

uint32_t *addrmap_slot(struct addrmap *m, pid_t pid, uint64_t addr)
{
	if ((m->used + 1) * 2 > m->cap && grow(m) < 0)
		return NULL;
	size_t h = slot_hash(pid, addr, m->cap);
	while (m->slots[h].value != ADDRMAP_EMPTY) {
		if (m->slots[h].addr == addr && m->slots[h].pid == pid)
			return &m->slots[h].value;
		h = (h + 1) & (m->cap - 1);
	}
	m->slots[h].addr = addr;
	m->slots[h].pid = pid;
	m->used++;
	return &m->slots[h].value;
}

void addrmap_free(struct addrmap *m)
{
	free(m->slots);
	memset(m, 0, sizeof *m);
}
