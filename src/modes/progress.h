/* progress: a status line on stderr for a phase after sampling that takes
 * more than a second (naming the samples' addresses, which reads the
 * programs' symbols and debug files; writing an output: 60,000 stacks of 66
 * frames take 1.2 s as folded stacks), as the line
 * drawn while sampling. A thread of its own redraws it every quarter of a
 * second from what the phase publishes (how far: DONE of TOTAL, and what it
 * reads now), so a single long read shows too; the line is erased when the
 * phase ends. Nothing is drawn for a phase done within the second, nor
 * when the caller says not to (stderr not a terminal, --quiet). */
#ifndef CSAMPLER_PROGRESS_H
#define CSAMPLER_PROGRESS_H
#include <stdbool.h>
#include <stdint.h>

struct progress;

/* Start phase PHASE ("naming the addresses of", a static string); NULL when
 * not ENABLED, or when no thread can be made (every call takes NULL). */
struct progress *progress_start(bool enabled, const char *phase);
/* How far: DONE of TOTAL samples (TOTAL 0: not known). */
void progress_count(struct progress *p, uint64_t done, uint64_t total);
/* What it reads now (a path, copied; target-controlled: escaped when drawn). */
void progress_reading(struct progress *p, const char *what);
/* What it does now: VERB (a static string: "reading", "to") and WHAT (a
 * path, copied and escaped as above). */
void progress_doing(struct progress *p, const char *verb, const char *what);
/* The phase is over: the line (if drawn) erased, the thread gone. */
void progress_end(struct progress *p);
#endif
