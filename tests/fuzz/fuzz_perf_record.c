/* libFuzzer harness for perf_record (a perf_event ring and its records:
 * written by the kernel, the stack copies by the target). The input is a
 * tail and a head (8 bytes each) and a ring of the largest power of two
 * that fits in the rest; every record taken is parsed, and must lie within
 * the ring or the scratch buffer, a sample's stack copy and call chain
 * within its record.
 * The input is also parsed as one record. Built and run by make fuzz;
 * replayed over corpus/perf_record/ by make check. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perf_record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_parse(const uint8_t *rec, size_t len)
{
	struct perf_sample_view s;
	uint64_t lost;
	if (perf_record_parse(rec, len, &s, &lost) == PERF_REC_SAMPLE &&
	    (s.stack < rec || s.stack_size > len || (size_t)(s.stack - rec) > len - s.stack_size ||
	     s.stack_valid > s.stack_size || s.chain < rec || s.nchain > len / 8 ||
	     (size_t)(s.chain - rec) > len - 8 * s.nchain))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_parse(data, size);
	uint64_t tail, head;
	if (size < 16 + 8)
		return 0;
	memcpy(&tail, data, 8);
	memcpy(&head, data + 8, 8);
	size_t ring = 8;
	while (ring * 2 <= size - 16)
		ring *= 2;
	uint8_t *copy = malloc(ring), *scratch = malloc(PERF_RECORD_MAX);
	if (!copy || !scratch)
		abort();
	memcpy(copy, data + 16, ring);
	const uint8_t *rec;
	size_t len;
	for (int n = 0; n < 10000; n++) {
		uint64_t before = tail;
		if (!perf_ring_next(copy, ring, &tail, head, scratch, &rec, &len))
			break;
		if (len < 8 || len > ring || tail - before != len ||
		    !((rec >= copy && rec + len <= copy + ring) || rec == scratch))
			abort();
		check_parse(rec, len);
	}
	free(copy);
	free(scratch);
	return 0;
}
