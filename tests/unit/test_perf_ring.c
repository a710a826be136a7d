/*
 * Reading a perf mmap ring: samples in order, records that wrap around
 * the end of the ring, LOST and throttle records, and a corrupt header,
 * whose remains are counted as lost rather than read or left behind.
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

static void on_sample(void *arg, uint64_t ip)
{
	struct fake *f = arg;
	f->ips[f->n++] = ip;
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
	assert_int_equal(f.meta.data_tail, f.meta.data_head);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_samples_wrap),
		cmocka_unit_test(test_lost_and_throttle),
		cmocka_unit_test(test_corrupt),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
