/*
 * The sinks (sink.h): a sample lands in the right counter of the right
 * region, or in exactly one statistic, so that counted + outside +
 * saturated + lost is always the weight handed in; and a replaced set is
 * never written again once sinks_replace() has returned, even with
 * handlers counting at the same moment in other threads.
 *
 * cmocka puts its own SIGSEGV/SIGBUS handlers in place around every test
 * (see test_satadd.c): faults_recovered() installs libprofil's once and
 * puts it back in each test that needs it.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../src/runtime/sinks/fault.h"
#include "../../src/runtime/sinks/satadd.h"
#include "../../src/runtime/sinks/sink.h"
#include "../../src/runtime/core/stats.h"
#include "../../src/runtime/sinks/thread_table.h"

static long page;

static int installed_here;
static struct sigaction ours_segv, ours_bus;

static void faults_recovered(void)
{
	if (!installed_here) {
		assert_true(satadd_recovers());
		assert_int_equal(fault_install(), 0);
		assert_int_equal(sigaction(SIGSEGV, NULL, &ours_segv), 0);
		assert_int_equal(sigaction(SIGBUS, NULL, &ours_bus), 0);
		installed_here = 1;
	} else {
		assert_int_equal(sigaction(SIGSEGV, &ours_segv, NULL), 0);
		assert_int_equal(sigaction(SIGBUS, &ours_bus, NULL), 0);
	}
}

/* As a signal handler counts: between sinks_enter() and sinks_leave(). */
static enum sink_result count(uintptr_t pc, uint32_t weight)
{
	unsigned token = sinks_enter();
	enum sink_result r = sinks_count(pc, weight, NULL);
	sinks_leave(token);
	return r;
}

/* The weight handed to count() and taken (not SINK_NONE) in this test. */
static uint64_t given;

static enum sink_result give(uintptr_t pc, uint32_t weight)
{
	enum sink_result r = count(pc, weight);
	if (r != SINK_NONE)
		given += weight;
	return r;
}

static uint64_t accounted(void)
{
	return atomic_load(&stats.counted) + atomic_load(&stats.outside)
	       + atomic_load(&stats.saturated) + atomic_load(&stats.lost);
}

static void expect_stats(uint64_t counted, uint64_t outside, uint64_t saturated, uint64_t lost)
{
	assert_int_equal(atomic_load(&stats.counted), counted);
	assert_int_equal(atomic_load(&stats.outside), outside);
	assert_int_equal(atomic_load(&stats.saturated), saturated);
	assert_int_equal(atomic_load(&stats.lost), lost);
	assert_int_equal(accounted(), given);	/* the invariant */
}

static struct sink_set *one_region(void *base, uint64_t offset, uint64_t n,
				   uint32_t scale, uint32_t width)
{
	struct sink_set *set = sinks_new(1);
	assert_non_null(set);
	assert_int_equal(set->nregions, 1);
	set->regions[0] = (struct region){ offset, n, scale, width, base, REGION_BINS, NULL, 0, NULL };
	return set;
}

static int setup(void **state)
{
	(void)state;
	sinks_replace(NULL);
	stats_reset();
	given = 0;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sinks_replace(NULL);
	return 0;
}

static void test_new(void **state)
{
	(void)state;
	struct sink_set *set = sinks_new(5);
	assert_non_null(set);
	assert_int_equal(set->nregions, 5);
	for (unsigned i = 0; i < 5; i++) {
		assert_int_equal(set->regions[i].ncounters, 0);
		assert_null(set->regions[i].base);
	}
	sinks_replace(set);	/* freed by the next replace */
	assert_true(sinks_installed());
	sinks_replace(NULL);
	assert_false(sinks_installed());
	/* A set of no regions holds nothing: every sample is outside. */
	set = sinks_new(0);
	assert_non_null(set);
	assert_int_equal(set->nregions, 0);
	sinks_replace(set);
	assert_true(sinks_installed());
	assert_int_equal(give(0x1000, 3), SINK_OK);
	expect_stats(0, 3, 0, 0);
}

static void test_counts_by_weight(void **state)
{
	(void)state;
	uint16_t c[18] = { 0 }, want[18] = { 0 };
	/* Guards on both sides: c[0] and c[17] are not the region's. */
	sinks_replace(one_region(&c[1], 0x1000, 16, 0x10000, 2));
	assert_true(sinks_installed());
	assert_int_equal(give(0x1000, 1), SINK_OK);
	assert_int_equal(give(0x1001, 2), SINK_OK);	/* same counter */
	want[1] += 3;
	assert_int_equal(give(0x1002, 7), SINK_OK);
	want[2] += 7;
	assert_int_equal(give(0x1000 + 2 * 15 + 1, 5), SINK_OK);	/* the last byte */
	want[16] += 5;
	assert_int_equal(give(0x1000 + 2 * 9, 1000), SINK_OK);
	want[10] += 1000;
	assert_int_equal(give(0x1000 + 2 * 9, 0), SINK_OK);	/* nothing */
	assert_memory_equal(c, want, sizeof c);
	expect_stats(1015, 0, 0, 0);

	assert_int_equal(give(0xfff, 7), SINK_OK);		/* below */
	assert_int_equal(give(0, 1), SINK_OK);
	assert_int_equal(give(0x1000 + 32, 11), SINK_OK);	/* past the end */
	assert_int_equal(give(UINTPTR_MAX, 2), SINK_OK);
	assert_memory_equal(c, want, sizeof c);
	expect_stats(1015, 21, 0, 0);
}

/* Several scales and offsets: the counter bins.h names, and no other. */
static void test_counts_follow_formula(void **state)
{
	(void)state;
	enum { N = 100 };
	static const uint32_t scales[] = { 2, 3, 0x4000, 0x5555, 0x8000, 0xffff, 0x10000 };
	for (size_t s = 0; s < sizeof scales / sizeof scales[0]; s++) {
		uint32_t c[N] = { 0 };
		uint64_t offset = 0x400000 + s;
		sinks_replace(one_region(c, offset, N, scales[s], 4));
		uint64_t in = 0;
		for (uint64_t d = 0; d < 2 * 65536 * 3; d += 1 + d / 64) {
			uint64_t i = ((d / 2) * scales[s]) >> 16;
			uint32_t before = i < N ? c[i] : 0;
			assert_int_equal(give(offset + d, 1), SINK_OK);
			if (i < N) {
				assert_int_equal(c[i], before + 1);
				in++;
			}
		}
		uint64_t sum = 0;
		for (int i = 0; i < N; i++)
			sum += c[i];
		assert_int_equal(sum, in);
		assert_int_equal(atomic_load(&stats.counted) + atomic_load(&stats.outside), given);
	}
	assert_int_equal(accounted(), given);
}

static void test_below_every_region(void **state)
{
	(void)state;
	uint16_t a[8] = { 0 }, b[8] = { 0 }, zero[8] = { 0 };
	struct sink_set *set = sinks_new(2);
	assert_non_null(set);
	set->regions[0] = (struct region){ 0x3000, 8, 0x10000, 2, a, REGION_BINS, NULL, 0, NULL };
	set->regions[1] = (struct region){ 0x2000, 8, 0x10000, 2, b, REGION_BINS, NULL, 0, NULL };
	sinks_replace(set);
	assert_int_equal(give(0x1fff, 3), SINK_OK);
	assert_int_equal(give(0, 4), SINK_OK);
	assert_int_equal(give(0x2010, 5), SINK_OK);	/* between the two */
	assert_int_equal(give(0x3010, 6), SINK_OK);	/* above both */
	assert_memory_equal(a, zero, sizeof a);
	assert_memory_equal(b, zero, sizeof b);
	expect_stats(0, 18, 0, 0);
}

static void test_saturation16(void **state)
{
	(void)state;
	uint16_t c[3] = { 0x1111, 65530, 0x2222 };
	sinks_replace(one_region(&c[1], 0, 1, 2, 2));
	assert_int_equal(give(100, 10), SINK_OK);
	assert_int_equal(c[1], 65535);
	expect_stats(5, 0, 5, 0);
	assert_int_equal(give(65535, 3), SINK_OK);	/* full already */
	assert_int_equal(c[1], 65535);
	expect_stats(5, 0, 8, 0);
	c[1] = 0;
	assert_int_equal(give(7, 0xffffffffu), SINK_OK);
	assert_int_equal(c[1], 65535);
	expect_stats(5 + 65535, 0, 8 + 0xffffffffull - 65535, 0);
	assert_int_equal(c[0], 0x1111);
	assert_int_equal(c[2], 0x2222);
}

static void test_width32(void **state)
{
	(void)state;
	uint32_t c[6] = { 0 };
	sinks_replace(one_region(&c[1], 0x8000, 4, 0x8000, 4));	/* 4 bytes a counter */
	assert_int_equal(give(0x8000 + 4 * 3 + 3, 70000), SINK_OK);	/* counter 3 */
	assert_int_equal(c[4], 70000);
	assert_int_equal(give(0x8000 + 4 * 3, 70000), SINK_OK);
	assert_int_equal(c[4], 140000);			/* past 65535: no wrap */
	assert_int_equal(give(0x8000 + 4, 1), SINK_OK);	/* counter 1 */
	assert_int_equal(c[2], 1);
	assert_int_equal(give(0x8000 + 16, 1), SINK_OK);	/* counter 4: outside */
	assert_int_equal(c[5], 0);
	assert_int_equal(c[0], 0);
	expect_stats(140001, 1, 0, 0);
	c[1] = 0xfffffffe;
	assert_int_equal(give(0x8000, 3), SINK_OK);
	assert_int_equal(c[1], 0xffffffffu);
	expect_stats(140002, 1, 2, 0);
	c[1] = 0;
	assert_int_equal(give(0x8000, 0xffffffffu), SINK_OK);
	assert_int_equal(c[1], 0xffffffffu);
	expect_stats(140002 + 0xffffffffull, 1, 2, 0);
	assert_int_equal(c[3], 0);
}

/*
 * Regions are listed highest offset first (sink.h), and count_in() takes
 * the first that holds the pc: so the region with the highest offset
 * that holds it, and a pc past that region's counters falls through to a
 * lower one (SPEC 4).
 */
static void test_two_regions(void **state)
{
	(void)state;
	uint16_t low[64] = { 0 }, high[4] = { 0 };
	uint32_t top[2] = { 0 };
	struct sink_set *set = sinks_new(3);
	assert_non_null(set);
	set->regions[0] = (struct region){ 0x2100, 2, 0x10000, 4, top, REGION_BINS, NULL, 0, NULL };
	set->regions[1] = (struct region){ 0x2000, 4, 0x10000, 2, high, REGION_BINS, NULL, 0, NULL };
	set->regions[2] = (struct region){ 0x1000, 64, 2, 2, low, REGION_BINS, NULL, 0, NULL };	/* 64 KiB a counter */
	sinks_replace(set);
	assert_int_equal(give(0x2002, 1), SINK_OK);	/* low and high hold it: high */
	assert_int_equal(high[1], 1);
	assert_int_equal(give(0x2000, 2), SINK_OK);
	assert_int_equal(high[0], 2);
	assert_int_equal(give(0x2007, 4), SINK_OK);	/* high's last byte */
	assert_int_equal(high[3], 4);
	assert_int_equal(give(0x2008, 8), SINK_OK);	/* past high: low's */
	assert_int_equal(give(0x1fff, 16), SINK_OK);	/* below high: low's */
	assert_int_equal(give(0x1000, 32), SINK_OK);
	assert_int_equal(low[0], 8 + 16 + 32);
	assert_int_equal(give(0x2103, 64), SINK_OK);	/* all three: top */
	assert_int_equal(top[1], 64);
	assert_int_equal(give(0x1000 + 65536 * 5, 128), SINK_OK);
	assert_int_equal(low[5], 128);
	assert_int_equal(give(0x1000 + 65536 * 64, 256), SINK_OK);	/* past all */
	assert_int_equal(give(0xfff, 512), SINK_OK);
	uint64_t sum = 0;
	for (int i = 0; i < 64; i++)
		sum += low[i];
	assert_int_equal(sum, 8 + 16 + 32 + 128);
	assert_int_equal(high[2], 0);
	assert_int_equal(top[0], 0);
	expect_stats(1 + 2 + 4 + 8 + 16 + 32 + 64 + 128, 256 + 512, 0, 0);
}

/*
 * System counts: sinks_count() never counts into a REGION_SYSTEM region,
 * even one that comes first; sinks_count_system() counts only there,
 * touches no statistic, and drops what no system region holds.
 */
static void test_system(void **state)
{
	(void)state;
	uint32_t bins[8] = { 0 }, sys[8] = { 0 };
	struct sink_set *set = sinks_new(2);
	assert_non_null(set);
	set->regions[0] = (struct region){ 0x1000, 8, 0x10000, 4, sys, REGION_SYSTEM, NULL, 0, NULL };
	set->regions[1] = (struct region){ 0x1000, 8, 0x10000, 4, bins, REGION_BINS, NULL, 0, NULL };
	sinks_replace(set);
	unsigned token = sinks_enter();
	assert_int_equal(give(0x1004, 5), SINK_OK);
	sinks_count_system(0x1004, 3, NULL);
	assert_int_equal(give(0x100e, 2), SINK_OK);
	sinks_count_system(0x100e, 0, NULL);
	sinks_count_system(0x2000, 7, NULL);	/* in no region */
	sinks_leave(token);
	assert_int_equal(bins[2], 5);
	assert_int_equal(sys[2], 3);
	assert_int_equal(bins[7], 2);
	assert_int_equal(sys[7], 0);
	uint64_t sum = 0;
	for (int i = 0; i < 8; i++)
		sum += sys[i];
	assert_int_equal(sum, 3);
	expect_stats(7, 0, 0, 0);
}

/*
 * A set with a thread table: what each histogram took goes to the
 * sample's thread, at the region's segment and counter, on the same
 * path; saturated and outside samples go to no thread, system counts to
 * the thread's pc.  The threads add up to counted.
 */
static void test_threads(void **state)
{
	(void)state;
	uint32_t bins[8] = { 0 }, sys[8] = { 0 };
	bins[5] = 0xfffffffeu;		/* one more fits */
	uint32_t entries = 4;
	uint64_t npcs = 16;
	void *mem = calloc(1, profile_threads_size(entries, npcs));
	assert_non_null(mem);
	struct thread_table t = { .entries = mem, .nentries = entries, .npcs = npcs, .owner = 1 };
	t.pcs = (struct profile_pc *)((char *)mem + entries * sizeof(struct profile_thread));
	struct sink_set *set = sinks_new(2);
	assert_non_null(set);
	set->threads = &t;
	set->regions[0] = (struct region){ 0x1000, 8, 0x10000, 4, sys, REGION_SYSTEM, NULL, 3, NULL };
	set->regions[1] = (struct region){ 0x1000, 8, 0x10000, 4, bins, REGION_BINS, NULL, 3, NULL };
	sinks_replace(set);
	struct thread_ref a = THREAD_REF(100, 0), b = THREAD_REF(200, 0);
	unsigned token = sinks_enter();
	assert_int_equal(sinks_count(0x1004, 5, &a), SINK_OK);
	sinks_count_system(0x1004, 2, &a);
	assert_int_equal(sinks_count(0x1004, 1, &b), SINK_OK);
	assert_int_equal(sinks_count(0x100a, 3, &b), SINK_OK);	/* 1 taken, 2 saturated */
	assert_int_equal(sinks_count(0x9000, 4, &b), SINK_OK);	/* outside */
	sinks_leave(token);
	given = 5 + 1 + 3 + 4;
	expect_stats(7, 4, 2, 0);
	const struct profile_thread *ea = &t.entries[a.entry], *eb = &t.entries[b.entry];
	assert_true(a.entry > 0 && b.entry > 0 && a.entry != b.entry);
	assert_int_equal(ea->tid, 100);
	assert_int_equal(ea->samples, 5);
	assert_int_equal(ea->system, 2);
	assert_int_equal(eb->samples, 2);
	assert_int_equal(ea->samples + eb->samples + t.entries[0].samples, 7);
	uint64_t ka = profile_pc_key((uint32_t)a.entry, 3, 2), kb = profile_pc_key((uint32_t)b.entry, 3, 5);
	int found = 0;
	for (uint64_t k = 0; k < npcs; k++) {
		if (t.pcs[k].key == ka) {
			assert_int_equal(t.pcs[k].count, 5);
			assert_int_equal(t.pcs[k].system, 2);
			found++;
		} else if (t.pcs[k].key == kb) {
			assert_int_equal(t.pcs[k].count, 1);
			found++;
		}
	}
	assert_int_equal(found, 2);
	sinks_replace(NULL);
	free(mem);
}

/* A region whose memory is taken away: lost, and the caller told. */
static void test_fault(void **state)
{
	(void)state;
	faults_recovered();
	uint16_t *c = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(c != MAP_FAILED);
	sinks_replace(one_region(c, 0, (uint64_t)page / 2, 0x10000, 2));
	assert_int_equal(give(10, 1), SINK_OK);
	assert_int_equal(c[5], 1);
	assert_int_equal(mprotect(c, (size_t)page, PROT_READ), 0);
	assert_int_equal(give(10, 4), SINK_FAULT);
	expect_stats(1, 0, 0, 4);
	assert_int_equal(give(12, 0x10000), SINK_FAULT);
	expect_stats(1, 0, 0, 4 + 0x10000);
	assert_int_equal(c[5], 1);
	assert_int_equal(c[6], 0);
	/* A pc outside the region does not touch it: no fault. */
	assert_int_equal(give((uintptr_t)page, 3), SINK_OK);
	expect_stats(1, 3, 0, 4 + 0x10000);
	/* Unmapped altogether, and 32-bit counters (the set is made first,
	   so that no allocation can map something new where c was). */
	struct sink_set *wide = one_region(c, 0, (uint64_t)page / 4, 0x10000, 4);
	assert_int_equal(munmap(c, (size_t)page), 0);
	assert_int_equal(give(10, 5), SINK_FAULT);
	sinks_replace(wide);
	assert_int_equal(give(10, 6), SINK_FAULT);
	expect_stats(1, 3, 0, 4 + 0x10000 + 5 + 6);
}

/* No set: nothing taken, nothing counted anywhere. */
static void test_none(void **state)
{
	(void)state;
	uint16_t c[4] = { 0 };
	sinks_replace(one_region(c, 0, 4, 0x10000, 2));
	assert_int_equal(give(2, 3), SINK_OK);
	assert_int_equal(give(100, 4), SINK_OK);
	expect_stats(3, 4, 0, 0);
	sinks_replace(NULL);
	assert_false(sinks_installed());
	assert_int_equal(give(2, 5), SINK_NONE);
	assert_int_equal(give(100, 6), SINK_NONE);
	assert_int_equal(give(0, 0xffffffffu), SINK_NONE);
	assert_int_equal(c[1], 3);
	expect_stats(3, 4, 0, 0);
	assert_int_equal(atomic_load(&stats.observed), 0);
	sinks_replace(NULL);	/* none to none */
	assert_int_equal(give(2, 5), SINK_NONE);
	expect_stats(3, 4, 0, 0);
}

/* ---- replacement and readers ---------------------------------------- */

static atomic_int reader_state;	/* 1 entered, 2 told to count, 3 left */
static atomic_int replaced;
static unsigned reader_token;

static void wait_for(atomic_int *v, int value)
{
	while (atomic_load(v) != value)
		sched_yield();
}

static void *reader(void *unused)
{
	(void)unused;
	reader_token = sinks_enter();
	atomic_store(&reader_state, 1);
	wait_for(&reader_state, 2);
	sinks_count(0, 1, NULL);	/* into the old set or the new: either is whole */
	sinks_leave(reader_token);
	atomic_store(&reader_state, 3);
	return NULL;
}

static void *replacer(void *set)
{
	sinks_replace(set);
	atomic_store(&replaced, 1);
	return NULL;
}

/* sinks_replace() waits for a handler that is inside. */
static void test_replace_waits_for_reader(void **state)
{
	(void)state;
	uint16_t *old = calloc(4, sizeof *old), *new = calloc(4, sizeof *new);
	assert_non_null(old);
	assert_non_null(new);
	sinks_replace(one_region(old, 0, 4, 0x10000, 2));
	atomic_store(&reader_state, 0);
	atomic_store(&replaced, 0);
	pthread_t r, w;
	assert_int_equal(pthread_create(&r, NULL, reader, NULL), 0);
	wait_for(&reader_state, 1);
	assert_int_equal(pthread_create(&w, NULL, replacer, one_region(new, 0, 4, 0x10000, 2)), 0);
	/* However long we wait, the replacer cannot be done.  (Threads are
	   let go before anything is asserted: a failed assertion must not
	   leave a reader inside for the teardown to wait on.) */
	struct timespec ms50 = { 0, 50 * 1000 * 1000 };
	nanosleep(&ms50, NULL);
	int done_early = atomic_load(&replaced);
	atomic_store(&reader_state, 2);
	pthread_join(w, NULL);
	int reader_left_first = atomic_load(&reader_state) == 3;
	pthread_join(r, NULL);
	assert_int_equal(done_early, 0);
	assert_true(reader_left_first);
	assert_int_equal(old[0] + new[0], 1);
	given += 1;	/* the reader's */
	expect_stats(1, 0, 0, 0);
	/* Once replaced, the old buffer is the caller's: */
	uint16_t before = old[0];
	assert_int_equal(count(0, 1), SINK_OK);
	assert_int_equal(old[0], before);
	assert_int_equal(new[0], 1 + (before == 0));
	sinks_replace(NULL);
	free(old);
	free(new);
}

/*
 * sinks_after_fork(): in a child, no handler of the parent is running, so
 * a reader count it inherited must not hold up a replace there.  (The
 * runtime's pthread_atfork child handler in sampler.c calls it, in every
 * child of this test too: a parent's reader that never leaves cannot be
 * shown to hold a child's replace forever here.)
 */
static void *holder(void *unused)
{
	(void)unused;
	unsigned token = sinks_enter();
	atomic_store(&reader_state, 1);
	wait_for(&reader_state, 2);
	sinks_leave(token);
	return NULL;
}

enum { INHERITED_READER, OWN_READER };

/* In a child: with a reader of the parent's inherited (held by holder()
   when forked), or one of the child's own. */
static int fork_and_replace(int mode)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		signal(SIGALRM, SIG_DFL);
		alarm(20);
		if (mode == OWN_READER)
			(void)sinks_enter();	/* a frame the replace interrupted */
		sinks_after_fork();
		if (mode == OWN_READER)
			(void)sinks_enter();
		sinks_replace(NULL);
		_exit(sinks_installed() ? 1 : 0);
	}
	int status = -1;
	if (pid > 0 && waitpid(pid, &status, 0) != pid)
		status = -1;
	return status;
}

static void test_after_fork(void **state)
{
	(void)state;
	uint16_t c[4] = { 0 };
	sinks_replace(one_region(c, 0, 4, 0x10000, 2));
	/* A place of the calling thread's own is not waited for: the frame
	   that holds it cannot leave before the wait returns. */
	int own = fork_and_replace(OWN_READER);
	/* A child forked while a thread of the parent was counting. */
	atomic_store(&reader_state, 0);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, holder, NULL), 0);
	wait_for(&reader_state, 1);
	int inherited = fork_and_replace(INHERITED_READER);
	atomic_store(&reader_state, 2);
	pthread_join(t, NULL);

	assert_true(WIFEXITED(inherited));
	assert_int_equal(WEXITSTATUS(inherited), 0);
	assert_true(WIFEXITED(own));
	assert_int_equal(WEXITSTATUS(own), 0);
	/* The parent's own set is still there and counting. */
	assert_int_equal(give(2, 1), SINK_OK);
	assert_int_equal(c[1], 1);
}

/*
 * Handlers count in several threads while the main thread replaces the
 * set 1000 times, each time with a fresh buffer: once sinks_replace() has
 * returned, the buffer it replaced must not change any more.  One
 * counting thread a CPU, 2 to 4: with more threads than CPUs, counting
 * threads are preempted inside sinks_enter()/sinks_leave() (the case
 * sinks_replace() must wait for) already, and every extra thread only
 * makes each sched_yield() in sinks_quiesce() longer.
 */
enum { FIRE_MAX_THREADS = 4, FIRE_N = 64, FIRE_ROUNDS = 1000, FIRE_BASE = 0x10000 };

static atomic_int stop;

struct counter_thread {
	uint64_t seed;
	uint64_t taken, none, outside;
	pthread_t thread;
};

static void *counting(void *p)
{
	struct counter_thread *ct = p;
	uint64_t x = ct->seed;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		/* Mostly inside; 1 in 16 past the end. */
		uintptr_t pc = FIRE_BASE + (x >> 8) % (2 * FIRE_N + 2 * FIRE_N / 16);
		uint32_t w = 1 + (uint32_t)(x % 3);
		enum sink_result r = count(pc, w);
		if (r == SINK_NONE) {
			ct->none++;
		} else {
			ct->taken += w;
			if (pc >= FIRE_BASE + 2 * FIRE_N)
				ct->outside += w;
		}
	}
	return NULL;
}

static uint64_t sum32(const uint32_t *c, int n)
{
	uint64_t s = 0;
	for (int i = 0; i < n; i++)
		s += c[i];
	return s;
}

/* The overflow bin takes what no histogram holds, wherever it is listed. */
static void test_overflow(void **state)
{
	(void)state;
	uint16_t hist[4] = { 0 }, over = 0;
	struct sink_set *set = sinks_new(2);
	assert_non_null(set);
	set->regions[0] = (struct region){ 0, 1, 2, 2, &over, REGION_OVERFLOW, NULL, 0, NULL };
	set->regions[1] = (struct region){ 0x1000, 4, 0x10000, 2, hist, REGION_BINS, NULL, 0, NULL };
	sinks_replace(set);
	assert_int_equal(give(0x1002, 3), SINK_OK);	/* the histogram's, though listed later */
	assert_int_equal(hist[1], 3);
	assert_int_equal(give(0x0fff, 5), SINK_OK);
	assert_int_equal(give(0x1008, 7), SINK_OK);
	assert_int_equal(give(UINTPTR_MAX, 11), SINK_OK);
	assert_int_equal(over, 5 + 7 + 11);
	expect_stats(3 + 5 + 7 + 11, 0, 0, 0);
	assert_int_equal(give(0, 0x10000), SINK_OK);	/* it saturates too */
	assert_int_equal(over, 0xffff);
	expect_stats(3 + 0xffff, 0, 0x10000 + 23 - 0xffff, 0);
}

/* pcs: in order, one slot per period of weight, then no more. */
static void test_pcs(void **state)
{
	(void)state;
	uint64_t slots[8] = { 0 };
	_Atomic uint64_t next = 0;
	struct sink_set *set = sinks_new(1);
	assert_non_null(set);
	set->regions[0] = (struct region){ 0, 6, 0, 8, slots, REGION_PCS, &next, 0, NULL };
	sinks_replace(set);
	assert_int_equal(give(0x10, 1), SINK_OK);
	assert_int_equal(give(0x20, 3), SINK_OK);
	assert_int_equal(give(0x30, 4), SINK_OK);	/* 2 fit */
	assert_int_equal(give(0x40, 1), SINK_OK);	/* full */
	uint64_t want[8] = { 0x10, 0x20, 0x20, 0x20, 0x30, 0x30, 0, 0 };
	assert_memory_equal(slots, want, sizeof want);
	expect_stats(6, 0, 2 + 1, 0);
	assert_true(atomic_load(&next) >= 6);
}

struct filler {
	uint64_t pc;
	int n;
};

static void *fill(void *p)
{
	struct filler *f = p;
	for (int i = 0; i < f->n; i++)
		count(f->pc, 1);
	return NULL;
}

/* Threads racing for slots: each slot is stored once, none is lost. */
static void test_pcs_threads(void **state)
{
	(void)state;
	enum { THREADS = 4, EACH = 20000, SLOTS = 70000 };
	uint64_t *slots = calloc(SLOTS, sizeof *slots);
	_Atomic uint64_t next = 0;
	struct sink_set *set = sinks_new(1);
	assert_non_null(set);
	set->regions[0] = (struct region){ 0, SLOTS, 0, 8, slots, REGION_PCS, &next, 0, NULL };
	sinks_replace(set);
	pthread_t t[THREADS];
	struct filler f[THREADS];
	for (int i = 0; i < THREADS; i++) {
		f[i] = (struct filler){ 0x1000u * (i + 1), EACH };
		pthread_create(&t[i], NULL, fill, &f[i]);
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	uint64_t seen[THREADS] = { 0 };
	for (int i = 0; i < SLOTS; i++) {
		assert_true(slots[i] >= 0x1000 && slots[i] <= 0x1000u * THREADS && slots[i] % 0x1000 == 0);
		seen[slots[i] / 0x1000 - 1]++;
	}
	uint64_t sum = 0;
	for (int i = 0; i < THREADS; i++)
		sum += seen[i];
	assert_int_equal(sum, SLOTS);
	assert_int_equal(atomic_load(&stats.counted), SLOTS);
	assert_int_equal(atomic_load(&stats.saturated), THREADS * EACH - SLOTS);
	free(slots);
}

/* A pcs array taken away: lost, and the caller told. */
static void test_pcs_fault(void **state)
{
	(void)state;
	faults_recovered();
	uint64_t *c = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(c != MAP_FAILED);
	_Atomic uint64_t next = 0;
	struct sink_set *set = sinks_new(1);
	assert_non_null(set);
	set->regions[0] = (struct region){ 0, 16, 0, 8, c, REGION_PCS, &next, 0, NULL };
	sinks_replace(set);
	assert_int_equal(give(0x77, 1), SINK_OK);
	assert_int_equal(mprotect(c, (size_t)page, PROT_READ), 0);
	assert_int_equal(give(0x78, 3), SINK_FAULT);
	expect_stats(1, 0, 0, 3);
	assert_int_equal(c[0], 0x77);
	assert_int_equal(c[1], 0);
	sinks_replace(NULL);
	munmap(c, (size_t)page);
}

static void test_replace_under_fire(void **state)
{
	(void)state;
	struct counter_thread threads[FIRE_MAX_THREADS];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int nthreads = cpus < 2 ? 2 : cpus > FIRE_MAX_THREADS ? FIRE_MAX_THREADS : (int)cpus;
	atomic_store(&stop, 0);
	/* 32-bit counters: under load the main thread can be off the CPU
	   long enough for the counting threads to fill 16-bit ones. */
	uint32_t *current = calloc(FIRE_N, sizeof *current);
	assert_non_null(current);
	sinks_replace(one_region(current, FIRE_BASE, FIRE_N, 0x10000, 4));
	for (int i = 0; i < nthreads; i++) {
		threads[i] = (struct counter_thread){ .seed = 0x9e3779b97f4a7c15u * (i + 1) };
		assert_int_equal(pthread_create(&threads[i].thread, NULL, counting, &threads[i]), 0);
	}
	int stale_writes = 0, rounds_with_samples = 0;
	uint64_t in_buffers = 0;
	uint32_t snapshot[FIRE_N];
	/*
	 * On a loaded machine the counting threads may not run for many
	 * rounds: go on past FIRE_ROUNDS until 100 replaced buffers have had
	 * samples (or a minute has passed), rather than judge too few races.
	 */
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	int round;
	for (round = 0; round < FIRE_ROUNDS || rounds_with_samples < 100; round++) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec > 60)
			break;
		uint32_t *next = calloc(FIRE_N, sizeof *next), *old = current;
		assert_non_null(next);
		sinks_replace(one_region(next, FIRE_BASE, FIRE_N, 0x10000, 4));
		current = next;
		/* The old buffer is the caller's again: nothing may write it. */
		memcpy(snapshot, old, sizeof snapshot);
		struct timespec t0, t;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do	/* a little while, for a stray write to land */
			clock_gettime(CLOCK_MONOTONIC, &t);
		while ((t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec < 20000);
		stale_writes += memcmp(snapshot, old, sizeof snapshot) != 0;
		uint64_t s = sum32(old, FIRE_N);
		in_buffers += s;
		rounds_with_samples += s != 0;
		free(old);
	}
	atomic_store(&stop, 1);
	uint64_t taken = 0, none = 0, outside = 0;
	for (int i = 0; i < nthreads; i++) {
		pthread_join(threads[i].thread, NULL);
		taken += threads[i].taken;
		none += threads[i].none;
		outside += threads[i].outside;
	}
	sinks_replace(NULL);
	in_buffers += sum32(current, FIRE_N);
	free(current);

	assert_int_equal(stale_writes, 0);
	/* A set was installed throughout: every sample was taken... */
	assert_int_equal(none, 0);
	/* ...and went into exactly one buffer or statistic. */
	assert_int_equal(atomic_load(&stats.counted), in_buffers);
	assert_int_equal(atomic_load(&stats.outside), outside);
	assert_int_equal(atomic_load(&stats.saturated), 0);
	assert_int_equal(atomic_load(&stats.lost), 0);
	assert_int_equal(accounted(), taken);
	/* The test means something only if samples raced the replacements. */
	printf("replace under fire: %d threads; %d of %d replaced buffers had samples; %llu samples\n",
	       nthreads, rounds_with_samples, round, (unsigned long long)taken);
	assert_true(rounds_with_samples >= 100);
}

int main(void)
{
	page = sysconf(_SC_PAGESIZE);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_new, setup, teardown),
		cmocka_unit_test_setup_teardown(test_counts_by_weight, setup, teardown),
		cmocka_unit_test_setup_teardown(test_counts_follow_formula, setup, teardown),
		cmocka_unit_test_setup_teardown(test_below_every_region, setup, teardown),
		cmocka_unit_test_setup_teardown(test_saturation16, setup, teardown),
		cmocka_unit_test_setup_teardown(test_width32, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_regions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_system, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fault, setup, teardown),
		cmocka_unit_test_setup_teardown(test_overflow, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pcs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pcs_threads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pcs_fault, setup, teardown),
		cmocka_unit_test_setup_teardown(test_none, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replace_waits_for_reader, setup, teardown),
		cmocka_unit_test_setup_teardown(test_after_fork, setup, teardown),
		cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replace_under_fire, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
