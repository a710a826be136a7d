/*
 * The sinks: a sample lands in the right counter of the right region,
 * or in exactly one statistic; a replaced set is never written again
 * once sinks_replace() has returned, even with handlers counting at the
 * same moment in other threads.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../../src/runtime/fault.h"
#include "../../src/runtime/sink.h"
#include "../../src/runtime/stats.h"

static enum sink_result count(uintptr_t pc, uint32_t weight)
{
	unsigned token = sinks_enter();
	enum sink_result r = sinks_count(pc, weight);
	sinks_leave(token);
	return r;
}

static uint64_t accounted(void)
{
	return atomic_load(&stats.counted) + atomic_load(&stats.outside)
	       + atomic_load(&stats.saturated) + atomic_load(&stats.lost);
}

static struct sink_set *one_region(void *base, uint64_t offset, uint64_t n,
				   uint32_t scale, uint32_t width)
{
	struct sink_set *set = sinks_new(1);
	assert_non_null(set);
	set->regions[0] = (struct region){ offset, n, scale, width, base };
	return set;
}

static void test_counts(void **state)
{
	(void)state;
	stats_reset();
	uint16_t c[16] = { 0 };
	sinks_replace(one_region(c, 0x1000, 16, 0x10000, 2));
	assert_int_equal(count(0x1000, 1), SINK_OK);
	assert_int_equal(count(0x1001, 2), SINK_OK);
	assert_int_equal(count(0x1000 + 2 * 15 + 1, 5), SINK_OK);
	assert_int_equal(c[0], 3);
	assert_int_equal(c[15], 5);
	assert_int_equal(count(0xfff, 7), SINK_OK);		/* below */
	assert_int_equal(count(0x1000 + 32, 11), SINK_OK);	/* past the end */
	assert_int_equal(atomic_load(&stats.counted), 8);
	assert_int_equal(atomic_load(&stats.outside), 18);
	assert_int_equal(accounted(), 26);
	sinks_replace(NULL);
}

static void test_saturation(void **state)
{
	(void)state;
	stats_reset();
	uint16_t c16[1] = { 65530 };
	sinks_replace(one_region(c16, 0, 1, 2, 2));
	count(100, 10);
	assert_int_equal(c16[0], 65535);
	assert_int_equal(atomic_load(&stats.counted), 5);
	assert_int_equal(atomic_load(&stats.saturated), 5);
	uint32_t c32[1] = { 65530 };
	sinks_replace(one_region(c32, 0, 1, 2, 4));
	count(100, 10);
	assert_int_equal(c32[0], 65540);
	c32[0] = 0xfffffffe;
	count(100, 3);
	assert_int_equal(c32[0], 0xffffffff);
	assert_int_equal(atomic_load(&stats.saturated), 7);
	assert_int_equal(accounted(), 23);
	sinks_replace(NULL);
}

/* The region with the highest offset that holds the pc takes it. */
static void test_regions(void **state)
{
	(void)state;
	stats_reset();
	uint16_t low[64] = { 0 }, high[4] = { 0 };
	struct sink_set *set = sinks_new(2);
	set->regions[0] = (struct region){ 0x2000, 4, 0x10000, 2, high };
	set->regions[1] = (struct region){ 0x1000, 64, 2, 2, low };
	sinks_replace(set);
	count(0x2002, 1);	/* both hold it: the higher one wins */
	count(0x2010, 1);	/* past high's counters: low holds it */
	count(0x1000, 1);
	assert_int_equal(high[1], 1);
	assert_int_equal(low[0], 2);
	assert_int_equal(atomic_load(&stats.counted), 3);
	sinks_replace(NULL);
}

static void test_fault_and_none(void **state)
{
	(void)state;
	stats_reset();
	fault_install();
	uint16_t *c = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	sinks_replace(one_region(c, 0, 2048, 0x10000, 2));
	assert_int_equal(count(10, 1), SINK_OK);
	mprotect(c, 4096, PROT_READ);
	assert_int_equal(count(10, 4), SINK_FAULT);
	assert_int_equal(atomic_load(&stats.lost), 4);
	assert_int_equal(c[5], 1);
	sinks_replace(NULL);
	assert_int_equal(count(10, 4), SINK_NONE);
	assert_int_equal(accounted(), 5);
	munmap(c, 4096);
}

/* Handlers count in four threads while the main thread replaces sets. */
static atomic_int stop;

static void *counting(void *unused)
{
	(void)unused;
	while (!atomic_load(&stop))
		count(0x1000 + 2 * (rand() % 64), 1);
	return NULL;
}

static void test_replace_under_fire(void **state)
{
	(void)state;
	enum { N = 64, ROUNDS = 1000 };
	uint16_t *buffers[2];
	for (int i = 0; i < 2; i++)
		buffers[i] = calloc(N, sizeof(uint16_t));
	uint16_t snapshot[N];
	pthread_t t[4];
	atomic_store(&stop, 0);
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, counting, NULL);
	int stale_writes = 0;
	for (int round = 0; round < ROUNDS; round++) {
		uint16_t *next = buffers[round % 2], *old = buffers[(round + 1) % 2];
		memset(next, 0, N * sizeof *next);
		sinks_replace(one_region(next, 0x1000, N, 0x10000, 2));
		/* The old buffer is ours again: nothing may write it now. */
		memcpy(snapshot, old, sizeof snapshot);
		for (volatile int spin = 0; spin < 2000; spin++)
			;
		stale_writes += memcmp(snapshot, old, sizeof snapshot) != 0;
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	sinks_replace(NULL);
	assert_int_equal(stale_writes, 0);
	for (int i = 0; i < 2; i++)
		free(buffers[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_saturation),
		cmocka_unit_test(test_regions),
		cmocka_unit_test(test_fault_and_none),
		cmocka_unit_test(test_replace_under_fire),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
