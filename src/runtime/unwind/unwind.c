/*
 * unwind.c - what every processor's walk shares: the counts of why
 * walks stopped, and the walk of the loaded objects (the current set,
 * announced to table.c for the walk's length).  The walks themselves
 * are walk_x86_64.c and walk_aarch64.c; a machine with neither gets the
 * stub below (the sampled pc alone).
 *
 * Async-signal-safe and lock-free: one relaxed atomic add per walk.
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include "unwind/table.h"
#include "unwind/walk.h"

static _Atomic uint64_t stop_counts[UNWIND_STOP_COUNT];

void unwind_count_stop(enum unwind_stop why)
{
	atomic_fetch_add_explicit(&stop_counts[why], 1, memory_order_relaxed);
}

void unwind_stop_counts(uint64_t counts[UNWIND_STOP_COUNT])
{
	for (int i = 0; i < UNWIND_STOP_COUNT; i++)
		counts[i] = atomic_load_explicit(&stop_counts[i], memory_order_relaxed);
}

int unwind_walk(const struct unwind_regs *regs, const struct unwind_mem *mem, uintptr_t *pcs,
		int max, enum unwind_stop *stop)
{
	unsigned token = unwind_read_enter();
	int n = unwind_walk_in(unwind_tables_get(), regs, mem, pcs, max, stop);
	unwind_read_leave(token);
	return n;
}

#if !defined(__x86_64__) && !defined(__aarch64__)

int unwind_walk_in(const struct unwind_set *set, const struct unwind_regs *regs,
		   const struct unwind_mem *mem, uintptr_t *pcs, int max, enum unwind_stop *stop)
{
	(void)set;
	(void)mem;
	int n = 0;
	if (max > 0)
		pcs[n++] = regs->ip;
	*stop = UNWIND_NO_CFI;
	unwind_count_stop(UNWIND_NO_CFI);
	return n;
}

int unwind_regs_from_context(const void *context, struct unwind_regs *regs)
{
	(void)context;
	(void)regs;
	return -1;
}

#endif
