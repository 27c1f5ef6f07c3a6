/* address: how a frame address is stored between unwinding and symbolization.
 *
 * Stacks are arrays of uint64_t, leaf first. Each entry is the address as the
 * unwinder read it (for callers: the return address). Bit 63, never set in an
 * x86_64 user address, marks an activation frame (the leaf, or the frame a
 * signal interrupted), whose address is the faulting/current ip itself; the
 * symbolizer looks up ip for those and ip-1 for every other (return) address. */
#ifndef CSAMPLER_ADDRESS_H
#define CSAMPLER_ADDRESS_H
#include <stdbool.h>
#include <stdint.h>

#define ADDR_ACTIVATION (UINT64_C(1) << 63)

static inline uint64_t addr_value(uint64_t a) { return a & ~ADDR_ACTIVATION; }
static inline bool addr_is_activation(uint64_t a) { return (a & ADDR_ACTIVATION) != 0; }
/* The address to look up in line tables and symbol tables. */
static inline uint64_t addr_lookup_pc(uint64_t a)
{
	return addr_is_activation(a) ? addr_value(a) : addr_value(a) - 1;
}

#endif
