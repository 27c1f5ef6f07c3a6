/* perf_record: the records of a perf_event ring buffer, read; pure (no
 * I/O), unit-tested and fuzzed.
 *
 * perf_ring_next takes the next whole record between TAIL and HEAD of a
 * ring's data area (a power of two in size), copying one that wraps around
 * the end into SCRATCH. perf_record_parse reads a record of the layout
 * perf_sampler asks for (sample_type TID | CALLCHAIN | REGS_USER |
 * STACK_USER with PERF_RECORD_REGS_MASK, the call chain's user part only)
 * or a lost-samples record. Nothing in a record is
 * trusted: every size is checked against the bytes there are, and a
 * record that does not fit is reported, never read past. */
#ifndef CSAMPLER_PERF_RECORD_H
#define CSAMPLER_PERF_RECORD_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* asm/perf_regs.h's x86 order: AX BX CX DX SI DI BP SP IP FLAGS CS SS
 * (0..11), DS ES FS GS (12..15, refused on x86-64), R8..R15 (16..23). */
#define PERF_RECORD_REGS_MASK (0xfffull | (0xffull << 16))
#define PERF_RECORD_NREGS 20
/* the largest record: its size field is 16 bits */
#define PERF_RECORD_MAX 65535u

enum perf_record_kind {
	PERF_REC_OTHER,                 /* a record we do not use */
	PERF_REC_SAMPLE,
	PERF_REC_LOST,                  /* *lost samples were not written */
	PERF_REC_BAD,                   /* sizes that do not fit */
};

struct perf_sample_view {
	pid_t pid, tid;
	const uint8_t *chain;           /* the kernel's call chain: NCHAIN u64s (not
	                                 * aligned: memcpy them), its context marks
	                                 * (PERF_CONTEXT_*) among the addresses */
	size_t nchain;
	bool user;                      /* user registers (64-bit ABI) are in regs */
	uint64_t regs[PERF_RECORD_NREGS]; /* in the order above, without DS..GS */
	const uint8_t *stack;           /* the copy of the stack from regs' SP */
	size_t stack_size;              /* bytes of it in the record */
	size_t stack_valid;             /* bytes the kernel could copy (<= size) */
};

/* The next record of the ring DATA (SIZE bytes, a power of two) at *TAIL,
 * HEAD being where the kernel stopped writing: into *REC and *LEN (in
 * DATA, or in SCRATCH of PERF_RECORD_MAX bytes when it wraps), *TAIL moved
 * past it. false at the end; also when what is there is no record (its
 * size zero or beyond HEAD), *TAIL then set to HEAD (the rest is skipped). */
bool perf_ring_next(const uint8_t *data, size_t size, uint64_t *tail, uint64_t head,
		    uint8_t *scratch, const uint8_t **rec, size_t *len);

/* Read record REC of LEN bytes (its header included). For a sample, *S
 * (whose stack points into REC); for a lost record, *LOST. */
enum perf_record_kind perf_record_parse(const uint8_t *rec, size_t len,
					struct perf_sample_view *s, uint64_t *lost);

#endif
