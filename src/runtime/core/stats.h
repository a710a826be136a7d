/*
 * stats.h - the process's sample statistics (SPEC section 2).
 *
 * Every sample ends in exactly one of counted, outside, saturated or
 * lost, and "taken" is their sum, so the figures add up by construction;
 * lost is also kept by cause (profil(5)).
 * Updated from signal handlers: plain atomic additions, lock-free and
 * async-signal-safe.
 */
#ifndef PROFIL_STATS_H
#define PROFIL_STATS_H

#include <stdatomic.h>
#include <stdint.h>

#include "../../format/profile.h"

struct stats {
	atomic_uint_fast64_t counted;
	atomic_uint_fast64_t outside;
	atomic_uint_fast64_t saturated;
	atomic_uint_fast64_t lost;
	/* lost by cause (enum profile_lost): they add up to lost, as
	   every loss goes through stats_lose(). */
	atomic_uint_fast64_t lost_by[PROFILE_LOST_COUNT];
	atomic_uint_fast64_t observed;
	atomic_uint_fast64_t cpu_ns;
	atomic_uint_fast64_t system;	/* of those taken: for kernel time */
	atomic_uint threads;
	atomic_uint threads_unsampled;
	atomic_uint threads_fallback;
	/* Stack walks of counted samples by why they ended (enum
	   profile_stop): sampler_take_stack. */
	atomic_uint_fast64_t stack_stop[16];
	/* Bytes of stack the perf backend copies with each sample, set
	   when it opens with stacks on (profile_ext.stack_copy); 0: walked
	   in place.  Not a count: stats_reset() leaves it. */
	atomic_uint stack_copy;
};

extern struct stats stats;

static inline void stats_add(atomic_uint_fast64_t *field, uint64_t n)
{
	if (n)
		atomic_fetch_add_explicit(field, n, memory_order_relaxed);
}

/* n samples lost, and why (enum profile_lost). */
static inline void stats_lose(unsigned cause, uint64_t n)
{
	if (!n)
		return;
	atomic_fetch_add_explicit(&stats.lost_by[cause < PROFILE_LOST_COUNT ? cause
						 : PROFILE_LOST_CORRUPT], n,
				  memory_order_relaxed);
	atomic_fetch_add_explicit(&stats.lost, n, memory_order_relaxed);
}

/* The causes as of now into by[PROFILE_LOST_COUNT]; returns their sum,
   which a file writes as its lost, so that the two agree. */
uint64_t stats_lost_by(uint64_t *by);

void stats_reset(void);

#endif
