/*
 * walk.h - what the processors' walks (walk_x86_64.c, walk_aarch64.c)
 * share: the bounded, fault-tolerant load and the count of why walks
 * stop (unwind.c).  Async-signal-safe and lock-free.
 */
#ifndef PROFIL_UNWIND_WALK_H
#define PROFIL_UNWIND_WALK_H

#include <stdbool.h>
#include <string.h>
#include "sinks/satadd.h"
#include "unwind/unwind.h"

/* One walk's end, counted once per walk: the counters bounce between cores. */
void unwind_count_stop(enum unwind_stop why);

/* 8 bytes at addr, inside m's bounds: false if outside them or if the read faulted. */
static inline bool unwind_load(const struct unwind_mem *m, uintptr_t addr, uintptr_t *out)
{
	if (addr < m->lo || addr >= m->hi || m->hi - addr < 8)
		return false;
	if (m->copy) {
		memcpy(out, m->copy + (addr - m->lo), 8);
		return true;
	}
	uint64_t v;
	if (satload64((const uint64_t *)addr, &v) < 0)
		return false;
	*out = (uintptr_t)v;
	return true;
}

#endif
