/*
 * Reading a perf mmap ring: samples in order, records that wrap around
 * the end of the ring, LOST and throttle records, and a corrupt header,
 * whose remains are counted as lost rather than read or left behind;
 * samples with user registers and a copy of the stack, one whose copy
 * wraps (read from the scratch buffer), one of a kernel thread (no
 * registers, no stack) and one whose copy claims more than it holds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <linux/perf_event.h>
#include <string.h>

#include "../../src/runtime/backend/perf_ring.h"

#define SIZE 256	/* data bytes: 16 sample records */

struct fake {
	struct perf_event_mmap_page meta;
	unsigned char data[SIZE];
	struct perf_ring ring;
	uint64_t ips[64];
	size_t n;
};

static void setup(struct fake *f, uint64_t start)
{
	memset(f, 0, sizeof *f);
	f->meta.data_head = f->meta.data_tail = start;
	f->ring.meta = &f->meta;
	f->ring.data = f->data;
	f->ring.data_size = SIZE;
}

/* Write a record at data_head, wrapping as the kernel does. */
static void put(struct fake *f, uint32_t type, uint16_t size, const uint64_t *fields)
{
	unsigned char rec[64];
	struct perf_event_header h = { .type = type, .misc = 0, .size = size };
	memcpy(rec, &h, sizeof h);
	memcpy(rec + sizeof h, fields, size - sizeof h);
	for (uint16_t i = 0; i < size; i++)
		f->data[(f->meta.data_head + i) % SIZE] = rec[i];
	f->meta.data_head += size;
}

static void put_sample(struct fake *f, uint64_t ip)
{
	put(f, PERF_RECORD_SAMPLE, 16, &ip);
}

static void on_sample(void *arg, const struct ring_sample *s)
{
	struct fake *f = arg;
	f->ips[f->n++] = s->ip;
}

static void test_samples_wrap(void **state)
{
	(void)state;
	static struct fake f;
	setup(&f, SIZE - 24);	/* the second record straddles the end */
	for (uint64_t ip = 1; ip <= 10; ip++)
		put_sample(&f, 0x400000 + ip);
	struct ring_drained d;
	ring_drain(&f.ring, 1000, on_sample, &f, &d);
	assert_int_equal(d.samples, 10);
	assert_int_equal(d.lost, 0);
	assert_int_equal(f.n, 10);
	for (size_t i = 0; i < 10; i++)
		assert_int_equal(f.ips[i], 0x400001 + i);
	assert_int_equal(f.meta.data_tail, f.meta.data_head);
	/* Nothing new: nothing read. */
	ring_drain(&f.ring, 1000, on_sample, &f, &d);
	assert_int_equal(d.samples, 0);
}

static void test_lost_and_throttle(void **state)
{
	(void)state;
	static struct fake f;
	setup(&f, 0);
	put_sample(&f, 1);
	uint64_t lost[2] = { 7, 42 };	/* id, lost */
	put(&f, PERF_RECORD_LOST, 24, lost);
	uint64_t t0[3] = { 1000000, 0, 0 }, t1[3] = { 1050000, 0, 0 };
	put(&f, PERF_RECORD_THROTTLE, 32, t0);
	put(&f, PERF_RECORD_UNTHROTTLE, 32, t1);
	uint64_t other[2] = { 5, 6 };
	put(&f, PERF_RECORD_COMM, 24, other);	/* not ours: skipped */
	put_sample(&f, 2);
	struct ring_drained d;
	ring_drain(&f.ring, 10000, on_sample, &f, &d);
	assert_int_equal(d.samples, 2);
	assert_int_equal(d.lost, 42 + 5);	/* 50 us throttled at 10 us */
	assert_int_equal(d.lost_full, 42);	/* each under its cause */
	assert_int_equal(d.lost_throttled, 5);
	assert_int_equal(d.lost_corrupt, 0);
	assert_int_equal(f.ips[1], 2);
}

static void test_corrupt(void **state)
{
	(void)state;
	static struct fake f;
	setup(&f, 0);
	put_sample(&f, 1);
	put_sample(&f, 2);
	f.data[16 + 6] = 0;	/* the second record's size: 0 */
	f.data[16 + 7] = 0;
	put_sample(&f, 3);
	struct ring_drained d;
	ring_drain(&f.ring, 1000, on_sample, &f, &d);
	assert_int_equal(d.samples, 1);
	assert_int_equal(d.lost, 2);	/* the 32 bytes left: two samples at most */
	assert_int_equal(d.lost_corrupt, 2);
	assert_int_equal(d.lost_full + d.lost_throttled, 0);
	assert_int_equal(f.meta.data_tail, f.meta.data_head);
}

/* A ring of samples with 3 registers and a 64-byte stack copy. */
#define BIG 512
#define COPY 64
struct fake_stack {
	struct perf_event_mmap_page meta;
	unsigned char data[BIG];
	unsigned char scratch[COPY];
	struct perf_ring ring;
	struct ring_sample got[16];
	unsigned char stacks[16][COPY];
	size_t n;
};

static void setup_stack(struct fake_stack *f, uint64_t start)
{
	memset(f, 0, sizeof *f);
	f->meta.data_head = f->meta.data_tail = start;
	f->ring.meta = &f->meta;
	f->ring.data = f->data;
	f->ring.data_size = BIG;
	f->ring.nregs = 3;
	f->ring.regs = 1;
	f->ring.stack_bytes = COPY;
	f->ring.scratch = f->scratch;
}

static void put_raw(struct fake_stack *f, const void *rec, size_t size)
{
	for (size_t i = 0; i < size; i++)
		f->data[(f->meta.data_head + i) % BIG] = ((const unsigned char *)rec)[i];
	f->meta.data_head += size;
}

/* ip, abi 64, regs {bp, sp, ip}, size COPY, COPY bytes (byte i = seed + i), dyn_size. */
static void put_stack_sample(struct fake_stack *f, uint64_t ip, unsigned char seed, uint64_t dyn)
{
	uint64_t rec[(8 + 8 + 8 + 24 + 8 + COPY + 8) / 8];
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .misc = 0, .size = sizeof rec };
	memcpy(rec, &h, sizeof h);
	uint64_t head[] = { ip, PERF_SAMPLE_REGS_ABI_64, 0x7000, 0x7ff0, ip, COPY };
	memcpy(rec + 1, head, sizeof head);
	unsigned char *bytes = (unsigned char *)(rec + 7);
	for (int i = 0; i < COPY; i++)
		bytes[i] = (unsigned char)(seed + i);
	rec[7 + COPY / 8] = dyn;
	put_raw(f, rec, sizeof rec);
}

static void on_stack_sample(void *arg, const struct ring_sample *s)
{
	struct fake_stack *f = arg;
	f->got[f->n] = *s;
	if (s->stack)
		memcpy(f->stacks[f->n], s->stack, s->stack_size);
	f->n++;
}

static void test_stack_samples(void **state)
{
	(void)state;
	static struct fake_stack f;
	/* Records of 128 bytes from 400: the first one's copy (at 456)
	   wraps at 512. */
	setup_stack(&f, 400);
	put_stack_sample(&f, 0x401000, 10, COPY);
	put_stack_sample(&f, 0x402000, 20, 40);
	/* A kernel thread's: abi NONE, no registers, size 0, no dyn_size. */
	uint64_t none[] = { 0, 0xffffffff81000000u, PERF_SAMPLE_REGS_ABI_NONE, 0 };
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .misc = 0, .size = sizeof none };
	memcpy(none, &h, sizeof h);
	put_raw(&f, none, sizeof none);
	struct ring_drained d;
	ring_drain(&f.ring, 1000, on_stack_sample, &f, &d);
	assert_int_equal(d.samples, 3);
	assert_int_equal(d.lost, 0);
	assert_int_equal(f.n, 3);
	assert_int_equal(f.got[0].ip, 0x401000);
	assert_int_equal(f.got[0].abi, PERF_SAMPLE_REGS_ABI_64);
	assert_int_equal(f.got[0].regs[0], 0x7000);
	assert_int_equal(f.got[0].regs[1], 0x7ff0);
	assert_int_equal(f.got[0].regs[2], 0x401000);
	assert_int_equal(f.got[0].stack_size, COPY);
	assert_true(f.got[0].stack_cut);
	assert_ptr_equal(f.got[0].stack, f.scratch);	/* it wrapped */
	for (int i = 0; i < COPY; i++)
		assert_int_equal(f.stacks[0][i], (unsigned char)(10 + i));
	assert_int_equal(f.got[1].stack_size, 40);
	assert_false(f.got[1].stack_cut);	/* the stack ended first */
	assert_true(f.got[1].stack >= f.data && f.got[1].stack < f.data + BIG);
	for (int i = 0; i < 40; i++)
		assert_int_equal(f.stacks[1][i], (unsigned char)(20 + i));
	assert_int_equal(f.got[2].abi, PERF_SAMPLE_REGS_ABI_NONE);
	assert_null(f.got[2].stack);
	assert_int_equal(f.meta.data_tail, f.meta.data_head);
}

/* dyn_size larger than the copy: the rest of the ring is counted lost. */
static void test_stack_corrupt(void **state)
{
	(void)state;
	static struct fake_stack f;
	setup_stack(&f, 0);
	put_stack_sample(&f, 0x401000, 1, 16);
	put_stack_sample(&f, 0x402000, 2, COPY + 8);
	put_stack_sample(&f, 0x403000, 3, 16);
	struct ring_drained d;
	ring_drain(&f.ring, 1000, on_stack_sample, &f, &d);
	assert_int_equal(d.samples, 1);
	assert_int_equal(f.n, 1);
	assert_int_equal(d.lost, 256 / 32);	/* the smallest sample: 32 bytes */
	assert_int_equal(f.meta.data_tail, f.meta.data_head);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_samples_wrap),
		cmocka_unit_test(test_lost_and_throttle),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_stack_samples),
		cmocka_unit_test(test_stack_corrupt),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
