/*
 * The bin formula ((pc - offset) / 2) * scale / 65536 and its inverse:
 * edge values, a comparison with 128-bit arithmetic over a million
 * random cases, and counters that tile the address space exactly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../src/common/bins.h"

static const uint32_t scales[] = { 2, 3, 0x4000, 0x5555, 0x8000, 0xffff, 0x10000 };
#define NSCALES (sizeof scales / sizeof scales[0])

static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint64_t random64(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1du;
}

/* The formula in 128 bits, as the manual pages write it. */
static uint64_t reference(uint64_t pc, uint64_t offset, uint32_t scale)
{
	unsigned __int128 half = (pc - offset) / 2;
	return (uint64_t)(half * scale / 65536);
}

static void test_edges(void **state)
{
	(void)state;
	uint64_t i = 99;
	assert_false(bins_index(99, 100, 0x10000, 1000, &i));	/* below offset */
	assert_int_equal(i, 99);				/* untouched */
	assert_true(bins_index(100, 100, 0x10000, 1000, &i));
	assert_int_equal(i, 0);
	assert_true(bins_index(101, 100, 0x10000, 1000, &i));
	assert_int_equal(i, 0);
	assert_true(bins_index(102, 100, 0x10000, 1000, &i));
	assert_int_equal(i, 1);
	assert_true(bins_index(104, 100, 0x8000, 1000, &i));	/* 4 bytes a counter */
	assert_int_equal(i, 1);
	assert_true(bins_index(115, 100, 0x4000, 1000, &i));	/* 8 bytes a counter */
	assert_int_equal(i, 1);
	assert_true(bins_index(100 + 65535, 100, 2, 1000, &i));	/* 64 KiB a counter */
	assert_int_equal(i, 0);
	assert_true(bins_index(100 + 65536, 100, 2, 1000, &i));
	assert_int_equal(i, 1);
	assert_false(bins_index(100 + 2000, 100, 0x10000, 1000, &i)); /* past the end */
	assert_true(bins_index(100 + 1999, 100, 0x10000, 1000, &i));
	assert_int_equal(i, 999);
	assert_false(bins_index(500, 100, 0, 1000, &i));	/* scale 0 */

	/* The top of the address space. */
	assert_true(bins_index(UINT64_MAX, UINT64_MAX - 10, 0x10000, 10, &i));
	assert_int_equal(i, 5);
	assert_false(bins_index(UINT64_MAX, UINT64_MAX - 10, 0x10000, 5, &i));
	for (size_t s = 0; s < NSCALES; s++) {
		assert_true(bins_index(UINT64_MAX, 0, scales[s], UINT64_MAX, &i));
		assert_int_equal(i, reference(UINT64_MAX, 0, scales[s]));
	}
	/* 0x10000 at the top: (2^63 - 1) counters. */
	assert_true(bins_index(UINT64_MAX, 0, 0x10000, UINT64_MAX, &i));
	assert_int_equal(i, UINT64_MAX / 2);
}

static void test_against_reference(void **state)
{
	(void)state;
	for (int k = 0; k < 1000000; k++) {
		uint64_t offset = random64(), pc = random64();
		if (k % 4 == 0)
			pc = offset + (random64() & 0xffffff);	/* near the offset */
		uint32_t scale = k % 3 ? scales[k % NSCALES] : 2 + (uint32_t)(random64() % 0xffff);
		uint64_t i = 0;
		int in = bins_index(pc, offset, scale, UINT64_MAX, &i);
		assert_int_equal(in, pc >= offset);
		if (in)
			assert_int_equal(i, reference(pc, offset, scale));
	}
}

static void test_inverse(void **state)
{
	(void)state;
	for (int k = 0; k < 300000; k++) {
		uint64_t offset = random64() >> (k % 64), pc = offset + (random64() >> (k % 64));
		if (pc < offset)
			continue;
		uint32_t scale = k % 2 ? scales[k % NSCALES] : 2 + (uint32_t)(random64() % 0xffff);
		uint64_t i = 0, first = 0, last = 0, j = 0;
		assert_true(bins_index(pc, offset, scale, UINT64_MAX, &i));
		assert_true(bins_first_pc(i, offset, scale, &first));
		assert_true(bins_last_pc(i, offset, scale, &last));
		assert_true(first <= pc && pc <= last);
		assert_true(bins_index(first, offset, scale, UINT64_MAX, &j));
		assert_int_equal(j, i);
		assert_true(bins_index(last, offset, scale, UINT64_MAX, &j));
		assert_int_equal(j, i);
		if (i > 0) {
			assert_true(first > offset);
			assert_true(bins_index(first - 1, offset, scale, UINT64_MAX, &j));
			assert_int_equal(j, i - 1);
		}
		if (last < UINT64_MAX) {
			assert_true(bins_index(last + 1, offset, scale, UINT64_MAX, &j));
			assert_int_equal(j, i + 1);
		}
	}
}

/* Consecutive counters meet without a gap or an overlap. */
static void test_tiling(void **state)
{
	(void)state;
	for (size_t s = 0; s < NSCALES; s++) {
		uint64_t offset = 0x400000 + 6;
		uint64_t prev_last;
		assert_true(bins_first_pc(0, offset, scales[s], &prev_last));
		assert_int_equal(prev_last, offset);
		assert_true(bins_last_pc(0, offset, scales[s], &prev_last));
		for (uint64_t i = 1; i < 5000; i++) {
			uint64_t first, last;
			assert_true(bins_first_pc(i, offset, scales[s], &first));
			assert_true(bins_last_pc(i, offset, scales[s], &last));
			assert_int_equal(first, prev_last + 1);
			assert_true(last >= first);
			prev_last = last;
		}
	}
	/* Bytes per counter at the exact scales. */
	uint64_t first, last;
	assert_true(bins_first_pc(7, 0, 0x10000, &first) && bins_last_pc(7, 0, 0x10000, &last));
	assert_int_equal(first, 14);
	assert_int_equal(last, 15);
	assert_true(bins_first_pc(7, 0, 0x4000, &first) && bins_last_pc(7, 0, 0x4000, &last));
	assert_int_equal(first, 56);
	assert_int_equal(last, 63);
	/* Scales the formula does not define. */
	assert_false(bins_first_pc(1, 0, 0x10001, &first));
	assert_false(bins_first_pc(1, 0, 0, &first));
	/* The last counter reaches the top of the address space. */
	assert_true(bins_last_pc(UINT64_MAX / 2, 0, 0x10000, &last));
	assert_int_equal(last, UINT64_MAX);
	assert_false(bins_first_pc(UINT64_MAX / 2 + 1, 0, 0x10000, &first));
	assert_false(bins_first_pc(10, UINT64_MAX - 4, 0x10000, &first));
}

static void test_count_for_range(void **state)
{
	(void)state;
	assert_int_equal(bins_count_for_range(0x1000, 0x1000, 0x10000), 0);
	assert_int_equal(bins_count_for_range(0x1000, 0x1002, 0x10000), 1);
	assert_int_equal(bins_count_for_range(0x1000, 0x1003, 0x10000), 2);
	assert_int_equal(bins_count_for_range(0x1000, 0x2000, 0x8000), 0x400);
	assert_int_equal(bins_count_for_range(0x1000, 0x1000 + 65536, 2), 1);
	assert_int_equal(bins_count_for_range(0x1000, 0x1000 + 65537, 2), 2);
	/* Every pc in the range has a counter. */
	for (size_t s = 0; s < NSCALES; s++) {
		uint64_t n = bins_count_for_range(0x1234, 0x98765, scales[s]), i;
		assert_true(bins_index(0x98764, 0x1234, scales[s], n, &i));
		assert_int_equal(i, n - 1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_against_reference),
		cmocka_unit_test(test_inverse),
		cmocka_unit_test(test_tiling),
		cmocka_unit_test(test_count_for_range),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
