/* intern: one copy of each distinct string, with a dense index (0, 1, ...
 * in the order first seen); and the project's two hashes: hash_bytes, the
 * one hash of text (FNV-1a, 64 bits), and hash_u64, the one mixer of
 * integers (MurmurHash3's finalizer).
 *
 * The copies live in an arena until intern_free: NUL-terminated, never
 * moved, strs[i] the i-th (an array pprof's string_table can point at).
 * Lookup is open addressing on hash_bytes; a string may hold any byte but
 * NUL. Pure, unit-tested. Zero-initialize a table before use. */
#ifndef CSAMPLER_INTERN_H
#define CSAMPLER_INTERN_H
#include <stddef.h>
#include <stdint.h>

uint64_t hash_bytes(const void *p, size_t n);
uint64_t hash_u64(uint64_t x);

struct intern_chunk;

struct intern {
	char **strs;                 /* by index */
	size_t n, cap;
	uint32_t *slot;              /* index + 1, 0 = empty; nslots a power of two */
	size_t nslots;
	struct intern_chunk *chunks;
};

/* The index of S[0, LEN), added if new; -1 out of memory (or past 2^32 - 2
 * strings). */
int64_t intern_index(struct intern *t, const char *s, size_t len);
/* The index of S[0, LEN) if it is interned, else -1 (nothing added). */
int64_t intern_find(const struct intern *t, const char *s, size_t len);
/* The interned copy of S[0, LEN); NULL out of memory. */
const char *intern_string(struct intern *t, const char *s, size_t len);
void intern_free(struct intern *t);

#endif
