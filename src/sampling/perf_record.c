/* perf_record: see perf_record.h. */
#include "config.h"

#include <linux/perf_event.h>
#include <string.h>

#include "perf_record.h"

static bool take_u64(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	if ((size_t)(end - *p) < sizeof *v)
		return false;
	memcpy(v, *p, sizeof *v);
	*p += sizeof *v;
	return true;
}

bool perf_ring_next(const uint8_t *data, size_t size, uint64_t *tail, uint64_t head,
		    uint8_t *scratch, const uint8_t **rec, size_t *len)
{
	struct perf_event_header h;
	/* a head more than a ring ahead is no head the kernel wrote */
	if (head - *tail > size || head - *tail < sizeof h) {
		if (head - *tail > size)
			*tail = head;
		return false;
	}
	size_t off = (size_t)(*tail & (size - 1));
	/* records are 8-byte aligned and the ring a power of two: a header
	 * is never split; if it were (a corrupt tail), copy it in two */
	size_t first = size - off < sizeof h ? size - off : sizeof h;
	memcpy(&h, data + off, first);
	memcpy((uint8_t *)&h + first, data, sizeof h - first);
	if (h.size < sizeof h || h.size > head - *tail) {
		*tail = head;
		return false;
	}
	if (off + h.size <= size) {
		*rec = data + off;
	} else {
		first = size - off;
		memcpy(scratch, data + off, first);
		memcpy(scratch + first, data, h.size - first);
		*rec = scratch;
	}
	*len = h.size;
	*tail += h.size;
	return true;
}

static enum perf_record_kind parse_sample(const uint8_t *p, const uint8_t *end,
					  struct perf_sample_view *s)
{
	uint64_t ids, nr, abi, size, valid = 0;
	if (!take_u64(&p, end, &ids) || !take_u64(&p, end, &nr) || nr > (uint64_t)(end - p) / 8)
		return PERF_REC_BAD;
	s->pid = (pid_t)(uint32_t)ids;
	s->tid = (pid_t)(uint32_t)(ids >> 32);
	s->chain = p;
	s->nchain = (size_t)nr;
	p += 8 * nr;
	if (!take_u64(&p, end, &abi))
		return PERF_REC_BAD;
	/* ABI_NONE: no user context; ABI_32: a 32-bit task, with registers
	 * we do not unwind (read past them all the same) */
	s->user = abi == PERF_SAMPLE_REGS_ABI_64;
	if (abi != PERF_SAMPLE_REGS_ABI_NONE)
		for (size_t i = 0; i < PERF_RECORD_NREGS; i++)
			if (!take_u64(&p, end, &s->regs[i]))
				return PERF_REC_BAD;
	if (!take_u64(&p, end, &size) || size > (uint64_t)(end - p))
		return PERF_REC_BAD;
	s->stack = p;
	p += size;
	if (size && (!take_u64(&p, end, &valid) || valid > size))
		return PERF_REC_BAD;
	s->stack_size = (size_t)size;
	s->stack_valid = (size_t)valid;
	return PERF_REC_SAMPLE;
}

enum perf_record_kind perf_record_parse(const uint8_t *rec, size_t len,
					struct perf_sample_view *s, uint64_t *lost)
{
	struct perf_event_header h;
	if (len < sizeof h)
		return PERF_REC_BAD;
	memcpy(&h, rec, sizeof h);
	const uint8_t *p = rec + sizeof h, *end = rec + len;
	uint64_t v;
	switch (h.type) {
	case PERF_RECORD_SAMPLE:
		return parse_sample(p, end, s);
	case PERF_RECORD_LOST:  /* id, lost */
		if (!take_u64(&p, end, &v) || !take_u64(&p, end, lost))
			return PERF_REC_BAD;
		return PERF_REC_LOST;
	case PERF_RECORD_LOST_SAMPLES:
		if (!take_u64(&p, end, lost))
			return PERF_REC_BAD;
		return PERF_REC_LOST;
	default:
		return PERF_REC_OTHER;
	}
}
