/* pprof_read: a pprof profile (profile.proto, gzipped or not: csampler's,
 * Go's runtime/pprof and net/http/pprof, pprof-rs) read back into the
 * profile the writers see (profile.h), so a recording can become any format
 * afterwards (-i).
 *
 * The bytes come from anywhere: the gzip stream and the message are
 * bounded (PPROF_READ_MAX_BYTES each), and so is what is built from them
 * (protobuf-c's structures at most 16 times the message's size and 64 MB,
 * a location's lines 256, a name or path 4096 bytes, the counts' total in
 * nanoseconds an int64); protobuf-c checks the wire format,
 * and every string index, id and reference is checked before use (a bad
 * one refuses the whole file, saying which). A time profile is read: the
 * value kept is the sample count (a "count" sample type), with the period
 * of its "nanoseconds" period type, or one nanoseconds value turned into
 * periods; any other profile (heap bytes, objects, contentions) keeps its
 * default value as it is, its type and unit (profile.value_type). Threads come from
 * the sample labels csampler writes (thread, pid, tid), else one thread
 * named after the program; the "[truncated]" root csampler adds is read as
 * the sample's truncated mark again. Locations without lines get theirs
 * from RESOLVE when given (resymbolize: the mappings' files), else keep
 * their address (shown as such). Pure but for the allocator and RESOLVE;
 * fuzzed (fuzz_pprof_read). */
#ifndef CSAMPLER_PPROF_READ_H
#define CSAMPLER_PPROF_READ_H
#include <stddef.h>
#include <stdint.h>

#include "profile.h"

#define PPROF_READ_MAX_BYTES ((size_t)1 << 30)   /* a message, inflated */

/* Lines for a location the file gives none: FN writes at most MAX lines
 * (innermost first, their functions added to P) for ADDRESS of mapping
 * MAPPING (an index into P's mappings) and returns how many; 0 keeps the
 * bare address. */
struct pprof_read_resolve {
	size_t (*fn)(void *ctx, struct profile *p, uint32_t mapping, uint64_t address,
		     struct profile_line *lines, size_t max);
	void *ctx;
};

/* What was read but not kept: the keys of sample labels that are not the
 * same on every sample (Go's pprof.Do labels, a heap profile's bytes), as
 * the file spells them, comma-joined (the first few), and how many. */
#define PPROF_READ_VARYING_MAX 8   /* keys named in pprof_read_info at most */
struct pprof_read_info {
	char varying[128];
	size_t nvarying;
};

/* The profile in DATA[0, LEN) (gzip or not), or NULL with the reason in
 * ERR (one line, without the file's name). MAX_DEPTH bounds the frames kept
 * of each stack (a longer one is marked truncated). String labels that
 * every sample carries with one value become the profile's labels (as
 * --label's); others are said in INFO. RESOLVE and INFO may be NULL. */
struct profile *pprof_read(const uint8_t *data, size_t len, unsigned max_depth,
			   const struct pprof_read_resolve *resolve, struct pprof_read_info *info,
			   char *err, size_t errsz);

#endif
