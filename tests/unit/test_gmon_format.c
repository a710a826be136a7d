/*
 * The gmon.out writer and reader: what is written reads back the same,
 * counts too large for one record are split into records gprof sums,
 * and no truncated, corrupt or random file makes the reader crash, read
 * past its input or accept it silently.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../src/format/gmon.h"

/* Write p to an anonymous file and return its bytes (malloc'd). */
static unsigned char *image_of(const struct gmon_profile *p, size_t *size)
{
	int fd = memfd_create("gmon", 0);
	assert_true(fd >= 0);
	assert_int_equal(gmon_write(fd, p), 0);
	off_t end = lseek(fd, 0, SEEK_END);
	assert_true(end >= 0);
	unsigned char *data = malloc(end ? (size_t)end : 1);
	assert_non_null(data);
	assert_int_equal(pread(fd, data, (size_t)end, 0), end);
	close(fd);
	*size = (size_t)end;
	return data;
}

static void assert_same(const struct gmon_profile *a, const struct gmon_profile *b)
{
	assert_int_equal(a->nhist, b->nhist);
	for (size_t i = 0; i < a->nhist; i++) {
		const struct gmon_hist *x = &a->hist[i], *y = &b->hist[i];
		assert_int_equal(x->low_pc, y->low_pc);
		assert_int_equal(x->high_pc, y->high_pc);
		assert_int_equal(x->nbins, y->nbins);
		assert_int_equal(x->rate, y->rate);
		assert_string_equal(x->dimen, y->dimen);
		assert_int_equal(x->dimen_abbrev, y->dimen_abbrev);
		for (uint64_t k = 0; k < x->nbins; k++)
			assert_int_equal(x->counts[k], y->counts[k]);
	}
	assert_int_equal(a->narcs, b->narcs);
	for (size_t i = 0; i < a->narcs; i++) {
		assert_int_equal(a->arcs[i].from_pc, b->arcs[i].from_pc);
		assert_int_equal(a->arcs[i].self_pc, b->arcs[i].self_pc);
		assert_int_equal(a->arcs[i].count, b->arcs[i].count);
	}
	assert_int_equal(a->nbb, b->nbb);
	for (size_t i = 0; i < a->nbb; i++) {
		assert_int_equal(a->bb[i].pc, b->bb[i].pc);
		assert_int_equal(a->bb[i].count, b->bb[i].count);
	}
}

static uint64_t counts_a[64], counts_b[5];
static struct gmon_hist hists[2];
/* Sorted by (from, self), as the reader returns them. */
static struct gmon_arc arcs[] = {
	{ 0x401000, 0x401200, 1 },
	{ 0x401000, 0x401300, 65536 },
	{ 0x401010, 0x401200, 0xffffffffull },
	{ 0x401010, 0x401300, 0x100000000ull },		/* two records */
	{ 0x401020, 0x401200, 3 * 0xffffffffull + 7 },	/* four */
	{ 0x7f0000001000, 0x401200, 12 },		/* a caller outside the text */
};
static struct gmon_bb bbs[] = { { 0x401000, 5 }, { 0x401004, 1ull << 40 } };

static struct gmon_profile sample(void)
{
	for (unsigned i = 0; i < 64; i++)
		counts_a[i] = i * 1000;	/* up to 63000: one record */
	counts_a[7] = 65535;
	counts_a[8] = 65536;
	counts_a[9] = 200000;		/* 4 records of the same range */
	counts_b[0] = 0;
	counts_b[1] = 1;
	counts_b[4] = 70000;
	hists[0] = (struct gmon_hist){ 0x401000, 0x401080, 64, 1000, "seconds", 's', counts_a };
	hists[1] = (struct gmon_hist){ 0x500000, 0x500014, 5, 1000, "seconds", 's', counts_b };
	return (struct gmon_profile){
		.nhist = 2, .hist = hists,
		.narcs = sizeof arcs / sizeof arcs[0], .arcs = arcs,
		.nbb = sizeof bbs / sizeof bbs[0], .bb = bbs,
	};
}

static void test_round_trip(void **state)
{
	(void)state;
	struct gmon_profile p = sample(), q;
	size_t size;
	unsigned char *data = image_of(&p, &size);
	char err[256] = "";
	assert_int_equal(gmon_read_buffer(data, size, &q, err, sizeof err), 0);
	assert_same(&p, &q);
	gmon_free(&q);
	free(data);

	/* An empty profile is a header alone, and reads back empty. */
	struct gmon_profile empty = { 0 };
	data = image_of(&empty, &size);
	assert_int_equal(size, GMON_HEADER_SIZE);
	assert_memory_equal(data, "gmon\1\0\0\0", 8);
	assert_int_equal(gmon_read_buffer(data, size, &q, err, sizeof err), 0);
	assert_int_equal(q.nhist + q.narcs + q.nbb, 0);
	free(data);
}

/* The file's records, as gprof sees them. */
static void test_layout(void **state)
{
	(void)state;
	struct gmon_profile p = sample();
	size_t size;
	unsigned char *data = image_of(&p, &size);
	size_t hist_a = 1 + GMON_HIST_HEADER_SIZE + 64 * 2;
	size_t hist_b = 1 + GMON_HIST_HEADER_SIZE + 5 * 2;
	size_t arc = 1 + GMON_ARC_SIZE;
	size_t expect = GMON_HEADER_SIZE + 4 * hist_a + 2 * hist_b
		+ (1 + 1 + 1 + 2 + 4 + 1) * arc + 1 + 4 + 2 * 16;
	assert_int_equal(size, expect);

	/* Histogram a: four records of the same range; bin 9 (200000) is
	   65535 + 65535 + 65535 + 3395, bin 8 is 65535 + 1 + 0 + 0. */
	unsigned char *r = data + GMON_HEADER_SIZE;
	unsigned sums[64] = { 0 };
	for (int k = 0; k < 4; k++, r += hist_a) {
		uint64_t low, high;
		uint32_t n, rate;
		assert_int_equal(r[0], GMON_TAG_TIME_HIST);
		memcpy(&low, r + 1, 8);
		memcpy(&high, r + 9, 8);
		memcpy(&n, r + 17, 4);
		memcpy(&rate, r + 21, 4);
		assert_int_equal(low, 0x401000);
		assert_int_equal(high, 0x401080);
		assert_int_equal(n, 64);
		assert_int_equal(rate, 1000);
		assert_memory_equal(r + 25, "seconds\0\0\0\0\0\0\0\0", 15);
		assert_int_equal(r[40], 's');
		for (unsigned i = 0; i < 64; i++) {
			uint16_t v;
			memcpy(&v, r + 41 + 2 * i, 2);
			sums[i] += v;
			if (i == 9)
				assert_int_equal(v, k < 3 ? 65535 : 200000 - 3 * 65535);
			if (i == 8)
				assert_int_equal(v, k == 0 ? 65535 : k == 1 ? 1 : 0);
		}
	}
	for (unsigned i = 0; i < 64; i++)
		assert_int_equal(sums[i], counts_a[i]);
	free(data);
}

static void test_duplicate_arcs_summed(void **state)
{
	(void)state;
	static struct gmon_arc twice[] = {
		{ 0x20, 0x30, 5 }, { 0x10, 0x30, 1 }, { 0x20, 0x30, 7 },
	};
	struct gmon_profile p = { .narcs = 3, .arcs = twice }, q;
	size_t size;
	unsigned char *data = image_of(&p, &size);
	char err[256];
	assert_int_equal(gmon_read_buffer(data, size, &q, err, sizeof err), 0);
	assert_int_equal(q.narcs, 2);
	assert_int_equal(q.arcs[0].from_pc, 0x10);
	assert_int_equal(q.arcs[0].count, 1);
	assert_int_equal(q.arcs[1].from_pc, 0x20);
	assert_int_equal(q.arcs[1].count, 12);
	gmon_free(&q);
	free(data);
}

/* Read a copy of exactly n bytes (so ASan sees any read past them). */
static int read_prefix(const unsigned char *data, size_t n, char *err, size_t errlen)
{
	unsigned char *copy = malloc(n ? n : 1);
	assert_non_null(copy);
	memcpy(copy, data, n);
	struct gmon_profile q;
	err[0] = '\0';
	int r = gmon_read_buffer(copy, n, &q, err, errlen);
	if (r == 0)
		gmon_free(&q);
	else
		assert_true(err[0] != '\0' && strchr(err, '\n') == NULL);
	free(copy);
	return r;
}

/* Every prefix that ends inside a record is refused with a message. */
static void test_truncated(void **state)
{
	(void)state;
	struct gmon_profile p = sample();
	size_t size;
	unsigned char *data = image_of(&p, &size);
	/* Record boundaries, where a prefix is a shorter valid file. */
	size_t hist_a = 1 + GMON_HIST_HEADER_SIZE + 64 * 2;
	size_t hist_b = 1 + GMON_HIST_HEADER_SIZE + 5 * 2;
	size_t ends[32], nends = 0, at = GMON_HEADER_SIZE;
	ends[nends++] = at;
	for (int i = 0; i < 4; i++)
		ends[nends++] = at += hist_a;
	for (int i = 0; i < 2; i++)
		ends[nends++] = at += hist_b;
	for (int i = 0; i < 10; i++)
		ends[nends++] = at += 1 + GMON_ARC_SIZE;
	ends[nends++] = at += 1 + 4 + 2 * 16;
	assert_int_equal(at, size);
	char err[256];
	for (size_t n = 0; n <= size; n++) {
		int boundary = 0;
		for (size_t i = 0; i < nends; i++)
			boundary |= ends[i] == n;
		assert_int_equal(read_prefix(data, n, err, sizeof err), boundary ? 0 : -1);
	}
	free(data);
}

static void expect_error(const unsigned char *data, size_t n, const char *words)
{
	char err[256];
	assert_int_equal(read_prefix(data, n, err, sizeof err), -1);
	if (!strstr(err, words))
		fail_msg("error \"%s\" does not say \"%s\"", err, words);
}

static void test_corrupt(void **state)
{
	(void)state;
	struct gmon_profile p = sample();
	size_t size;
	unsigned char *data = image_of(&p, &size);
	unsigned char *bad = malloc(size);
	assert_non_null(bad);

	memcpy(bad, data, size);
	bad[0] = 'G';
	expect_error(bad, size, "not a gmon.out file");

	memcpy(bad, data, size);
	bad[4] = 2;
	expect_error(bad, size, "version 2");

	memcpy(bad, data, size);
	bad[GMON_HEADER_SIZE] = 9;
	expect_error(bad, size, "unknown record tag 9 at offset 20");

	/* high_pc below low_pc */
	memcpy(bad, data, size);
	memset(bad + GMON_HEADER_SIZE + 9, 0, 8);
	expect_error(bad, size, "below its start");

	/* A bin count far larger than the file. */
	memcpy(bad, data, size);
	uint32_t huge = 0xffffffff;
	memcpy(bad + GMON_HEADER_SIZE + 17, &huge, 4);
	expect_error(bad, size, "file ends first");

	/* Records of one range that disagree on the rate. */
	memcpy(bad, data, size);
	uint32_t rate = 100;
	memcpy(bad + GMON_HEADER_SIZE + (1 + GMON_HIST_HEADER_SIZE + 128) + 21, &rate, 4);
	expect_error(bad, size, "rate 100");

	/* A basic-block record claiming more entries than remain. */
	memcpy(bad, data, size);
	memcpy(bad + size - 2 * 16 - 4, &huge, 4);
	expect_error(bad, size, "cut short");

	free(bad);
	free(data);
}

/* Random bytes after a valid header: refused or read, never a crash. */
static void test_random(void **state)
{
	(void)state;
	unsigned char buf[512];
	uint64_t x = 88172645463325252ull;
	char err[256];
	int accepted = 0;
	for (int round = 0; round < 20000; round++) {
		size_t n = GMON_HEADER_SIZE + (size_t)(x % (sizeof buf - GMON_HEADER_SIZE));
		memcpy(buf, "gmon\1\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", GMON_HEADER_SIZE);
		for (size_t i = GMON_HEADER_SIZE; i < n; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			/* Mostly small values, so that tags and sizes are often valid. */
			buf[i] = (x & 3) ? (unsigned char)(x >> 8) % 3 : (unsigned char)(x >> 8);
		}
		accepted += read_prefix(buf, n, err, sizeof err) == 0;
	}
	assert_true(accepted > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_duplicate_arcs_summed),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_random),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
