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
/* Bits 57-62, above any user address (56 bits with 5-level paging): in a
 * process that has loaded a library where another one was (dlclose, then
 * dlopen at the same address), the mapping an address was in when it was
 * sampled (procmaps_entry.tag, 1-63; 0: untagged, the mapping there now
 * or last). */
#define ADDR_TAG_SHIFT 57
#define ADDR_TAG_MASK (UINT64_C(0x3f) << ADDR_TAG_SHIFT)

/* Bit 56, above any user address too: a runtime's frame (runtime.h: a
 * CPython frame), its runtime's kind in bits 32-39 and its id in the
 * process's names table of that runtime in bits 0-31, never with the
 * activation bit or a tag: looked up as it is. */
#define ADDR_RUNTIME (UINT64_C(1) << 56)
#define ADDR_RUNTIME_KIND_SHIFT 32
static inline bool addr_is_runtime(uint64_t a)
{
	return (a & (ADDR_RUNTIME | ADDR_ACTIVATION | ADDR_TAG_MASK)) == ADDR_RUNTIME;
}
static inline uint64_t addr_runtime(unsigned kind, uint32_t id)
{
	return ADDR_RUNTIME | (uint64_t)(kind & 0xff) << ADDR_RUNTIME_KIND_SHIFT | id;
}
static inline unsigned addr_runtime_kind(uint64_t a)
{
	return (unsigned)(a >> ADDR_RUNTIME_KIND_SHIFT) & 0xff;
}
static inline uint32_t addr_runtime_id(uint64_t a) { return (uint32_t)a; }

/* Bits 56-63 all set: a kernel frame (address.h's other marks never set
 * them all: a user address is below 2^56, a runtime's frame has no activation
 * bit). Kernel code is in the top 2 GiB on x86-64 (the image, modules, BPF),
 * so its addresses are stored as they are, except that the innermost kernel
 * frame (where the CPU was, looked up as it is) has bit 55 clear; the
 * others are return addresses. */
#define ADDR_KERNEL_MASK (UINT64_C(0xff) << 56)
#define ADDR_KERNEL_RETURN (UINT64_C(1) << 55)
static inline bool addr_is_kernel(uint64_t a)
{
	return (a & ADDR_KERNEL_MASK) == ADDR_KERNEL_MASK;
}
/* A kernel code address as stored: false for any other value (the kernel's
 * chains hold context marks, the top 4095 values, and nothing outside its
 * code is a frame). */
static inline bool addr_kernel(uint64_t ip, bool innermost, uint64_t *out)
{
	if (ip < UINT64_C(0xffffffff80000000) || ip >= (uint64_t)-4095)
		return false;
	*out = innermost ? ip & ~ADDR_KERNEL_RETURN : ip;
	return true;
}

static inline uint64_t addr_value(uint64_t a)
{
	if (addr_is_kernel(a))
		return a | ADDR_KERNEL_RETURN;
	return a & ~(ADDR_ACTIVATION | ADDR_TAG_MASK);
}
static inline unsigned addr_tag(uint64_t a)
{
	return addr_is_kernel(a) ? 0 : (unsigned)((a & ADDR_TAG_MASK) >> ADDR_TAG_SHIFT);
}
static inline uint64_t addr_with_tag(uint64_t a, unsigned tag)
{
	return (a & ~ADDR_TAG_MASK) | ((uint64_t)(tag & 0x3f) << ADDR_TAG_SHIFT);
}
static inline bool addr_is_activation(uint64_t a)
{
	if (addr_is_kernel(a))
		return (a & ADDR_KERNEL_RETURN) == 0;
	return (a & ADDR_ACTIVATION) != 0;
}
/* The address to look up in line tables and symbol tables. */
static inline uint64_t addr_lookup_pc(uint64_t a)
{
	return addr_is_activation(a) || addr_is_runtime(a) ? addr_value(a) : addr_value(a) - 1;
}

#endif
