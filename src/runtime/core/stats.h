/*
 * stats.h - the process's sample statistics (SPEC section 2).
 *
 * Every sample ends in exactly one of counted, outside, saturated or
 * lost, and "taken" is their sum, so the figures add up by construction.
 * Updated from signal handlers: plain atomic additions, lock-free and
 * async-signal-safe.
 */
#ifndef PROFIL_STATS_H
#define PROFIL_STATS_H

#include <stdatomic.h>
#include <stdint.h>

struct stats {
	atomic_uint_fast64_t counted;
	atomic_uint_fast64_t outside;
	atomic_uint_fast64_t saturated;
	atomic_uint_fast64_t lost;
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

void stats_reset(void);

#endif
