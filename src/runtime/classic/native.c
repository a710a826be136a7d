/*
 * native.c - the native interface of profil.h: rate, backend, statistics.
 */
#include <errno.h>
#include <string.h>

#include "../../../include/profil.h"
#include "core/sampler.h"
#include "core/stats.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT int profil_set_hz(unsigned int hz)
{
	return sampler_set_hz(hz);
}

EXPORT int profil_set_backend(enum profil_backend backend)
{
	return sampler_set_backend((int)backend);
}

EXPORT int profil_set_stacks(unsigned int depth)
{
	return sampler_set_stacks(depth);
}

EXPORT int profil_get_stats(struct profil_stats *st, size_t size)
{
	if (!st || size == 0) {
		errno = EINVAL;
		return -1;
	}
	struct profil_stats s;
	memset(&s, 0, sizeof s);
	s.counted = atomic_load(&stats.counted);
	s.outside = atomic_load(&stats.outside);
	s.saturated = atomic_load(&stats.saturated);
	s.lost = atomic_load(&stats.lost);
	s.dropped = s.saturated + s.lost;
	s.taken = s.counted + s.outside + s.dropped;
	s.observed = atomic_load(&stats.observed);
	s.cpu_ns = atomic_load(&stats.cpu_ns);
	s.system = atomic_load(&stats.system);
	s.hz = sampler_hz();
	s.achieved_hz = s.cpu_ns ? (uint32_t)((s.observed * 1000000000.0) / s.cpu_ns + 0.5) : 0;
	s.threads = atomic_load(&stats.threads);
	s.threads_unsampled = atomic_load(&stats.threads_unsampled);
	s.backend = sampler_backend_in_use();
	s.active = sampler_active();
	s.faulted = sampler_faulted();
	s.flags = sampler_user_only() ? PROFIL_STATS_USER_ONLY : 0;
	s.threads_fallback = atomic_load(&stats.threads_fallback);
	memcpy(st, &s, size < sizeof s ? size : sizeof s);
	return 0;
}

EXPORT void profil_reset_stats(void)
{
	stats_reset();
}
