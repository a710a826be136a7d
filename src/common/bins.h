/*
 * bins.h - the profil(2) bin formula and its exact inverse.
 *
 * A histogram maps a pc to counter ((pc - offset) / 2) * scale / 65536.
 * This is the one definition of that mapping: the runtime uses it to
 * count a sample, and every writer and reader uses it to turn a counter
 * back into the addresses it stands for, so that no reader rounds a
 * sample into a neighbouring function.
 *
 * Async-signal-safe: pure arithmetic, no state.
 */
#ifndef PROFIL_BINS_H
#define PROFIL_BINS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The scale that maps each 2 bytes of text to one counter. */
#define BINS_SCALE_ONE 0x10000u

/*
 * bins_index - the counter for pc, or false when pc is below offset or
 * the counter would be at or past ncounters.  Exact for every 64-bit pc,
 * offset and every scale up to BINS_SCALE_ONE.
 */
static inline bool bins_index(uint64_t pc, uint64_t offset, uint32_t scale,
			      uint64_t ncounters, uint64_t *index)
{
	if (pc < offset || scale == 0)
		return false;
	uint64_t half = (pc - offset) / 2;	/* below 2^63 */
	/* half * scale / 65536, split so that no product passes 2^64. */
	uint64_t i = (half >> 16) * scale + ((half & 0xffff) * scale >> 16);
	if (i >= ncounters)
		return false;
	*index = i;
	return true;
}

/*
 * bins_first_pc - the lowest pc counted into counter index, or false if
 * no pc maps to it (a scale above BINS_SCALE_ONE is not supported, and an
 * index past the address space has no pc).
 */
bool bins_first_pc(uint64_t index, uint64_t offset, uint32_t scale,
		   uint64_t *pc);

/*
 * bins_last_pc - the highest pc counted into counter index (inclusive),
 * or false if no pc maps to it.
 */
bool bins_last_pc(uint64_t index, uint64_t offset, uint32_t scale,
		  uint64_t *pc);

/*
 * bins_count_for_range - how many counters a histogram needs so that
 * every pc in [low, high) has one, with the given scale.
 */
uint64_t bins_count_for_range(uint64_t low, uint64_t high, uint32_t scale);

/*
 * bins_scale_for_range - the largest scale, at most BINS_SCALE_ONE, with
 * which ncounters counters hold every pc in [low, high): the finest
 * histogram that fits.  0 if none does (fewer counters than the range
 * needs at scale 1).  Writers of a histogram and its readers both call
 * it, so a file need not carry a scale it can be recomputed from.
 */
uint32_t bins_scale_for_range(uint64_t low, uint64_t high, uint64_t ncounters);

#endif
