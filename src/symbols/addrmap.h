/* addrmap: (pid, stored address) -> a 32-bit value: what a caller built
 * from an address's symbols (a profile location, --top's name ids), so each
 * address of each process is symbolized once. Open addressing, no removal;
 * pure, unit-tested. Zero-initialize before use. */
#ifndef CSAMPLER_ADDRMAP_H
#define CSAMPLER_ADDRMAP_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define ADDRMAP_EMPTY UINT32_MAX

struct addrmap {
	struct addrmap_slot {
		uint64_t addr;
		pid_t pid;
		uint32_t value;          /* ADDRMAP_EMPTY: a free slot */
	} *slots;
	size_t cap, used;
};

/* The value of (PID, ADDR): set, or ADDRMAP_EMPTY in a slot now taken for
 * the caller to fill (a value it leaves empty is looked for again). NULL
 * out of memory. */
uint32_t *addrmap_slot(struct addrmap *m, pid_t pid, uint64_t addr);
void addrmap_free(struct addrmap *m);

#endif
