/*
 * stack_table.h - the distinct call stacks of a profile file's stack
 * table (profil(5) "The extension page and the stack table", SPEC
 * section 10).
 *
 * A sink set may carry a stack table: each sample whose stack was walked
 * is stored once per distinct (thread entry, stack) with a count.  The
 * table is bounded and never waits: a stack that finds no slot within
 * PROFILE_PROBES, or no room in the frame pool, or whose pages the file
 * system refused, is counted as unplaced.
 */
#ifndef PROFIL_STACK_TABLE_H
#define PROFIL_STACK_TABLE_H

#include <stdatomic.h>
#include <stdint.h>

#include "../../format/profile.h"
#include "sinks/reserve.h"

struct stack_table {
	struct profile_stack *slots;	/* in the file, mapped shared */
	uint64_t nslots;		/* a power of two */
	uint64_t *frames;		/* the pool, in the file */
	uint64_t frames_cap;
	uint64_t *frames_used;		/* in the file's extension page */
	uint32_t max_depth;		/* pcs a stack keeps at most */
	atomic_uint_fast64_t stacks;	/* samples whose stack is in a slot */
	atomic_uint_fast64_t unplaced;	/* samples whose stack is not */
	atomic_int broken;		/* a write faulted: no more tries */
	/* Its pages (slots and pool) asked for before they are first
	   written (reserve.h), or NULL. */
	const struct page_reserve *reserve;
};

/*
 * weight samples (system of them for time in the kernel) of thread-table
 * entry entry whose stack is pcs[0..n), innermost first, the walk having
 * ended for reason stop (enum profile_stop).  Async-signal-safe and
 * lock-free; a slot another thread or an interrupted frame is writing is
 * passed over, never waited for.
 */
void stacktab_add(struct stack_table *t, uint32_t entry, const uintptr_t *pcs, unsigned n,
		  unsigned stop, uint32_t weight, uint32_t system);

#endif
