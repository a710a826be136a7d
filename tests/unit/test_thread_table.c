/*
 * Counts per thread (thread_table.c): each thread its entry, threads
 * past the table in "other threads", each counter its pc slot and what
 * finds none left to the entry's total, an ended thread's tid given a
 * new entry, names read, exact sums under concurrency, and a table that
 * cannot be written counted as unattributed instead of crashing.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "../../src/runtime/sinks/fault.h"
#include "../../src/runtime/sinks/thread_table.h"

struct fixture {
	struct thread_table t;
	void *mem;
};

static void make(struct fixture *f, uint32_t entries, uint64_t npcs)
{
	size_t size = profile_threads_size(entries, npcs);
	f->mem = calloc(1, size);
	assert_non_null(f->mem);
	memset(&f->t, 0, sizeof f->t);
	f->t.entries = f->mem;
	f->t.nentries = entries;
	f->t.pcs = (struct profile_pc *)((char *)f->mem + entries * sizeof(struct profile_thread));
	f->t.npcs = npcs;
	f->t.owner = 1234;
}

/* Count n samples of tid (not in that thread) at counter index of seg. */
static void count(struct fixture *f, pid_t tid, uint32_t seg, uint64_t index, uint32_t n)
{
	struct thread_ref who = THREAD_REF(tid, 0);
	threadtab_count(&f->t, &who, seg, index, n);
}

static int entry_of(const struct fixture *f, pid_t tid)
{
	for (uint32_t i = 1; i < f->t.nentries; i++)
		if (f->t.entries[i].tid == tid
		    && !(f->t.entries[i].owner & PROFILE_THREAD_ENDED))
			return (int)i;
	return -1;
}

static uint64_t total(const struct fixture *f)
{
	uint64_t s = atomic_load(&f->t.unattributed);
	for (uint32_t i = 0; i < f->t.nentries; i++)
		s += f->t.entries[i].samples;
	return s;
}

/* The samples of entry e at counter index of seg, from the pc pool. */
static uint64_t at(const struct fixture *f, uint32_t e, uint32_t seg, uint64_t index)
{
	uint64_t key = profile_pc_key(e, seg, index), n = 0;
	for (uint64_t k = 0; k < f->t.npcs; k++)
		if (f->t.pcs[k].key == key)
			n += f->t.pcs[k].count;
	return n;
}

static void test_entries_and_others(void **state)
{
	(void)state;
	struct fixture f;
	make(&f, 5, 64);	/* "other threads" and 4 */
	for (pid_t tid = 11; tid <= 16; tid++)
		count(&f, tid, 0, (uint64_t)tid, (uint32_t)tid);
	for (pid_t tid = 11; tid <= 14; tid++) {
		int e = entry_of(&f, tid);
		assert_true(e > 0);
		assert_int_equal(f.t.entries[e].samples, tid);
		assert_int_equal(PROFILE_THREAD_PID(f.t.entries[e].owner), 1234);
		assert_int_equal(at(&f, (uint32_t)e, 0, (uint64_t)tid), tid);
	}
	assert_int_equal(entry_of(&f, 15), -1);
	assert_int_equal(entry_of(&f, 16), -1);
	assert_int_equal(f.t.entries[0].tid, 0);
	assert_int_equal(f.t.entries[0].samples, 15 + 16);
	assert_int_equal(at(&f, 0, 0, 15), 15);
	assert_int_equal(total(&f), 11 + 12 + 13 + 14 + 15 + 16);
	/* The same thread again: the same entry and slot. */
	count(&f, 12, 0, 12, 100);
	assert_int_equal(f.t.entries[entry_of(&f, 12)].samples, 112);
	assert_int_equal(at(&f, (uint32_t)entry_of(&f, 12), 0, 12), 112);
	free(f.mem);
}

static void test_pool_full(void **state)
{
	(void)state;
	struct fixture f;
	make(&f, 3, 4);
	for (uint64_t i = 0; i < 10; i++)
		count(&f, 7, 2, i, 1);
	count(&f, 7, UINT32_MAX, 0, 5);		/* a counter no key can name */
	int e = entry_of(&f, 7);
	assert_true(e > 0);
	assert_int_equal(f.t.entries[e].samples, 15);
	uint64_t placed = 0;
	for (uint64_t k = 0; k < f.t.npcs; k++) {
		assert_int_equal(PROFILE_PC_ENTRY(f.t.pcs[k].key), e);
		assert_int_equal(PROFILE_PC_SEG(f.t.pcs[k].key), 2);
		placed += f.t.pcs[k].count;
	}
	assert_int_equal(placed, 4);		/* 11 left unplaced */
	assert_int_equal(total(&f), 15);
	free(f.mem);
}

static void test_system_and_end(void **state)
{
	(void)state;
	struct fixture f;
	make(&f, 8, 64);
	assert_int_equal(prctl(PR_SET_NAME, "first name"), 0);
	pid_t me = gettid();
	struct thread_ref who = THREAD_REF(me, 1);
	threadtab_count(&f.t, &who, 1, 40, 6);
	threadtab_count_system(&f.t, &who, 1, 40, 4);
	int e = entry_of(&f, me);
	assert_true(e > 0);
	assert_string_equal(f.t.entries[e].comm, "first name");
	assert_int_equal(f.t.entries[e].system, 4);
	uint64_t key = profile_pc_key((uint32_t)e, 1, 40);
	for (uint64_t k = 0; k < f.t.npcs; k++)
		if (f.t.pcs[k].key == key)
			assert_int_equal(f.t.pcs[k].system, 4);
	/* The name as the thread ends; a later thread of the same tid is
	   another entry. */
	assert_int_equal(prctl(PR_SET_NAME, "last name"), 0);
	threadtab_end(&f.t, me);
	assert_string_equal(f.t.entries[e].comm, "last name");
	assert_true(f.t.entries[e].owner & PROFILE_THREAD_ENDED);
	count(&f, me, 1, 40, 2);
	int again = entry_of(&f, me);
	assert_true(again > 0 && again != e);
	assert_int_equal(f.t.entries[again].samples, 2);
	assert_int_equal(f.t.entries[e].samples, 6);
	/* Every running thread named at the end, from /proc. */
	memset(f.t.entries[again].comm, 0, 16);
	threadtab_name_all(&f.t);
	assert_string_equal(f.t.entries[again].comm, "last name");
	free(f.mem);
}

struct job {
	struct fixture *f;
	pthread_barrier_t *start;
};

static void *hammer(void *p)
{
	struct job *j = p;
	pid_t me = gettid();
	pthread_barrier_wait(j->start);
	for (int i = 0; i < 100000; i++) {
		struct thread_ref who = THREAD_REF(me, 1);
		threadtab_count(&j->f->t, &who, 0, (uint64_t)(i % 100), 1);
	}
	return NULL;
}

static void test_concurrent(void **state)
{
	(void)state;
	struct fixture f;
	make(&f, 3, 1024);	/* 2 entries for 4 threads: 2 share "other" */
	pthread_barrier_t start;
	pthread_barrier_init(&start, NULL, 4);
	pthread_t t[4];
	struct job j = { &f, &start };
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, hammer, &j), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&start);
	assert_int_equal(total(&f), 400000);
	assert_int_equal(f.t.entries[0].samples, 200000);
	uint64_t placed = 0;
	for (uint64_t k = 0; k < f.t.npcs; k++)
		placed += f.t.pcs[k].count;
	assert_int_equal(placed, 400000);
	for (uint64_t i = 0; i < 100; i++)
		assert_int_equal(at(&f, 0, 0, i), 2000);
	free(f.mem);
}

/* The table in a shared mapping past its file's end: every access is
   SIGBUS, as on a full disk; nothing is lost, all is unattributed. */
static void test_unwritable(void **state)
{
	(void)state;
	assert_int_equal(fault_install(), 0);
	FILE *file = tmpfile();
	assert_non_null(file);
	size_t size = profile_threads_size(4, 16);
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fileno(file), 0);
	assert_true(p != MAP_FAILED);
	struct fixture f = { .mem = p };
	memset(&f.t, 0, sizeof f.t);
	f.t.entries = p;
	f.t.nentries = 4;
	f.t.pcs = (struct profile_pc *)((char *)p + 4 * sizeof(struct profile_thread));
	f.t.npcs = 16;
	count(&f, 5, 0, 1, 3);
	count(&f, 6, 0, 1, 4);
	assert_int_equal(atomic_load(&f.t.broken), 1);
	assert_int_equal(atomic_load(&f.t.unattributed), 7);
	threadtab_end(&f.t, 5);		/* no crash either */
	threadtab_name_all(&f.t);
	munmap(p, size);
	fclose(file);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_entries_and_others),
		cmocka_unit_test(test_pool_full),
		cmocka_unit_test(test_system_and_end),
		cmocka_unit_test(test_concurrent),
		cmocka_unit_test(test_unwritable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
