/* profile: the symbolized profile, the only thing writers see (pure).
 *
 * Shaped like pprof: functions, mappings and locations are interned tables;
 * a location is one address with its lines (innermost inline frame first);
 * a sample is a thread, a stack of locations (leaf first) and a count of
 * sampling periods (the one weight every writer shows: time is count x
 * period_nanos). Adding an existing function/mapping/location/
 * thread returns the existing index. Strings are copied in. Indexes are
 * 0-based. Allocation failure is reported through the -1/NULL/PROFILE_NONE
 * returns.
 *
 * Bounded memory: the interned tables grow with the code seen (unique
 * addresses), never with the run's length. Samples, which do grow with the
 * number of distinct stacks, are appended as records to a buffer of a fixed
 * size; when it is full, it goes to a temp file in $TMPDIR (unlinked at
 * creation) and the buffer is reused. Samples are kept as added, never
 * merged (the writers merge equal stacks), and read back in order by
 * profile_foreach_sample, as often as needed. */
#ifndef CSAMPLER_PROFILE_H
#define CSAMPLER_PROFILE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROFILE_NONE UINT32_MAX

struct profile_function {
	const char *name;        /* demangled */
	const char *system_name; /* mangled */
	const char *filename;    /* may be "" */
	int64_t start_line;
};

struct profile_mapping {
	uint64_t start, limit, offset;
	const char *filename;
	const char *build_id;    /* lowercase hex or "" */
	bool has_functions, has_filenames, has_line_numbers, has_inline_frames;
};

struct profile_line {
	uint32_t function;
	int64_t line;
};

struct profile_location {
	uint64_t address;        /* the address as sampled (activation bit cleared) */
	uint32_t mapping;        /* or PROFILE_NONE */
	uint32_t first_line;     /* index into profile.lines */
	uint32_t nlines;         /* innermost first; nlines - 1 frames are inlined */
	bool jit;
};

/* Kernel code's addresses (address.h's kernel frames, and a kernel frame
 * in a -i profile): at and above PROFILE_KERNEL_START, where no user
 * address is. */
#define PROFILE_KERNEL_START UINT64_C(0xff00000000000000)
static inline bool profile_location_kernel(const struct profile_location *l)
{
	return l->address >= PROFILE_KERNEL_START;
}
static inline bool profile_mapping_kernel(const struct profile_mapping *m)
{
	return m->start >= PROFILE_KERNEL_START;
}

struct profile_thread {
	int32_t pid;
	int32_t tid;             /* 0 when several threads were grouped under name */
	const char *name;
	const char *process;     /* command name of pid */
};

#define PROFILE_SAMPLE_TRUNCATED 0x1u
/* Why a truncated stack stops (with PROFILE_SAMPLE_TRUNCATED): */
#define PROFILE_SAMPLE_CUT_DEPTH  0x2u  /* --max-depth */
#define PROFILE_SAMPLE_CUT_WINDOW 0x4u  /* the copied stack window */
#define PROFILE_SAMPLE_NO_INFO    0x8u  /* no unwind information, no frame pointer */
#define PROFILE_SAMPLE_CUT_COPY   0x10u /* with CUT_WINDOW: perf's copy ended at a page
                                         * the thread never touched */
#define PROFILE_SAMPLE_BASE       0x20u /* a --diff profile: a sample of the base */

struct profile_sample {
	uint32_t thread;
	uint32_t nlocs;
	uint32_t flags;
	uint64_t count;          /* periods */
	const uint32_t *locs;    /* nlocs location indexes, leaf first */
	uint64_t time_nanos;     /* when it was taken, ns after profile.time_nanos;
				  * PROFILE_NO_TIME when unknown */
};

#define PROFILE_NO_TIME UINT64_MAX

struct profile_label {
	const char *key, *value;
};

/* Default size of the sample buffer (profile_set_sample_buffer). */
#define PROFILE_SAMPLE_BUFFER (1024 * 1024)

struct profile {
	struct profile_function *functions; size_t nfunctions;
	struct profile_mapping *mappings;   size_t nmappings;
	struct profile_location *locations; size_t nlocations;
	struct profile_line *lines;         size_t nlines;
	struct profile_thread *threads;     size_t nthreads;
	size_t nsamples;                    /* records added (not merged) */

	/* metadata */
	const char *command;     /* the target's command line, space-joined */
	int32_t pid;
	uint64_t time_nanos;     /* start of sampling, ns since the epoch */
	uint64_t duration_nanos;
	uint64_t period_nanos;   /* 1e9 / rate */
	bool wall;               /* counts are wall-clock time (--idle), not CPU */
	const char *value_type;  /* NULL: counts are periods of time (above); else
				  * what a count is, read with -i from another
				  * kind of profile (e.g. "inuse_space"), and */
	const char *value_unit;  /* its unit ("bytes", "count"); period_nanos 0 */
	bool timeline;           /* samples are one per sample taken, in time order,
				  * each with its time_nanos (for a timeline view) */
	uint64_t total_samples;  /* sum of sample counts */
	uint64_t truncated_samples; /* of them, those marked PROFILE_SAMPLE_TRUNCATED */
	bool diff;               /* --diff: PROFILE_SAMPLE_BASE samples are the base,
				  * scaled to the others' total (base_total) */
	uint64_t base_total;     /* of the base samples (total_samples excludes them) */
	const char *base_name, *new_name; /* --diff: the two inputs, as given */
	struct profile_label *labels;  /* the user's (--label), on every sample */
	size_t nlabels;

	void *priv;              /* interning tables, the sample store */
};

struct profile *profile_new(void);
void profile_free(struct profile *p);

int profile_set_command(struct profile *p, const char *command);
/* Counts are TYPE in UNIT, not time (the strings are copied). 0, or -1. */
int profile_set_value_type(struct profile *p, const char *type, const char *unit);
/* What a count is, in words: "samples" for time; else the unit ("bytes"),
 * or the type where the unit is a bare "count" ("alloc_objects"). */
const char *profile_count_word(const struct profile *p);
/* A label every sample carries (the strings are copied). 0, or -1. */
int profile_add_label(struct profile *p, const char *key, const char *value);
uint32_t profile_add_function(struct profile *p, const char *name, const char *system_name,
			      const char *filename, int64_t start_line);
uint32_t profile_add_mapping(struct profile *p, const struct profile_mapping *m);
/* lines[0] is the innermost frame. */
uint32_t profile_add_location(struct profile *p, uint64_t address, uint32_t mapping,
			      const struct profile_line *lines, size_t nlines, bool jit);
uint32_t profile_add_thread(struct profile *p, int32_t pid, int32_t tid, const char *name,
			    const char *process);
/* Store one sample; locs[0] is the leaf. 0, or -1 with errno: EINVAL for an
 * unknown thread or location, ENOMEM, or the temp file's write error. */
int profile_add_sample(struct profile *p, uint32_t thread, const uint32_t *locs,
		       size_t nlocs, uint32_t flags, uint64_t count);
/* The same with the time it was taken (profile_sample.time_nanos). */
int profile_add_timed_sample(struct profile *p, uint32_t thread, const uint32_t *locs,
			     size_t nlocs, uint32_t flags, uint64_t count, uint64_t time_nanos);
/* --diff: BASE's samples added to DST as PROFILE_SAMPLE_BASE samples, their
 * counts scaled so they add up to DST's total exactly (a share compared
 * with a share); DST becomes a diff profile. 0, or -1 with errno. */
int profile_add_base(struct profile *dst, const struct profile *base);
/* Keep at most BYTES of samples in memory (at least one sample's record is
 * always held). Only before the first sample; 0 or -1 with EBUSY/EINVAL. */
int profile_set_sample_buffer(struct profile *p, size_t bytes);
/* Call fn once per sample, in the order added; the sample (and its locs) is
 * valid during the call only. fn returning non-zero stops the walk and is
 * returned; -1 with errno on a read error of the temp file. */
int profile_foreach_sample(const struct profile *p,
			   int (*fn)(void *ctx, const struct profile_sample *s), void *ctx);

/* A thread's root-frame label for the thread view: "name-tid", or "name" when
 * tid is 0. Writes at most bufsz bytes, returns buf. */
const char *profile_thread_label(const struct profile *p, uint32_t thread, char *buf, size_t bufsz);

#endif
