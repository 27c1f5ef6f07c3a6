/* symcache: the one symbolization cache of every mode (the profile builder
 * after sampling, --top while it samples, --dump).
 *
 * The caller adds the processes whose addresses it will look up, in the
 * order they were seen (symcache_add_process); an address is looked up in
 * the newest process of its pid. A process's symbolizer is made at its
 * first address (most processes of a --children run have no sample), and
 * made again when its mappings changed since (a library loaded while --top
 * runs). An address in a binary with a build-id is known by (build-id, file
 * offset): seen before, in any process, its frames come from the cache; not
 * seen, it is looked up in the first process that mapped the same part of
 * the same binary. So a binary's debug information is loaded once, not once
 * per process.
 *
 * Each lookup's frames and module are the cache's own copies (strings
 * interned), valid until symcache_free; a caller keys what it builds from
 * them by (pid, address) itself (addrmap.h). */
#ifndef CSAMPLER_SYMCACHE_H
#define CSAMPLER_SYMCACHE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "procmaps.h"
#include "symbolize.h"

/* Frames kept per address (the inline chain, innermost first). */
#define SYMCACHE_MAX_FRAMES 64

struct symcache_result {
	const struct symbol_frame *frames;  /* innermost first; n >= 1 (an address
	                                     * nothing knows is one frame "0xADDR") */
	size_t n;
	bool found;                     /* a symbolizer gave the frames */
	bool has_module;                /* the address is in a mapping: module is set */
	struct symbol_module module;
	bool jit;                       /* a frame came from a perf map */
	bool resolved;                  /* every frame has a real name */
};

struct symcache;
struct ksyms;

struct symcache *symcache_new(const struct symbolize_options *so, int verbose);
void symcache_free(struct symcache *c);

/* Look addresses of PM's process up from now on (PM outlives the cache).
 * 0, or -1 out of memory. */
int symcache_add_process(struct symcache *c, const struct procmaps *pm);
/* Name the kernel's frames with K, read by a recorder that outlives the
 * cache, instead of reading /proc/kallsyms again (5 MB, 0.1 s of CPU);
 * NULL changes nothing. */
void symcache_share_kernel(struct symcache *c, const struct ksyms *k);
/* How many processes were added. */
size_t symcache_nprocesses(const struct symcache *c);
/* Free the symbolizers (their files and debug information) of the
 * processes that are gone (procmaps_is_gone): once what they sampled is
 * built, nothing of theirs is looked up again. What is known by build-id
 * stays. */
void symcache_release_gone(struct symcache *c);

/* ADDR (stored form, address.h) of process PID. 0, or -1 out of memory. */
int symcache_lookup(struct symcache *c, pid_t pid, uint64_t addr, struct symcache_result *out);
/* The mapping ADDR of PID falls in (symbolizer_module), without looking the
 * address up; false if none. */
bool symcache_module(struct symcache *c, pid_t pid, uint64_t addr, struct symbol_module *out);

/* The kernel frames of TEXT (LEN bytes of /proc/TID/stack), as address.h's
 * kernel return addresses: at most MAX into OUT, their count (0 where
 * /proc/kallsyms cannot place them: ksyms_stack). */
size_t symcache_kernel_stack(struct symcache *c, const char *text, size_t len, uint64_t *out,
			     size_t max);

/* MOD has no symbols (symbol_module.unnamed): true the first time it is
 * told of MOD's file (by path), so it is said once a run, for the first
 * SYMCACHE_UNNAMED_SAID files; symcache_more_unnamed says whether others
 * came after them. */
#define SYMCACHE_UNNAMED_SAID 5
bool symcache_first_unnamed(struct symcache *c, const struct symbol_module *mod);
bool symcache_more_unnamed(const struct symcache *c);

#endif
