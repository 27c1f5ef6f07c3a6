/* resymbolize: names for the bare addresses of a profile read back (-i),
 * from the files its mappings name, as pprof does with local binaries.
 *
 * A profile recorded with --addresses (or by a tool that does not
 * symbolize) has locations with an address and a mapping but no lines.
 * Each mapping's file is looked for as pprof looks (PPROF_BINARY_PATH's
 * DIR/BUILD-ID/NAME, DIR/NAME, DIR/PATH), then at its path, then as
 * /usr/lib/debug/.build-id/XX/REST.debug, at the mapping's first such
 * address; a candidate is opened only if it is a regular file (a link to a
 * device, FIFO or directory is never opened), and the first whose build-id
 * is the mapping's (where both have one) is used: its frames come from the
 * symbolizer (symbol tables, DWARF inline chains and lines, separate debug
 * files, demangling), exactly as for a recording. A mapping whose file is
 * missing or another build keeps its addresses; resymbolize_report says
 * which, one line each. Bounded by the profile's mappings (at most
 * MAX_FILES files open). */
#ifndef CSAMPLER_RESYMBOLIZE_H
#define CSAMPLER_RESYMBOLIZE_H
#include <stddef.h>
#include <stdint.h>

#include "profile.h"
#include "symbolize.h"

struct resymbolize;

/* NULL with errno on failure. OPT as for a recording (--no-inline). */
struct resymbolize *resymbolize_new(const struct symbolize_options *opt);
void resymbolize_free(struct resymbolize *rs);

/* pprof_read's resolver (struct pprof_read_resolve, CTX an rs): the lines
 * of ADDRESS in P's mapping MAPPING, innermost first, at most MAX, their
 * functions added to P; 0 when it has none (the address stays). Sets the
 * mapping's has_* flags from what was found. */
size_t resymbolize_lines(void *ctx, struct profile *p, uint32_t mapping, uint64_t address,
			 struct profile_line *lines, size_t max);

/* One line on stderr for each mapping whose addresses stayed bare because
 * its file is missing, unreadable or another build (at most a few, then
 * how many more), naming INPUT. */
void resymbolize_report(const struct resymbolize *rs, const struct profile *p, const char *input);

#endif
