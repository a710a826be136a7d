/*
 * The page reserves (reserve.h): each mapping's state says, page by page,
 * what the file system answered; the states of small mappings share pages
 * of memory (a short process has a dozen of them) and never overlap, even
 * when threads set them up at once, and freeing one leaves the others.
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
#include <unistd.h>

#include "../../src/runtime/sinks/reserve.h"

#define PAGE 4096u

static uintptr_t state_at(const struct page_reserve *r)
{
	return (uintptr_t)(const void *)r->state;
}

static int overlap(const struct page_reserve *a, const struct page_reserve *b)
{
	uintptr_t a0 = state_at(a), a1 = a0 + a->npages, b0 = state_at(b), b1 = b0 + b->npages;
	return a0 < b1 && b0 < a1;
}

/* A short process's dozen states, of mappings from one page to 4 MiB:
   none overlaps another, all start unknown, and they take two pages of
   memory at most where they took twelve. */
static void small_states_share_pages(void **unused)
{
	(void)unused;
	static const uint64_t sizes[] = { 1, PAGE, 3 * PAGE, 64 * PAGE, 300 * PAGE,
					  1024 * PAGE, 5 * PAGE, 17 * PAGE, 2 * PAGE,
					  100 * PAGE, 1000 * PAGE, 7 * PAGE };
	enum { N = sizeof sizes / sizeof sizes[0] };
	struct page_reserve r[N];
	uintptr_t pages[N];
	size_t npages = 0;
	for (size_t i = 0; i < N; i++) {
		assert_int_equal(reserve_init(&r[i], (void *)(uintptr_t)(PAGE * 1000 * (i + 1)), sizes[i]), 0);
		assert_true(r[i].shared);
		assert_int_equal(r[i].npages, (sizes[i] + PAGE - 1) / PAGE);
		for (uint64_t k = 0; k < r[i].npages; k++)
			assert_int_equal(r[i].state[k], RESERVE_UNKNOWN);
		for (size_t j = 0; j < i; j++)
			assert_false(overlap(&r[i], &r[j]));
		uintptr_t first = state_at(&r[i]) / PAGE, last = (state_at(&r[i]) + r[i].npages - 1) / PAGE;
		for (uintptr_t p = first; p <= last; p++) {
			size_t k = 0;
			while (k < npages && pages[k] != p)
				k++;
			if (k == npages && npages < N)
				pages[npages++] = p;
		}
	}
	assert_true(npages <= 2);
	for (size_t i = 0; i < N; i++)
		reserve_free(&r[i]);
}

/* A mapping of more than 4 MiB has a state of its own, and freeing it
   or a shared one leaves the others as they were. */
static void large_state_own_and_free_keeps_others(void **unused)
{
	(void)unused;
	struct page_reserve big, a, b;
	assert_int_equal(reserve_init(&a, (void *)(uintptr_t)(PAGE * 10), 8 * PAGE), 0);
	assert_int_equal(reserve_init(&big, (void *)(uintptr_t)(PAGE * 100), 2000 * (uint64_t)PAGE), 0);
	assert_int_equal(reserve_init(&b, (void *)(uintptr_t)(PAGE * 5000), 8 * PAGE), 0);
	assert_false(big.shared);
	assert_int_equal(state_at(&big) % PAGE, 0);
	assert_true(a.shared && b.shared);
	a.state[3] = RESERVE_REFUSED;
	b.state[5] = RESERVE_HAD;
	reserve_free(&big);
	assert_null(big.state);
	reserve_free(&a);
	assert_null(a.state);
	assert_int_equal(b.state[5], RESERVE_HAD);
	assert_int_equal(b.state[4], RESERVE_UNKNOWN);
	reserve_free(&b);
}

/* Asking for pages of a real mapping marks them had, one state each. */
static void pages_asked_are_had(void **unused)
{
	(void)unused;
	size_t len = 6 * PAGE;
	char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(m != MAP_FAILED);
	struct page_reserve other, r;
	assert_int_equal(reserve_init(&other, m + len, 4 * PAGE), 0);
	assert_int_equal(reserve_init(&r, m, len), 0);
	assert_true(reserve_untouched(&r, m + 2 * PAGE));
	assert_int_equal(reserve_pages(&r, m + 2 * PAGE + 100, PAGE), 0);	/* pages 2 and 3 */
	assert_false(reserve_untouched(&r, m + 2 * PAGE));
	assert_false(reserve_untouched(&r, m + 3 * PAGE));
	assert_true(reserve_untouched(&r, m + 4 * PAGE));
	assert_int_equal(reserve_untouched_end(&r, m + PAGE + 8), (uintptr_t)(m + 2 * PAGE));
	for (uint64_t k = 0; k < other.npages; k++)
		assert_int_equal(other.state[k], RESERVE_UNKNOWN);
	assert_int_equal(reserve_pages(&r, m + len - 1, 2), -1);	/* past the end */
	reserve_free(&r);
	reserve_free(&other);
	munmap(m, len);
}

enum { THREADS = 4, EACH = 300 };
static struct page_reserve made[THREADS][EACH];

static void *make_many(void *arg)
{
	struct page_reserve *mine = arg;
	for (int i = 0; i < EACH; i++)
		if (reserve_init(&mine[i], (void *)(uintptr_t)PAGE, (uint64_t)(i % 50 + 1) * PAGE) != 0)
			return (void *)1;
	return NULL;
}

static int by_state(const void *a, const void *b)
{
	uintptr_t x = state_at(*(struct page_reserve *const *)a);
	uintptr_t y = state_at(*(struct page_reserve *const *)b);
	return x < y ? -1 : x > y;
}

/* Threads that set up states at once never get overlapping ones. */
static void threads_never_share_bytes(void **unused)
{
	(void)unused;
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, make_many, made[i]), 0);
	for (int i = 0; i < THREADS; i++) {
		void *ret;
		assert_int_equal(pthread_join(t[i], &ret), 0);
		assert_null(ret);
	}
	static struct page_reserve *all[THREADS * EACH];
	for (int i = 0; i < THREADS; i++)
		for (int j = 0; j < EACH; j++)
			all[i * EACH + j] = &made[i][j];
	qsort(all, THREADS * EACH, sizeof all[0], by_state);
	for (int i = 1; i < THREADS * EACH; i++)
		assert_true(state_at(all[i - 1]) + all[i - 1]->npages <= state_at(all[i]));
	for (int i = 0; i < THREADS * EACH; i++)
		reserve_free(all[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(small_states_share_pages),
		cmocka_unit_test(large_state_own_and_free_keeps_others),
		cmocka_unit_test(pages_asked_are_had),
		cmocka_unit_test(threads_never_share_bytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
