/*
 * gmon_arcs.c - call arcs, one table per thread (see gmon_arcs.h).
 *
 * Async-signal-safe and lock-free: mcount runs wherever the program
 * runs, in signal handlers too, and the writer reads the tables from
 * crash handlers.  Memory comes from mmap; nothing is ever freed.
 *
 * A table is a hash of chains.  The fast path (gmon_arc_hit) walks the
 * chain and adds one to the count with a single unlocked instruction:
 * the table is the thread's own, and one instruction cannot be torn by a
 * signal handler that counts into the same table.  A new arc is pushed
 * at the head of its chain with compare-and-swap, so that a handler that
 * interrupts the insertion and inserts itself loses nothing either.
 * Other threads only read the tables (the writer).
 */
#include <stdatomic.h>
#include <stddef.h>
#include <sys/mman.h>

#include "gmon/gmon_arcs.h"
#include "gmon/gmon_layout.h"
#include "sinks/statemem.h"

struct arc {
	uintptr_t from, self;
	uint64_t count;
	struct arc *_Atomic next;
};

struct chunk {
	struct chunk *prev;
	size_t cap;
	atomic_size_t used;
	struct arc arcs[];
};

struct table {
	struct table *all_next;		/* set before the table is published */
	struct table *_Atomic free_next;
	uint64_t mask;			/* buckets - 1 */
	struct chunk *_Atomic chunks;
	struct arc *_Atomic buckets[];
};

/* mcount_x86_64.S reads these three and walks the tables itself. */
_Static_assert(offsetof(struct arc, from) == ARC_FROM, "layout");
_Static_assert(offsetof(struct arc, self) == ARC_SELF, "layout");
_Static_assert(offsetof(struct arc, count) == ARC_COUNT, "layout");
_Static_assert(offsetof(struct arc, next) == ARC_NEXT, "layout");
_Static_assert(offsetof(struct table, mask) == TABLE_MASK, "layout");
_Static_assert(offsetof(struct table, buckets) == TABLE_BUCKETS, "layout");

atomic_int gmon_arcs_counting;
__thread struct table *gmon_arcs_mine __attribute__((tls_model("initial-exec")));
#define counting gmon_arcs_counting
#define mine gmon_arcs_mine

static struct table *_Atomic all_tables;
static struct table *_Atomic free_tables;
static atomic_uint table_bits = 10;
static _Atomic uint64_t lost;

#define CHUNK_MIN (64u << 10)
#define CHUNK_MAX (4u << 20)

static void *map(size_t size)
{
	void *p = statemem_map(size, 0);
	return p == MAP_FAILED ? NULL : p;
}

static inline size_t slot_of(const struct table *t, uintptr_t from, uintptr_t self)
{
	uint64_t m = (uint64_t)(int64_t)ARC_HASH_IMM;
	return (size_t)(((((uint64_t)from << 16) ^ (uint64_t)self) * m >> 32) & t->mask);
}

/* One more call: a single instruction, whole against our own handlers. */
static inline void bump(uint64_t *count)
{
#if defined(__x86_64__)
	__asm__ volatile("addq $1, %0" : "+m"(*count));
#else
	__atomic_fetch_add(count, 1, __ATOMIC_RELAXED);
#endif
}

/*
 * The fast path in C: 0 if the arc was counted (or arcs are off), 1 if
 * it is new to this thread.  On x86-64 the stubs do the same in
 * assembly; this is the reference for other machines and for tests.
 */
__attribute__((target("general-regs-only")))
int gmon_arc_hit(uintptr_t from, uintptr_t self)
{
	if (!atomic_load_explicit(&counting, memory_order_relaxed))
		return 0;
	struct table *t = mine;
	if (!t)
		return 1;
	struct arc *a = atomic_load_explicit(&t->buckets[slot_of(t, from, self)],
					     memory_order_acquire);
	for (; a; a = atomic_load_explicit(&a->next, memory_order_acquire))
		if (a->from == from && a->self == self) {
			bump(&a->count);
			return 0;
		}
	return 1;
}

static void push_free(struct table *t)
{
	struct table *head = atomic_load(&free_tables);
	do
		atomic_store_explicit(&t->free_next, head, memory_order_relaxed);
	while (!atomic_compare_exchange_weak(&free_tables, &head, t));
}

/* A free table, or a new one.  Taking the whole free list at once
   avoids the ABA problem of popping one entry. */
static struct table *table_get(void)
{
	struct table *list = atomic_exchange(&free_tables, NULL);
	if (list) {
		struct table *rest = atomic_load(&list->free_next);
		while (rest) {
			struct table *next = atomic_load(&rest->free_next);
			push_free(rest);
			rest = next;
		}
		return list;
	}
	unsigned bits = atomic_load(&table_bits);
	struct table *t = map(sizeof *t + ((size_t)1 << bits) * sizeof t->buckets[0]);
	if (!t)
		return NULL;
	t->mask = ((uint64_t)1 << bits) - 1;
	struct table *head = atomic_load(&all_tables);
	do
		t->all_next = head;
	while (!atomic_compare_exchange_weak(&all_tables, &head, t));
	return t;
}

static struct arc *arc_alloc(struct table *t)
{
	struct chunk *c = atomic_load(&t->chunks);
	for (;;) {
		if (c) {
			size_t i = atomic_fetch_add(&c->used, 1);
			if (i < c->cap)
				return &c->arcs[i];
		}
		size_t bytes = c ? (c->cap * sizeof c->arcs[0]) * 2 : CHUNK_MIN;
		if (bytes > CHUNK_MAX)
			bytes = CHUNK_MAX;
		struct chunk *n = map(bytes);
		if (!n)
			return NULL;
		n->prev = c;
		n->cap = (bytes - sizeof *n) / sizeof n->arcs[0];
		if (atomic_compare_exchange_strong(&t->chunks, &c, n))
			c = n;
		else
			munmap(n, bytes);	/* a handler grew it first */
	}
}

/* The slow path: the first call of an arc in this thread. */
void gmon_arc_new(uintptr_t from, uintptr_t self)
{
	if (!atomic_load_explicit(&counting, memory_order_relaxed))
		return;
	struct table *t = mine;
	if (!t) {
		t = table_get();
		if (!t) {
			atomic_fetch_add(&lost, 1);
			return;
		}
		mine = t;
	}
	struct arc *_Atomic *head = &t->buckets[slot_of(t, from, self)];
	struct arc *n = NULL;
	for (;;) {
		struct arc *first = atomic_load(head);
		for (struct arc *a = first; a; a = atomic_load(&a->next))
			if (a->from == from && a->self == self) {
				/* A handler inserted it meanwhile: n, if
				   any, stays unused with a count of 0. */
				if (n)
					__atomic_store_n(&n->count, 0, __ATOMIC_RELAXED);
				bump(&a->count);
				return;
			}
		if (!n) {
			n = arc_alloc(t);
			if (!n) {
				atomic_fetch_add(&lost, 1);
				return;
			}
			n->from = from;
			n->self = self;
		}
		atomic_store(&n->next, first);
		__atomic_store_n(&n->count, 1, __ATOMIC_RELAXED);
		if (atomic_compare_exchange_strong(head, &first, n))
			return;
	}
}

void gmon_arcs_on(uint64_t text_size)
{
	unsigned bits = 10;
	while (bits < 20 && ((uint64_t)1 << bits) * 32 < text_size)
		bits++;
	atomic_store(&table_bits, bits);
	atomic_store(&counting, 1);
}

void gmon_arcs_off(void)
{
	atomic_store(&counting, 0);
}

void gmon_arcs_thread_end(void)
{
	struct table *t = mine;
	if (!t)
		return;
	mine = NULL;
	push_free(t);
}

static void zero(struct table *t)
{
	for (struct chunk *c = atomic_load(&t->chunks); c; c = c->prev) {
		size_t n = atomic_load(&c->used);
		for (size_t i = 0; i < n && i < c->cap; i++)
			__atomic_store_n(&c->arcs[i].count, 0, __ATOMIC_RELAXED);
	}
}

void gmon_arcs_after_fork(void)
{
	atomic_store(&free_tables, NULL);
	for (struct table *t = atomic_load(&all_tables); t; t = t->all_next) {
		zero(t);
		if (t != mine)
			push_free(t);
	}
	atomic_store(&lost, 0);
}

void gmon_arcs_each(void (*fn)(void *arg, uintptr_t from, uintptr_t self,
			       uint64_t count), void *arg)
{
	for (struct table *t = atomic_load(&all_tables); t; t = t->all_next)
		for (struct chunk *c = atomic_load(&t->chunks); c; c = c->prev) {
			size_t n = atomic_load(&c->used);
			for (size_t i = 0; i < n && i < c->cap; i++) {
				struct arc *a = &c->arcs[i];
				uint64_t count = __atomic_load_n(&a->count, __ATOMIC_RELAXED);
				if (count)
					fn(arg, a->from, a->self, count);
			}
		}
}

uint64_t gmon_arcs_count(void)
{
	uint64_t total = 0;
	for (struct table *t = atomic_load(&all_tables); t; t = t->all_next)
		for (struct chunk *c = atomic_load(&t->chunks); c; c = c->prev) {
			size_t n = atomic_load(&c->used);
			total += n < c->cap ? n : c->cap;
		}
	return total;
}

uint64_t gmon_arcs_lost(void)
{
	return atomic_load(&lost);
}
