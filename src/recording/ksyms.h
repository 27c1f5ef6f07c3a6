/* ksyms: the kernel's function symbols, from /proc/kallsyms, to name the
 * kernel's frames (--backend=perf's kernel call chains, the waits read
 * from /proc/TID/stack).
 *
 * ksyms_parse reads kallsyms' text ("ADDRESS TYPE NAME [MODULE]" lines) and
 * keeps the code symbols (types t, T, w, W) sorted by address; it trusts no
 * line (a bad one is skipped, the count and lengths are bounded) and is
 * pure, unit-tested. Where the kernel hides the addresses
 * (kernel.kptr_restrict) they read as zero: ksyms_hidden. A symbol ends
 * where the next one starts, and the last of a module (or of the kernel
 * image) at its region's end. Strings live until ksyms_free. */
#ifndef CSAMPLER_KSYMS_H
#define CSAMPLER_KSYMS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The pprof mapping of the kernel image, as perf names it. */
#define KSYMS_KERNEL_MAPPING "[kernel.kallsyms]"
/* The most of /proc/kallsyms read (about 10 MB on a distribution kernel
 * with its modules) and the most symbols kept. */
#define KSYMS_READ_MAX (64u << 20)
#define KSYMS_MAX (1u << 22)

struct ksyms;

struct ksyms_symbol {
	const char *name;
	const char *module;      /* NULL: the kernel image */
	uint64_t start;          /* the symbol's address */
	uint64_t region_start, region_limit;  /* its module's (or image's) code */
};

/* The code symbols of TEXT (LEN bytes). NULL only out of memory. */
struct ksyms *ksyms_parse(const char *text, size_t len);
/* /proc/kallsyms read and parsed; NULL with errno when it cannot be read
 * (or out of memory). */
struct ksyms *ksyms_load(void);
void ksyms_free(struct ksyms *k);

/* No code symbol with a non-zero address: the kernel hides them (or none
 * were read). */
bool ksyms_hidden(const struct ksyms *k);
/* The symbol ADDR is in; false if it is in none (before the first, or past
 * its region). */
bool ksyms_lookup(const struct ksyms *k, uint64_t addr, struct ksyms_symbol *out);
/* The address of the function NAME (of MODULE, or the kernel image when
 * NULL), 0 if none: to place a /proc/TID/stack line's name+0xOFF. */
uint64_t ksyms_address(const struct ksyms *k, const char *name, const char *module);
/* The frames of TEXT (LEN bytes of /proc/TID/stack: "[<0>] name+0xOFF/0xSIZE
 * [module]" lines, innermost first), placed by K, as address.h's kernel
 * return addresses: at most MAX into OUT, their count. A line K cannot
 * place (a name it does not know, no line at all) is left out. */
size_t ksyms_stack(const struct ksyms *k, const char *text, size_t len, uint64_t *out, size_t max);

#endif
