/*
 * stats.c - the process's sample statistics.
 * Async-signal-safe: atomics only.
 */
#include "core/stats.h"

struct stats stats;

void stats_reset(void)
{
	atomic_store(&stats.counted, 0);
	atomic_store(&stats.outside, 0);
	atomic_store(&stats.saturated, 0);
	atomic_store(&stats.lost, 0);
	for (int i = 0; i < PROFILE_LOST_COUNT; i++)
		atomic_store(&stats.lost_by[i], 0);
	atomic_store(&stats.observed, 0);
	atomic_store(&stats.cpu_ns, 0);
	atomic_store(&stats.system, 0);
	atomic_store(&stats.threads, 0);
	atomic_store(&stats.threads_unsampled, 0);
	atomic_store(&stats.threads_fallback, 0);
	for (int i = 0; i < 16; i++)
		atomic_store(&stats.stack_stop[i], 0);
}

uint64_t stats_lost_by(uint64_t *by)
{
	uint64_t sum = 0;
	for (int i = 0; i < PROFILE_LOST_COUNT; i++)
		sum += by[i] = atomic_load_explicit(&stats.lost_by[i], memory_order_relaxed);
	return sum;
}
