/*
 * The bin formula idx = ((pc - offset) / 2) * scale / 65536 (SPEC 3) and
 * its exact inverse (SPEC 4): edge values at both ends of the address
 * space and at every scale, a comparison with 128-bit arithmetic over a
 * million random cases, and counters that tile the address space with
 * neither a gap nor an overlap.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../src/common/bins.h"

/* The scales the manual pages name, and some awkward ones in between. */
static const uint32_t scales[] = { 1, 2, 3, 0x4000, 0x5555, 0x8000, 0xfffe, 0xffff, 0x10000 };
#define NSCALES (sizeof scales / sizeof scales[0])

/* xorshift64*, fixed seed: the same cases on every run. */
static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint64_t random64(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1du;
}

/* Any scale the formula defines: 1 .. 0x10000, often one of the above. */
static uint32_t random_scale(void)
{
	if (random64() & 1)
		return scales[random64() % NSCALES];
	return 1 + (uint32_t)(random64() % BINS_SCALE_ONE);
}

/* A pc and an offset, with pc >= offset, from several distributions. */
static void random_pair(uint64_t *pc, uint64_t *offset)
{
	uint64_t a = random64(), b = random64();
	switch (random64() % 6) {
	case 0:	/* anywhere */
		break;
	case 1:	/* close to the offset */
		b = a + (b & 0xfffff);
		break;
	case 2:	/* pc at the very top */
		b = UINT64_MAX;
		break;
	case 3:	/* offset near the top */
		a = UINT64_MAX - (a & 0xffffff);
		break;
	case 4:	/* offset 0 */
		a = 0;
		break;
	default:	/* magnitudes of every size */
		a >>= random64() % 64;
		b = a + (b >> (random64() % 64));
		break;
	}
	if (b < a) {
		uint64_t t = a;
		a = b;
		b = t;
	}
	*offset = a;
	*pc = b;
}

/* The formula in 128 bits, as the manual pages write it. */
static uint64_t reference(uint64_t pc, uint64_t offset, uint32_t scale)
{
	unsigned __int128 half = (pc - offset) / 2;
	return (uint64_t)(half * scale / 65536);
}

/* bins_index with room for every counter; fails the test if pc has none. */
static uint64_t index_of(uint64_t pc, uint64_t offset, uint32_t scale)
{
	uint64_t i = 0;
	assert_true(bins_index(pc, offset, scale, UINT64_MAX, &i));
	return i;
}

static void test_below_offset(void **state)
{
	(void)state;
	static const uint64_t cases[][2] = {	/* pc, offset */
		{ 99, 100 }, { 0, 1 }, { 0, UINT64_MAX }, { UINT64_MAX - 1, UINT64_MAX },
		{ 0x400000, 0x400001 }, { 1u << 31, (uint64_t)1 << 63 },
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
		for (size_t s = 0; s < NSCALES; s++) {
			uint64_t i = 12345;
			assert_false(bins_index(cases[c][0], cases[c][1], scales[s], UINT64_MAX, &i));
			assert_int_equal(i, 12345);	/* not written */
		}
}

static void test_at_offset(void **state)
{
	(void)state;
	static const uint64_t offsets[] = { 0, 1, 100, 0x400000, (uint64_t)1 << 63,
					    UINT64_MAX - 1, UINT64_MAX };
	for (size_t o = 0; o < sizeof offsets / sizeof offsets[0]; o++)
		for (size_t s = 0; s < NSCALES; s++) {
			uint64_t i = 12345;
			assert_true(bins_index(offsets[o], offsets[o], scales[s], 1, &i));
			assert_int_equal(i, 0);
		}
	/* No counters at all: nothing is held, not even the offset. */
	uint64_t i = 12345;
	assert_false(bins_index(100, 100, 0x10000, 0, &i));
	assert_int_equal(i, 12345);
}

/* 0x10000, 0x8000, 0x4000 and 2: 2, 4, 8 and 65536 bytes a counter. */
static void test_exact_scales(void **state)
{
	(void)state;
	static const struct { uint32_t scale; uint64_t bytes; } exact[] = {
		{ 0x10000, 2 }, { 0x8000, 4 }, { 0x4000, 8 }, { 0x2000, 16 }, { 2, 65536 },
	};
	static const uint64_t offsets[] = { 0, 0x400000, 0x400001, UINT64_MAX - 0x100000 };
	for (size_t e = 0; e < sizeof exact / sizeof exact[0]; e++)
		for (size_t o = 0; o < sizeof offsets / sizeof offsets[0]; o++)
			for (uint64_t d = 0; d < 0x40000; d += d < 4096 ? 1 : 4093) {
				uint64_t pc = offsets[o] + d;
				assert_int_equal(index_of(pc, offsets[o], exact[e].scale),
						 d / exact[e].bytes);
			}
	/* And by hand. */
	assert_int_equal(index_of(101, 100, 0x10000), 0);
	assert_int_equal(index_of(102, 100, 0x10000), 1);
	assert_int_equal(index_of(103, 100, 0x8000), 0);
	assert_int_equal(index_of(104, 100, 0x8000), 1);
	assert_int_equal(index_of(107, 100, 0x4000), 0);
	assert_int_equal(index_of(108, 100, 0x4000), 1);
	assert_int_equal(index_of(100 + 65535, 100, 2), 0);
	assert_int_equal(index_of(100 + 65536, 100, 2), 1);
}

/* Scales that do not divide 65536: the floor of the exact quotient. */
static void test_intermediate_scales(void **state)
{
	(void)state;
	/* 0x5555: h * 21845 / 65536, h = 3 gives 65535 / 65536. */
	assert_int_equal(index_of(1000 + 7, 1000, 0x5555), 0);
	assert_int_equal(index_of(1000 + 8, 1000, 0x5555), 1);
	assert_int_equal(index_of(1000 + 2 * 65536, 1000, 0x5555), 21845);
	/* 3: h = 21845 still 0, h = 21846 is 1. */
	assert_int_equal(index_of(43691, 1, 3), 0);
	assert_int_equal(index_of(43692, 0, 3), 1);
	assert_int_equal(index_of(43691, 0, 3), 0);
	/* 0xffff: one counter short every 65536 half-words. */
	assert_int_equal(index_of(2 * 65535, 0, 0xffff), 65534);
	assert_int_equal(index_of(2 * 65536, 0, 0xffff), 65535);
	assert_int_equal(index_of(2 * 65536 + 1, 0, 0xffff), 65535);
	assert_int_equal(index_of(2 * 65537, 0, 0xffff), 65535);	/* 65536^2 - 1 */
	assert_int_equal(index_of(2 * 65538, 0, 0xffff), 65536);
	/* 1: one counter every 128 KiB. */
	assert_int_equal(index_of(131071, 0, 1), 0);
	assert_int_equal(index_of(131072, 0, 1), 1);
	/* Every scale against the reference, near a few distances. */
	for (uint32_t s = 1; s <= BINS_SCALE_ONE; s++) {
		static const uint64_t d[] = { 0, 1, 2, 3, 131071, 131072, 131073,
					      0xfffffffffffull, UINT64_MAX / 3 };
		for (size_t k = 0; k < sizeof d / sizeof d[0]; k++)
			assert_int_equal(index_of(0x1000 + d[k], 0x1000, s),
					 reference(0x1000 + d[k], 0x1000, s));
	}
}

static void test_top_of_address_space(void **state)
{
	(void)state;
	uint64_t i = 0;
	/* offset = 2^64 - 11, pc = 2^64 - 1: h = 5. */
	for (uint32_t s = 1; s <= BINS_SCALE_ONE; s++) {
		assert_true(bins_index(UINT64_MAX, UINT64_MAX - 10, s, UINT64_MAX, &i));
		assert_int_equal(i, (5ull * s) >> 16);
	}
	assert_true(bins_index(UINT64_MAX, UINT64_MAX - 10, 0x10000, 6, &i));
	assert_int_equal(i, 5);
	assert_false(bins_index(UINT64_MAX, UINT64_MAX - 10, 0x10000, 5, &i));
	/* pc = 2^64 - 1 and offset 0 at every scale: h = 2^63 - 1, and
	   h * scale passes 2^64 for every scale above 2. */
	for (uint32_t s = 1; s <= BINS_SCALE_ONE; s++) {
		assert_true(bins_index(UINT64_MAX, 0, s, UINT64_MAX, &i));
		assert_int_equal(i, reference(UINT64_MAX, 0, s));
		/* The counter count bounds it exactly. */
		assert_false(bins_index(UINT64_MAX, 0, s, i, &i));
	}
	assert_true(bins_index(UINT64_MAX, 0, 0x10000, UINT64_MAX, &i));
	assert_int_equal(i, UINT64_MAX / 2);
	assert_true(bins_index(UINT64_MAX, 0, 0x8000, UINT64_MAX, &i));
	assert_int_equal(i, UINT64_MAX / 4);
	assert_true(bins_index(UINT64_MAX, 0, 2, UINT64_MAX, &i));
	assert_int_equal(i, (1ull << 48) - 1);
	assert_true(bins_index(UINT64_MAX, 0, 1, UINT64_MAX, &i));
	assert_int_equal(i, (1ull << 47) - 1);
	/* pc - offset = 2^64 - 1 is odd: the last byte shares the last half. */
	assert_int_equal(index_of(UINT64_MAX - 1, 0, 0x10000), UINT64_MAX / 2);
}

static void test_ncounters(void **state)
{
	(void)state;
	for (size_t s = 0; s < NSCALES; s++) {
		uint64_t n = 37, last_pc, i = 999;
		assert_true(bins_last_pc(n - 1, 0x1000, scales[s], &last_pc));
		assert_true(bins_index(last_pc, 0x1000, scales[s], n, &i));
		assert_int_equal(i, n - 1);
		i = 999;
		assert_false(bins_index(last_pc + 1, 0x1000, scales[s], n, &i));	/* index n */
		assert_int_equal(i, 999);
		assert_false(bins_index(UINT64_MAX, 0x1000, scales[s], n, &i));
		assert_false(bins_index(0x1000, 0x1000, scales[s], 0, &i));
	}
	uint64_t i = 999;
	assert_false(bins_index(0x1000 + 2000, 0x1000, 0x10000, 1000, &i));
	assert_true(bins_index(0x1000 + 1999, 0x1000, 0x10000, 1000, &i));
	assert_int_equal(i, 999);
}

static void test_scale_zero(void **state)
{
	(void)state;
	uint64_t i = 77, pc;
	static const uint64_t pcs[] = { 0, 1, 0x1000, 0x123456, UINT64_MAX };
	for (size_t k = 0; k < sizeof pcs / sizeof pcs[0]; k++) {
		assert_false(bins_index(pcs[k], 0, 0, UINT64_MAX, &i));
		assert_false(bins_index(pcs[k], pcs[k], 0, UINT64_MAX, &i));
	}
	assert_int_equal(i, 77);
	/* The inverse has no pc for scale 0, nor above 0x10000. */
	assert_false(bins_first_pc(0, 0, 0, &pc));
	assert_false(bins_last_pc(0, 0, 0, &pc));
	assert_false(bins_first_pc(1, 0, 0x10001, &pc));
	assert_false(bins_last_pc(1, 0, 0x10001, &pc));
	assert_false(bins_first_pc(0, 0, UINT32_MAX, &pc));
	assert_int_equal(bins_count_for_range(0, 0x1000, 0), 0);
}

static void test_against_reference(void **state)
{
	(void)state;
	uint64_t held = 0, beyond = 0;
	for (int k = 0; k < 1000000; k++) {
		uint64_t pc, offset;
		random_pair(&pc, &offset);
		uint32_t scale = random_scale();
		uint64_t want = reference(pc, offset, scale);
		/* Counter counts around the answer, or all of them. */
		uint64_t n;
		switch (k % 4) {
		case 0: n = UINT64_MAX; break;
		case 1: n = want + 1; break;	/* just enough */
		case 2: n = want; break;	/* one short */
		default: n = random64() >> (random64() % 64); break;
		}
		uint64_t i = 0xdeadbeef;
		bool in = bins_index(pc, offset, scale, n, &i);
		assert_int_equal(in, want < n);
		assert_int_equal(i, in ? want : 0xdeadbeef);
		held += in;
		beyond += !in;
		/* With the pair reversed the pc is below the offset. */
		if (pc != offset)
			assert_false(bins_index(offset, pc, scale, UINT64_MAX, &i));
	}
	/* Both outcomes were exercised in earnest. */
	assert_true(held > 400000);
	assert_true(beyond > 200000);
}

/* Counter i holds exactly [first(i), last(i)], and its neighbours start
   and end right next to it. */
static void check_inverse(uint64_t pc, uint64_t offset, uint32_t scale)
{
	uint64_t i = index_of(pc, offset, scale), first = 0, last = 0;
	assert_true(bins_first_pc(i, offset, scale, &first));
	assert_true(bins_last_pc(i, offset, scale, &last));
	assert_true(first <= pc);
	assert_true(pc <= last);
	assert_int_equal(index_of(first, offset, scale), i);
	assert_int_equal(index_of(last, offset, scale), i);
	if (i == 0) {
		assert_int_equal(first, offset);
	} else {
		assert_true(first > offset);
		assert_int_equal(index_of(first - 1, offset, scale), i - 1);
		uint64_t prev_last;
		assert_true(bins_last_pc(i - 1, offset, scale, &prev_last));
		assert_int_equal(prev_last + 1, first);
	}
	uint64_t next_first;
	if (last < UINT64_MAX) {
		assert_int_equal(index_of(last + 1, offset, scale), i + 1);
		assert_true(bins_first_pc(i + 1, offset, scale, &next_first));
		assert_int_equal(next_first, last + 1);
	} else {
		/* The last counter of the address space: none follows. */
		assert_false(bins_first_pc(i + 1, offset, scale, &next_first));
		assert_false(bins_last_pc(i + 1, offset, scale, &next_first));
	}
	/* A counter spans floor or ceil of 65536 / scale half-words. */
	unsigned __int128 span = (unsigned __int128)last - first + 1;
	uint64_t lo = 2 * (65536 / scale), hi = 2 * ((65536 + scale - 1) / scale);
	if (last < UINT64_MAX)
		assert_true(span == lo || span == hi);
	else
		assert_true(span <= hi);
}

static void test_inverse(void **state)
{
	(void)state;
	for (int k = 0; k < 300000; k++) {
		uint64_t pc, offset;
		random_pair(&pc, &offset);
		check_inverse(pc, offset, random_scale());
	}
	/* The ends, at every scale. */
	for (uint32_t s = 1; s <= BINS_SCALE_ONE; s++) {
		check_inverse(0, 0, s);
		check_inverse(UINT64_MAX, 0, s);
		check_inverse(UINT64_MAX, UINT64_MAX - 10, s);
		check_inverse(UINT64_MAX, UINT64_MAX, s);
		check_inverse(0x400000 + s, 0x400000, s);
	}
}

/* Walking counter after counter covers every pc from offset to the top. */
static void test_tiling(void **state)
{
	(void)state;
	for (size_t s = 0; s < NSCALES; s++) {
		/* From the offset up, for a while. */
		uint64_t offset = 0x400000 + 6, first, last, prev_last;
		assert_true(bins_first_pc(0, offset, scales[s], &first));
		assert_int_equal(first, offset);
		assert_true(bins_last_pc(0, offset, scales[s], &prev_last));
		for (uint64_t i = 1; i < 5000; i++) {
			assert_true(bins_first_pc(i, offset, scales[s], &first));
			assert_true(bins_last_pc(i, offset, scales[s], &last));
			assert_int_equal(first, prev_last + 1);
			assert_true(last >= first);
			prev_last = last;
		}
		/* Up to 2^64 - 1 exactly, from an offset near the top. */
		offset = UINT64_MAX - 3 * 65536 * 2 - 17;
		uint64_t i = 0;
		prev_last = offset - 1;
		while (bins_first_pc(i, offset, scales[s], &first)) {
			assert_int_equal(first, prev_last + 1);
			assert_true(bins_last_pc(i, offset, scales[s], &last));
			assert_true(last >= first);
			prev_last = last;
			i++;
		}
		assert_int_equal(prev_last, UINT64_MAX);
		assert_int_equal(i, index_of(UINT64_MAX, offset, scales[s]) + 1);
	}
	/* Bytes per counter at the exact scales, by hand. */
	uint64_t first, last;
	assert_true(bins_first_pc(7, 0, 0x10000, &first));
	assert_true(bins_last_pc(7, 0, 0x10000, &last));
	assert_int_equal(first, 14);
	assert_int_equal(last, 15);
	assert_true(bins_first_pc(7, 0, 0x8000, &first));
	assert_true(bins_last_pc(7, 0, 0x8000, &last));
	assert_int_equal(first, 28);
	assert_int_equal(last, 31);
	assert_true(bins_first_pc(7, 0, 0x4000, &first));
	assert_true(bins_last_pc(7, 0, 0x4000, &last));
	assert_int_equal(first, 56);
	assert_int_equal(last, 63);
	assert_true(bins_first_pc(7, 0x10, 2, &first));
	assert_true(bins_last_pc(7, 0x10, 2, &last));
	assert_int_equal(first, 0x10 + 7 * 65536);
	assert_int_equal(last, 0x10 + 8 * 65536 - 1);
	/* The last counter of the space ends at its top; past it, nothing. */
	assert_true(bins_last_pc(UINT64_MAX / 2, 0, 0x10000, &last));
	assert_int_equal(last, UINT64_MAX);
	assert_false(bins_first_pc(UINT64_MAX / 2 + 1, 0, 0x10000, &first));
	assert_false(bins_first_pc(UINT64_MAX, 0, 0x10000, &first));
	assert_false(bins_last_pc(UINT64_MAX, 0, 0x10000, &last));
	assert_false(bins_first_pc(UINT64_MAX, 0, 2, &first));
	assert_false(bins_first_pc(10, UINT64_MAX - 4, 0x10000, &first));
	assert_true(bins_last_pc(2, UINT64_MAX - 4, 0x10000, &last));
	assert_int_equal(last, UINT64_MAX);
}

static void test_count_for_range(void **state)
{
	(void)state;
	assert_int_equal(bins_count_for_range(0x1000, 0x1000, 0x10000), 0);	/* empty */
	assert_int_equal(bins_count_for_range(0x2000, 0x1000, 0x10000), 0);	/* reversed */
	assert_int_equal(bins_count_for_range(0x1000, 0x1001, 0x10000), 1);
	assert_int_equal(bins_count_for_range(0x1000, 0x1002, 0x10000), 1);
	assert_int_equal(bins_count_for_range(0x1000, 0x1003, 0x10000), 2);
	assert_int_equal(bins_count_for_range(0x1000, 0x2000, 0x10000), 0x800);
	assert_int_equal(bins_count_for_range(0x1000, 0x2000, 0x8000), 0x400);
	assert_int_equal(bins_count_for_range(0x1000, 0x2000, 0x4000), 0x200);
	assert_int_equal(bins_count_for_range(0x1000, 0x1000 + 65536, 2), 1);
	assert_int_equal(bins_count_for_range(0x1000, 0x1000 + 65537, 2), 2);
	assert_int_equal(bins_count_for_range(0, UINT64_MAX, 0x10000), 1ull << 63);
	assert_int_equal(bins_count_for_range(0, UINT64_MAX, 2), 1ull << 48);
	assert_int_equal(bins_count_for_range(UINT64_MAX - 1, UINT64_MAX, 0x10000), 1);
	/* Enough for every pc of [low, high), and not one more. */
	for (int k = 0; k < 200000; k++) {
		uint64_t high, low;
		random_pair(&high, &low);
		if (high == low)
			continue;
		uint32_t scale = random_scale();
		uint64_t n = bins_count_for_range(low, high, scale), i = 0;
		assert_true(n >= 1);
		assert_true(bins_index(high - 1, low, scale, n, &i));
		assert_int_equal(i, n - 1);
		assert_true(bins_index(low, low, scale, n, &i));	/* the first too */
		assert_false(bins_index(high - 1, low, scale, n - 1, &i));
	}
}

/* The finest scale whose histogram of n counters holds [low, high). */
static void test_scale_for_range(void **state)
{
	(void)state;
	assert_int_equal(bins_scale_for_range(0x1000, 0x1000, 10), 0);
	assert_int_equal(bins_scale_for_range(0x1000, 0x2000, 0), 0);
	assert_int_equal(bins_scale_for_range(0x1000, 0x2000, 0x800), 0x10000);
	assert_int_equal(bins_scale_for_range(0x1000, 0x2000, 0x400), 0x8010);
	assert_int_equal(bins_scale_for_range(0x1000, 0x2000, 0x7ff), 0xffff);
	assert_int_equal(bins_scale_for_range(0x1000, 0x1002, 1), 0x10000);
	for (int k = 0; k < 200000; k++) {
		uint64_t high, low, i;
		random_pair(&high, &low);
		if (high == low)
			continue;
		uint64_t n = 1 + random64() % (1u << 20);
		uint32_t scale = bins_scale_for_range(low, high, n);
		if (scale == 0) {
			assert_false(bins_index(high - 1, low, 1, n, &i));
			continue;
		}
		assert_true(bins_count_for_range(low, high, scale) <= n);
		if (scale < BINS_SCALE_ONE)
			assert_true(bins_count_for_range(low, high, scale + 1) > n);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_below_offset),
		cmocka_unit_test(test_at_offset),
		cmocka_unit_test(test_exact_scales),
		cmocka_unit_test(test_intermediate_scales),
		cmocka_unit_test(test_top_of_address_space),
		cmocka_unit_test(test_ncounters),
		cmocka_unit_test(test_scale_zero),
		cmocka_unit_test(test_against_reference),
		cmocka_unit_test(test_inverse),
		cmocka_unit_test(test_tiling),
		cmocka_unit_test(test_count_for_range),
		cmocka_unit_test(test_scale_for_range),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
