/* Unit tests for perf_record: a sample with user registers and a stack
 * copy read field by field; one without a user context; lost records of
 * both kinds; a record of another type skipped; sizes that do not fit
 * (a stack past the record, a valid part larger than the copy, a record
 * shorter than its fields) refused; the ring: records taken in order, one
 * that wraps around the end copied whole into scratch, and a zero size, a
 * size past the head and a head more than a ring ahead each ending the
 * read at the head. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <linux/perf_event.h>
#include <string.h>

#include "perf_record.h"

/* A record builder over a buffer. */
struct rb {
	uint8_t buf[4096];
	size_t len;
};

static void put(struct rb *b, const void *p, size_t n)
{
	assert_true(b->len + n <= sizeof b->buf);
	memcpy(b->buf + b->len, p, n);
	b->len += n;
}

static void put64(struct rb *b, uint64_t v)
{
	put(b, &v, sizeof v);
}

static void header(struct rb *b, uint32_t type)
{
	struct perf_event_header h = { .type = type };
	b->len = 0;
	put(b, &h, sizeof h);
}

/* set the header's size to what was put */
static void seal(struct rb *b)
{
	struct perf_event_header h;
	memcpy(&h, b->buf, sizeof h);
	h.size = (uint16_t)b->len;
	memcpy(b->buf, &h, sizeof h);
}

/* a sample of pid 100, tid 101, a call chain of the user's context mark
 * and 3 addresses (2000 + i), with ABI, registers 1000 + i, and a stack
 * copy of SIZE bytes (0x5a...) of which VALID were copied */
static void sample(struct rb *b, uint64_t abi, uint64_t size, uint64_t valid)
{
	header(b, PERF_RECORD_SAMPLE);
	put64(b, (uint64_t)101 << 32 | 100);
	put64(b, 4);
	put64(b, (uint64_t)-512);   /* PERF_CONTEXT_USER */
	for (uint64_t i = 0; i < 3; i++)
		put64(b, 2000 + i);
	put64(b, abi);
	if (abi != PERF_SAMPLE_REGS_ABI_NONE)
		for (uint64_t i = 0; i < PERF_RECORD_NREGS; i++)
			put64(b, 1000 + i);
	put64(b, size);
	for (uint64_t i = 0; i < size; i++)
		put(b, "\x5a", 1);
	if (size)
		put64(b, valid);
	seal(b);
}

/* What perf_record_parse makes of the first LEN bytes of B. */
struct parsed {
	enum perf_record_kind kind;
	struct perf_sample_view s;
	uint64_t lost;
};

static struct parsed parse(const struct rb *b, size_t len)
{
	struct parsed p = { .lost = 0 };
	p.kind = perf_record_parse(b->buf, len, &p.s, &p.lost);
	return p;
}

static void test_sample(void **state)
{
	struct rb b;
	struct parsed p;
	(void)state;

	sample(&b, PERF_SAMPLE_REGS_ABI_64, 64, 40);
	p = parse(&b, b.len);
	assert_int_equal(p.kind, PERF_REC_SAMPLE);
	assert_int_equal(p.s.pid, 100);
	assert_int_equal(p.s.tid, 101);
	assert_true(p.s.user);
	for (int i = 0; i < PERF_RECORD_NREGS; i++)
		assert_int_equal(p.s.regs[i], 1000 + i);
	assert_int_equal(p.s.stack_size, 64);
	assert_int_equal(p.s.stack_valid, 40);
	assert_int_equal(p.s.nchain, 4);
	uint64_t chain[4];
	memcpy(chain, p.s.chain, sizeof chain);
	assert_true(chain[0] == (uint64_t)-512 && chain[1] == 2000 && chain[3] == 2002);
	assert_ptr_equal(p.s.stack, b.buf + 8 + 8 + 8 + 32 + 8 + 8 * PERF_RECORD_NREGS + 8);
	assert_int_equal(p.s.stack[0], 0x5a);
	assert_int_equal(p.s.stack[63], 0x5a);
}

static void test_sample_without_user_context(void **state)
{
	struct rb b;
	struct parsed p;
	(void)state;

	sample(&b, PERF_SAMPLE_REGS_ABI_NONE, 0, 0);
	p = parse(&b, b.len);
	assert_int_equal(p.kind, PERF_REC_SAMPLE);
	assert_false(p.s.user);
	assert_int_equal(p.s.tid, 101);
	assert_int_equal(p.s.stack_size, 0);
	/* a 32-bit task: registers there, not ours to unwind */
	sample(&b, PERF_SAMPLE_REGS_ABI_32, 16, 16);
	p = parse(&b, b.len);
	assert_int_equal(p.kind, PERF_REC_SAMPLE);
	assert_false(p.s.user);
	assert_int_equal(p.s.stack_size, 16);
}

static void test_lost_and_other(void **state)
{
	struct rb b;
	struct parsed p;
	(void)state;

	header(&b, PERF_RECORD_LOST);
	put64(&b, 7);    /* id */
	put64(&b, 42);
	seal(&b);
	p = parse(&b, b.len);
	assert_int_equal(p.kind, PERF_REC_LOST);
	assert_int_equal(p.lost, 42);
	header(&b, PERF_RECORD_LOST_SAMPLES);
	put64(&b, 5);
	seal(&b);
	p = parse(&b, b.len);
	assert_int_equal(p.kind, PERF_REC_LOST);
	assert_int_equal(p.lost, 5);
	header(&b, PERF_RECORD_COMM);
	put64(&b, 0);
	put(&b, "name\0\0\0\0", 8);
	seal(&b);
	p = parse(&b, b.len);
	assert_int_equal(p.kind, PERF_REC_OTHER);
	/* a lost record cut short */
	header(&b, PERF_RECORD_LOST);
	put64(&b, 7);
	seal(&b);
	p = parse(&b, b.len);
	assert_int_equal(p.kind, PERF_REC_BAD);
	p = parse(&b, 4);
	assert_int_equal(p.kind, PERF_REC_BAD);
}

static void test_sizes_that_do_not_fit(void **state)
{
	struct rb b;
	struct parsed p;
	(void)state;

	/* valid part larger than the copy */
	sample(&b, PERF_SAMPLE_REGS_ABI_64, 16, 24);
	p = parse(&b, b.len);
	assert_int_equal(p.kind, PERF_REC_BAD);
	/* the copy's size past the record's end */
	sample(&b, PERF_SAMPLE_REGS_ABI_64, 64, 64);
	size_t size_at = 8 + 8 + 8 + 32 + 8 + 8 * PERF_RECORD_NREGS;
	uint64_t huge = UINT64_MAX - 3;
	memcpy(b.buf + size_at, &huge, sizeof huge);
	p = parse(&b, b.len);
	assert_int_equal(p.kind, PERF_REC_BAD);
	uint64_t past = 65;
	memcpy(b.buf + size_at, &past, sizeof past);
	p = parse(&b, b.len);
	assert_int_equal(p.kind, PERF_REC_BAD);
	/* a call chain longer than the record */
	sample(&b, PERF_SAMPLE_REGS_ABI_64, 16, 16);
	memcpy(b.buf + 16, &huge, sizeof huge);
	p = parse(&b, b.len);
	assert_int_equal(p.kind, PERF_REC_BAD);
	uint64_t long_chain = (b.len - 24) / 8 + 1;
	memcpy(b.buf + 16, &long_chain, sizeof long_chain);
	p = parse(&b, b.len);
	assert_int_equal(p.kind, PERF_REC_BAD);
	/* every cut of a good sample is refused, never read past */
	sample(&b, PERF_SAMPLE_REGS_ABI_64, 32, 32);
	for (size_t n = 0; n < b.len; n++) {
		p = parse(&b, n);
		assert_int_equal(p.kind, PERF_REC_BAD);
	}
	p = parse(&b, b.len);
	assert_int_equal(p.kind, PERF_REC_SAMPLE);
}

/* Write record R at ring offset OFF of DATA (SIZE bytes), wrapping. */
static void ring_put(uint8_t *data, size_t size, uint64_t off, const struct rb *r)
{
	for (size_t i = 0; i < r->len; i++)
		data[(off + i) & (size - 1)] = r->buf[i];
}

static void test_ring(void **state)
{
	uint8_t data[512], scratch[PERF_RECORD_MAX];
	struct rb a, w;
	const uint8_t *rec;
	size_t len;
	(void)state;

	memset(data, 0, sizeof data);
	sample(&a, PERF_SAMPLE_REGS_ABI_64, 40, 40);       /* 240 bytes: 200..440 */
	sample(&w, PERF_SAMPLE_REGS_ABI_NONE, 64, 64);     /* 104 bytes: 440..32, wrapped */
	/* the counters only grow: the tail is 3 rings on */
	uint64_t tail = 3 * 512 + 200, head = tail + a.len + w.len;
	ring_put(data, sizeof data, tail, &a);
	ring_put(data, sizeof data, tail + a.len, &w);
	assert_true(perf_ring_next(data, sizeof data, &tail, head, scratch, &rec, &len));
	assert_int_equal(len, a.len);
	assert_ptr_equal(rec, data + 200);
	assert_memory_equal(rec, a.buf, a.len);
	assert_true(perf_ring_next(data, sizeof data, &tail, head, scratch, &rec, &len));
	assert_int_equal(len, w.len);
	assert_ptr_equal(rec, scratch);
	assert_memory_equal(rec, w.buf, w.len);
	assert_int_equal(tail, head);
	assert_false(perf_ring_next(data, sizeof data, &tail, head, scratch, &rec, &len));
	assert_int_equal(tail, head);
}

static void test_ring_garbage(void **state)
{
	uint8_t data[256], scratch[PERF_RECORD_MAX];
	const uint8_t *rec;
	size_t len;
	struct rb r;
	(void)state;

	/* a zero size */
	memset(data, 0, sizeof data);
	uint64_t tail = 0, head = 64;
	assert_false(perf_ring_next(data, sizeof data, &tail, head, scratch, &rec, &len));
	assert_int_equal(tail, head);
	/* a size past the head */
	header(&r, PERF_RECORD_SAMPLE);
	put64(&r, 0);
	seal(&r);
	ring_put(data, sizeof data, 0, &r);
	tail = 0;
	head = 8;
	assert_false(perf_ring_next(data, sizeof data, &tail, head, scratch, &rec, &len));
	assert_int_equal(tail, head);
	/* a head more than a ring ahead */
	tail = 0;
	head = 1000;
	assert_false(perf_ring_next(data, sizeof data, &tail, head, scratch, &rec, &len));
	assert_int_equal(tail, head);
	/* less than a header left: nothing taken, nothing skipped */
	tail = 0;
	head = 4;
	assert_false(perf_ring_next(data, sizeof data, &tail, head, scratch, &rec, &len));
	assert_int_equal(tail, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sample),
		cmocka_unit_test(test_sample_without_user_context),
		cmocka_unit_test(test_lost_and_other),
		cmocka_unit_test(test_sizes_that_do_not_fit),
		cmocka_unit_test(test_ring),
		cmocka_unit_test(test_ring_garbage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
