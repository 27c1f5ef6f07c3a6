/* pprof_read: a pprof profile (profile.proto, gzipped or not: csampler's,
 * Go's runtime/pprof and net/http/pprof, pprof-rs) read back into the
 * profile the writers see (profile.h), so a recording can become any format
 * afterwards (-i).
 *
 * The bytes come from anywhere: the gzip stream and the message are
 * bounded (PPROF_READ_MAX_BYTES each), protobuf-c checks the wire format,
 * and every string index, id and reference is checked before use (a bad
 * one refuses the whole file, saying which). A time profile is read: the
 * value kept is the sample count (a "count" sample type), with the period
 * of its "nanoseconds" period type, or one nanoseconds value turned into
 * periods; other profiles (heap bytes, ...) are refused. Threads come from
 * the sample labels csampler writes (thread, pid, tid), else one thread
 * named after the program; the "[truncated]" root csampler adds is read as
 * the sample's truncated mark again. Locations without lines keep their
 * address (shown as such). Pure but for the allocator; fuzzed
 * (fuzz_pprof_read). */
#ifndef CSAMPLER_PPROF_READ_H
#define CSAMPLER_PPROF_READ_H
#include <stddef.h>
#include <stdint.h>

#include "profile.h"

#define PPROF_READ_MAX_BYTES ((size_t)1 << 30)   /* a message, inflated */

/* The profile in DATA[0, LEN) (gzip or not), or NULL with the reason in
 * ERR (one line, without the file's name). MAX_DEPTH bounds the frames kept
 * of each stack (a longer one is marked truncated). */
struct profile *pprof_read(const uint8_t *data, size_t len, unsigned max_depth, char *err,
			   size_t errsz);

#endif
