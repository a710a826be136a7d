/*
 * stack_table.c - storing each distinct stack once (stack_table.h).
 *
 * stacktab_add() runs in signal handlers (the timer backend) and in the
 * perf backend's drain: it is async-signal-safe and lock-free (no
 * malloc, no stdio, no lock, no waiting).  A slot is claimed by one
 * compare-and-swap of its hash from 0 and never given back; its pcs get
 * room in the pool by one atomic addition; it becomes visible by a
 * release store of ready.  A claimed slot that is not ready yet belongs
 * to another thread, or to the very frame this handler interrupted: it
 * is passed over, and the stack may end up in a second slot, which
 * readers add up.  Every access to the file goes through satadd.h (a
 * truncated file faults without reaching the program) after the page was
 * asked for (reserve.h: a full disk loses stacks, not the program).
 */
#include <stdatomic.h>
#include <string.h>

#include "sinks/satadd.h"
#include "sinks/stack_table.h"

/* The hash of (entry, stop, pcs): never 0, which marks a free slot. */
static uint64_t stack_hash(uint32_t entry, unsigned stop, const uintptr_t *pcs, unsigned n)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325) ^ ((uint64_t)entry << 8 | stop);
	for (unsigned i = 0; i < n; i++) {
		h ^= (uint64_t)pcs[i];
		h *= UINT64_C(0x9e3779b97f4a7c15);
		h ^= h >> 29;
	}
	h ^= n;
	h *= UINT64_C(0xbf58476d1ce4e5b9);
	h ^= h >> 31;
	return h ? h : 1;
}

/* Words 2 and 3 of a slot: frames, entry; depth, stop, ready. */
static uint64_t where_word(uint32_t frames, uint32_t entry)
{
	struct { uint32_t frames, entry; } w = { frames, entry };
	uint64_t v;
	memcpy(&v, &w, sizeof v);
	return v;
}

static uint64_t shape_word(uint16_t depth, uint8_t stop, uint8_t ready)
{
	struct { uint16_t depth; uint8_t stop, ready; uint32_t reserved; } w = { depth, stop, ready, 0 };
	uint64_t v;
	memcpy(&v, &w, sizeof v);
	return v;
}

static int ready_of(uint64_t shape)
{
	struct { uint16_t depth; uint8_t stop, ready; uint32_t reserved; } w;
	memcpy(&w, &shape, sizeof w);
	return w.ready == 1;
}

static uint64_t count_word(uint32_t count, uint32_t system)
{
	struct { uint32_t count, system; } w = { count, system };
	uint64_t v;
	memcpy(&v, &w, sizeof v);
	return v;
}

static uint64_t *word(struct profile_stack *s, unsigned i)
{
	return (uint64_t *)(void *)s + i;
}

static void broke(struct stack_table *t)
{
	atomic_store_explicit(&t->broken, 1, memory_order_relaxed);
}

/* Can [p, p+len) of the table be written? A refused page breaks it. */
static int have(struct stack_table *t, const void *p, size_t len)
{
	if (reserve_pages(t->reserve, p, len) == 0)
		return 1;
	broke(t);
	return 0;
}

/* Is ready slot s the stack (entry, stop, pcs)? -1 on a fault. */
static int same(struct stack_table *t, struct profile_stack *s, uint32_t entry, unsigned stop,
		const uintptr_t *pcs, unsigned n)
{
	uint64_t where, shape;
	if (satload64(word(s, 2), &where) < 0 || satload64(word(s, 3), &shape) < 0)
		return -1;
	if (where_word((uint32_t)where, entry) != where
	    || shape != shape_word((uint16_t)n, (uint8_t)stop, 1))
		return 0;
	uint64_t first = (uint32_t)where;
	if (first > t->frames_cap || n > t->frames_cap - first)
		return 0;
	for (unsigned i = 0; i < n; i++) {
		uint64_t pc;
		if (satload64(&t->frames[first + i], &pc) < 0)
			return -1;
		if (pc != (uint64_t)pcs[i])
			return 0;
	}
	return 1;
}

/* Room for n pcs in the pool: the index of the first, or -1 (full, a
   fault, or too much contention: the stack is not kept).  A
   compare-and-swap loop, bounded, since the counter lives in the file
   where only satadd.h's accesses are safe. */
static int64_t take_frames(struct stack_table *t, unsigned n)
{
	uint64_t used;
	if (satload64(t->frames_used, &used) < 0)
		return -1;
	for (int tries = 0; tries < 16; tries++) {
		if (used > t->frames_cap || n > t->frames_cap - used)
			return -1;
		int64_t r = satcas64(t->frames_used, used, used + n);
		if (r < 0)
			return -1;
		if (r == 1)
			return (int64_t)used;
		if (satload64(t->frames_used, &used) < 0)
			return -1;
	}
	return -1;
}

/* Fill the slot just claimed: room in the pool, the pcs, then ready.
   0, or -1 if the stack was not kept (the slot stays claimed, never
   ready: readers skip it). */
static int fill(struct stack_table *t, struct profile_stack *s, uint32_t entry, unsigned stop,
		const uintptr_t *pcs, unsigned n, uint32_t weight, uint32_t system)
{
	int64_t first = take_frames(t, n);
	if (first < 0)
		return -1;
	uint64_t *f = &t->frames[first];
	if (!have(t, f, n * sizeof *f))
		return -1;
	for (unsigned i = 0; i < n; i++)
		if (satstore64(&f[i], (uint64_t)pcs[i]) < 0)
			goto fault;
	/* The count before ready: a reader never sees a ready slot of 0. */
	if (satstore64(word(s, 1), count_word(weight, system)) < 0
	    || satstore64(word(s, 2), where_word((uint32_t)first, entry)) < 0)
		goto fault;
	atomic_thread_fence(memory_order_release);
	if (satstore64(word(s, 3), shape_word((uint16_t)n, (uint8_t)stop, 1)) < 0)
		goto fault;
	return 0;
fault:
	broke(t);
	return -1;
}

void stacktab_add(struct stack_table *t, uint32_t entry, const uintptr_t *pcs, unsigned n,
		  unsigned stop, uint32_t weight, uint32_t system)
{
	if (!weight)
		return;
	if (!n || atomic_load_explicit(&t->broken, memory_order_relaxed))
		goto unplaced;
	if (n > t->max_depth) {
		n = t->max_depth;	/* the innermost kept */
		stop = PROFILE_STOP_DEPTH;
	}
	uint64_t h = stack_hash(entry, stop, pcs, n), mask = t->nslots - 1;
	uint64_t first = (h * UINT64_C(0x9e3779b97f4a7c15)) >> 40;
	for (unsigned k = 0; k < PROFILE_PROBES && k < t->nslots; k++) {
		struct profile_stack *s = &t->slots[(first + k) & mask];
		uint64_t cur, shape;
		if (reserve_untouched(t->reserve, s))
			cur = 0;	/* never written: free */
		else if (satload64(&s->hash, &cur) < 0)
			goto fault;
		if (cur == 0) {
			if (!have(t, s, sizeof *s))
				goto unplaced;
			int64_t r = satcas64(&s->hash, 0, h);
			if (r < 0)
				goto fault;
			if (r == 1) {
				if (fill(t, s, entry, stop, pcs, n, weight, system) < 0)
					goto unplaced;
				goto placed;
			}
			if (satload64(&s->hash, &cur) < 0)
				goto fault;
		}
		if (cur != h)
			continue;
		if (satload64(word(s, 3), &shape) < 0)
			goto fault;
		atomic_thread_fence(memory_order_acquire);
		if (!ready_of(shape))
			continue;	/* being written: not waited for */
		int r = same(t, s, entry, stop, pcs, n);
		if (r < 0)
			goto fault;
		if (!r)
			continue;	/* another stack of the same hash */
		if (satadd32(&s->count, weight) < 0 || (system && satadd32(&s->system, system) < 0))
			goto fault;
		goto placed;
	}
	goto unplaced;
placed:
	atomic_fetch_add_explicit(&t->stacks, weight, memory_order_relaxed);
	return;
fault:
	broke(t);
unplaced:
	atomic_fetch_add_explicit(&t->unplaced, weight, memory_order_relaxed);
}
