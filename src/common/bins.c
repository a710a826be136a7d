/*
 * bins.c - the inverse of the bin formula (see bins.h).
 *
 * Counter i holds the pcs whose half-distance h = (pc - offset) / 2
 * satisfies floor(h * scale / 65536) == i, that is
 *	ceil(i * 65536 / scale) <= h < ceil((i + 1) * 65536 / scale).
 * Async-signal-safe: pure arithmetic.
 */
#include "bins.h"

/* The smallest h with floor(h * scale / 65536) >= index, if below 2^63. */
static bool first_half(uint64_t index, uint32_t scale, uint64_t *half)
{
	if (scale == 0 || scale > BINS_SCALE_ONE)
		return false;
	unsigned __int128 h = (((unsigned __int128)index << 16) + scale - 1) / scale;
	if (h >= (unsigned __int128)1 << 63)
		return false;
	*half = (uint64_t)h;
	return true;
}

bool bins_first_pc(uint64_t index, uint64_t offset, uint32_t scale,
		   uint64_t *pc)
{
	uint64_t half;
	if (!first_half(index, scale, &half))
		return false;
	/* 2 * half fits in 64 bits; the sum must not pass the top. */
	uint64_t delta = half * 2;
	if (delta > UINT64_MAX - offset)
		return false;
	*pc = offset + delta;
	return true;
}

bool bins_last_pc(uint64_t index, uint64_t offset, uint32_t scale,
		  uint64_t *pc)
{
	uint64_t first, next_half;
	if (!bins_first_pc(index, offset, scale, &first))
		return false;
	if (index == UINT64_MAX || !first_half(index + 1, scale, &next_half)
	    || next_half * 2 > UINT64_MAX - offset) {
		/* The next counter starts past the address space. */
		*pc = UINT64_MAX;
		return true;
	}
	*pc = offset + next_half * 2 - 1;
	return true;
}

uint64_t bins_count_for_range(uint64_t low, uint64_t high, uint32_t scale)
{
	uint64_t last;
	if (high <= low || !bins_index(high - 1, low, scale, UINT64_MAX, &last))
		return 0;
	return last + 1;
}

uint32_t bins_scale_for_range(uint64_t low, uint64_t high, uint64_t ncounters)
{
	if (high <= low || ncounters == 0)
		return 0;
	/* The last pc must map below ncounters: half * scale < ncounters * 65536. */
	uint64_t half = (high - 1 - low) / 2;
	if (half == 0)
		return BINS_SCALE_ONE;
	unsigned __int128 limit = ((unsigned __int128)ncounters << 16) - 1;
	unsigned __int128 scale = limit / half;
	return scale >= BINS_SCALE_ONE ? BINS_SCALE_ONE : (uint32_t)scale;
}
