/*
 * The stack table (stack_table.c): each distinct (entry, stack) once
 * with its count, the same pcs of two entries or two stop reasons kept
 * apart, depth cut to max_depth, a full pool or table counted as
 * unplaced, exact sums under concurrency, and a table that cannot be
 * written counted as unplaced instead of crashing.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../../src/runtime/sinks/fault.h"
#include "../../src/runtime/sinks/stack_table.h"

struct fixture {
	struct stack_table t;
	void *mem;
	size_t size;
	uint64_t used;
};

static void make(struct fixture *f, uint64_t slots, uint64_t frames)
{
	f->size = profile_stacks_size(slots) + profile_frames_size(frames);
	f->mem = mmap(NULL, f->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(f->mem != MAP_FAILED);
	memset(&f->t, 0, sizeof f->t);
	f->used = 0;
	f->t.slots = f->mem;
	f->t.nslots = slots;
	f->t.frames = (uint64_t *)((char *)f->mem + profile_stacks_size(slots));
	f->t.frames_cap = frames;
	f->t.frames_used = &f->used;
	f->t.max_depth = 128;
}

static void unmake(struct fixture *f)
{
	munmap(f->mem, f->size);
}

/* The count of stack (entry, stop, pcs), summed over its slots. */
static uint64_t count_of(const struct fixture *f, uint32_t entry, unsigned stop,
			 const uintptr_t *pcs, unsigned n)
{
	uint64_t sum = 0;
	for (uint64_t i = 0; i < f->t.nslots; i++) {
		const struct profile_stack *s = &f->t.slots[i];
		if (!s->hash || s->ready != 1 || s->entry != entry || s->stop != stop
		    || s->depth != n || s->frames + n > f->used)
			continue;
		if (memcmp(&f->t.frames[s->frames], pcs, n * sizeof *pcs) == 0)
			sum += s->count;
	}
	return sum;
}

static uint64_t slots_used(const struct fixture *f)
{
	uint64_t n = 0;
	for (uint64_t i = 0; i < f->t.nslots; i++)
		n += f->t.slots[i].hash != 0;
	return n;
}

static void distinct_stacks_once(void **state)
{
	(void)state;
	struct fixture f;
	make(&f, 64, 1024);
	const uintptr_t a[] = { 0x1000, 0x2000, 0x3000 }, b[] = { 0x1000, 0x2000, 0x3001 };
	stacktab_add(&f.t, 1, a, 3, PROFILE_STOP_COMPLETE, 1, 0);
	stacktab_add(&f.t, 1, a, 3, PROFILE_STOP_COMPLETE, 2, 1);
	stacktab_add(&f.t, 1, b, 3, PROFILE_STOP_COMPLETE, 1, 0);
	stacktab_add(&f.t, 2, a, 3, PROFILE_STOP_COMPLETE, 1, 0);	/* another thread */
	stacktab_add(&f.t, 1, a, 2, PROFILE_STOP_NO_CFI, 1, 0);		/* a prefix */
	assert_int_equal(count_of(&f, 1, PROFILE_STOP_COMPLETE, a, 3), 3);
	assert_int_equal(count_of(&f, 1, PROFILE_STOP_COMPLETE, b, 3), 1);
	assert_int_equal(count_of(&f, 2, PROFILE_STOP_COMPLETE, a, 3), 1);
	assert_int_equal(count_of(&f, 1, PROFILE_STOP_NO_CFI, a, 2), 1);
	assert_int_equal(slots_used(&f), 4);
	assert_int_equal(f.used, 3 + 3 + 3 + 2);
	assert_int_equal(atomic_load(&f.t.stacks), 6);
	assert_int_equal(atomic_load(&f.t.unplaced), 0);
	for (uint64_t i = 0; i < f.t.nslots; i++)
		if (f.t.slots[i].hash && f.t.slots[i].count == 3)
			assert_int_equal(f.t.slots[i].system, 1);
	unmake(&f);
}

static void depth_cut_to_innermost(void **state)
{
	(void)state;
	struct fixture f;
	make(&f, 64, 1024);
	f.t.max_depth = 4;
	uintptr_t pcs[10];
	for (int i = 0; i < 10; i++)
		pcs[i] = 0x1000 + (uintptr_t)i;
	stacktab_add(&f.t, 0, pcs, 10, PROFILE_STOP_COMPLETE, 1, 0);
	assert_int_equal(count_of(&f, 0, PROFILE_STOP_DEPTH, pcs, 4), 1);
	assert_int_equal(f.used, 4);
	unmake(&f);
}

static void full_pool_and_table_unplaced(void **state)
{
	(void)state;
	struct fixture f;
	make(&f, 8, 10);
	uintptr_t pcs[4] = { 1, 2, 3, 4 };
	for (uintptr_t i = 0; i < 20; i++) {
		pcs[0] = 0x100 + i;
		stacktab_add(&f.t, 0, pcs, 4, PROFILE_STOP_COMPLETE, 1, 0);
	}
	/* Two stacks of 4 fit in 10 frames; every slot is claimed by then. */
	assert_int_equal(atomic_load(&f.t.stacks), 2);
	assert_int_equal(atomic_load(&f.t.unplaced), 18);
	assert_true(f.used <= 10);
	/* A stack already kept is still counted. */
	pcs[0] = 0x100;
	stacktab_add(&f.t, 0, pcs, 4, PROFILE_STOP_COMPLETE, 5, 0);
	assert_int_equal(count_of(&f, 0, PROFILE_STOP_COMPLETE, pcs, 4), 6);
	unmake(&f);
}

static void empty_or_zero_weight(void **state)
{
	(void)state;
	struct fixture f;
	make(&f, 8, 16);
	uintptr_t pc = 0x10;
	stacktab_add(&f.t, 0, &pc, 1, 0, 0, 0);
	stacktab_add(&f.t, 0, &pc, 0, 0, 3, 0);
	assert_int_equal(atomic_load(&f.t.stacks), 0);
	assert_int_equal(atomic_load(&f.t.unplaced), 3);
	unmake(&f);
}

enum { THREADS = 4, ROUNDS = 20000, KINDS = 16 };

static void *hammer(void *arg)
{
	struct fixture *f = arg;
	uintptr_t pcs[6] = { 0, 0x2000, 0x3000, 0x4000, 0x5000, 0x6000 };
	for (int i = 0; i < ROUNDS; i++) {
		pcs[0] = 0x1000 + (uintptr_t)(i % KINDS);
		stacktab_add(&f->t, (uint32_t)(i % 2), pcs, 6, PROFILE_STOP_COMPLETE, 1, 0);
	}
	return NULL;
}

static void concurrent_sums_exact(void **state)
{
	(void)state;
	struct fixture f;
	make(&f, 4096, 1 << 16);
	pthread_t th[THREADS];
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, hammer, &f), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(atomic_load(&f.t.stacks) + atomic_load(&f.t.unplaced), THREADS * ROUNDS);
	assert_int_equal(atomic_load(&f.t.unplaced), 0);
	uint64_t sum = 0;
	uintptr_t pcs[6] = { 0, 0x2000, 0x3000, 0x4000, 0x5000, 0x6000 };
	for (int k = 0; k < KINDS; k++) {
		pcs[0] = 0x1000 + (uintptr_t)k;
		uint64_t c = count_of(&f, (uint32_t)(k % 2), PROFILE_STOP_COMPLETE, pcs, 6);
		assert_int_equal(c, THREADS * ROUNDS / KINDS);
		sum += c;
	}
	assert_int_equal(sum, THREADS * ROUNDS);
	unmake(&f);
}

static void unwritable_table_unplaced(void **state)
{
	(void)state;
	assert_int_equal(fault_install(), 0);
	struct fixture f;
	make(&f, 8, 64);
	assert_int_equal(mprotect(f.mem, f.size, PROT_READ), 0);
	uintptr_t pcs[2] = { 1, 2 };
	stacktab_add(&f.t, 0, pcs, 2, 0, 2, 0);
	stacktab_add(&f.t, 0, pcs, 2, 0, 1, 0);
	assert_int_equal(atomic_load(&f.t.stacks), 0);
	assert_int_equal(atomic_load(&f.t.unplaced), 3);
	assert_int_equal(atomic_load(&f.t.broken), 1);
	unmake(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(distinct_stacks_once),
		cmocka_unit_test(depth_cut_to_innermost),
		cmocka_unit_test(full_pool_and_table_unplaced),
		cmocka_unit_test(empty_or_zero_weight),
		cmocka_unit_test(concurrent_sums_exact),
		cmocka_unit_test(unwritable_table_unplaced),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
