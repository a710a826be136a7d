/*
 * reserve.c - asking the file system for a page before writing it
 * (reserve.h).
 *
 * reserve_pages() runs in signal handlers: it is async-signal-safe and
 * lock-free (an atomic state per page; madvise is a plain system call).
 * Two threads may ask for the same page at once: both get the same
 * answer from the kernel, and the state is only ever set from unknown.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sinks/sigown.h"
#include "sinks/reserve.h"
#include "sinks/statemem.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23	/* Linux 5.14 */
#endif

#define PAGE 4096u

/* The kernel does not know MADV_POPULATE_WRITE: ask nothing more. */
static atomic_int unsupported;

static int ask(uintptr_t page)
{
	if (!sigown_syscalls_ok())	/* seccomp's strict mode: madvise kills */
		return RESERVE_UNKNOWN;
	for (int tries = 0; tries < 3; tries++) {
		long r = syscall(SYS_madvise, (void *)page, PAGE, MADV_POPULATE_WRITE);
		if (r == 0)
			return RESERVE_HAD;
		if (errno == EINVAL || errno == ENOSYS) {
			atomic_store_explicit(&unsupported, 1, memory_order_relaxed);
			return RESERVE_HAD;
		}
		if (errno != EINTR && errno != EAGAIN)
			return RESERVE_REFUSED;	/* EFAULT: a write would SIGBUS */
	}
	return RESERVE_UNKNOWN;	/* ask again at the next sample */
}

int reserve_pages(const struct page_reserve *r, const void *p, size_t len)
{
	if (!r || !r->state || !len)
		return 0;
	uintptr_t a = (uintptr_t)p;
	if (a < r->base)
		return -1;
	uint64_t first = (a - r->base) / PAGE, last = (a + len - 1 - r->base) / PAGE;
	if (last >= r->npages)
		return -1;
	for (uint64_t i = first; i <= last; i++) {
		uint8_t s = atomic_load_explicit(&r->state[i], memory_order_acquire);
		if (s == RESERVE_HAD)
			continue;
		if (s == RESERVE_REFUSED)
			return -1;
		if (atomic_load_explicit(&unsupported, memory_order_relaxed))
			return 0;
		int saved = errno;
		s = (uint8_t)ask(r->base + i * PAGE);
		errno = saved;
		if (s == RESERVE_UNKNOWN)
			return -1;
		uint8_t expected = RESERVE_UNKNOWN;
		atomic_compare_exchange_strong(&r->state[i], &expected, s);
		if (s == RESERVE_REFUSED)
			return -1;
	}
	return 0;
}

int reserve_untouched(const struct page_reserve *r, const void *p)
{
	uintptr_t a = (uintptr_t)p;
	if (!r || !r->state || a < r->base || (a - r->base) / PAGE >= r->npages
	    || atomic_load_explicit(&unsupported, memory_order_relaxed))
		return 0;
	return atomic_load_explicit(&r->state[(a - r->base) / PAGE], memory_order_acquire)
	       == RESERVE_UNKNOWN;
}

uintptr_t reserve_untouched_end(const struct page_reserve *r, const void *p)
{
	if (!reserve_untouched(r, p))
		return 0;
	return ((uintptr_t)p - r->base) / PAGE * PAGE + PAGE + r->base;
}

/*
 * The states of mappings up to 4 MiB share pages, cut in order from one
 * and never given back: a short process sets up a dozen of them (its
 * profile's table, and a segment and its system companion for each
 * object), and each page of state costs it a fault and a page of
 * memory.  Larger ones get pages of their own.
 */
#define SHARED_MAX 1024u
static _Atomic uintptr_t shared_next;	/* in the page being cut; none at
					   0 or at a page's end */

static void *shared_state(size_t n)
{
	n = (n + 15) & ~(size_t)15;
	for (;;) {
		uintptr_t next = atomic_load(&shared_next);
		uintptr_t room = next % PAGE ? PAGE - next % PAGE : 0;
		if (room >= n) {
			if (atomic_compare_exchange_weak(&shared_next, &next, next + n))
				return (void *)next;
			continue;
		}
		void *p = statemem_map(PAGE, 1);
		if (p == MAP_FAILED)
			return NULL;
		/* A thread that cut a new page meanwhile keeps its page
		   for those after it; this one is ours either way. */
		atomic_compare_exchange_strong(&shared_next, &next, (uintptr_t)p + n);
		return p;
	}
}

int reserve_init(struct page_reserve *r, void *base, uint64_t size)
{
	r->base = (uintptr_t)base;
	r->npages = (size + PAGE - 1) / PAGE;
	size_t n = r->npages ? r->npages : 1;
	r->shared = n <= SHARED_MAX;
	void *p = r->shared ? shared_state(n) : statemem_map(n, 1);
	r->state = p == MAP_FAILED ? NULL : p;
	return r->state ? 0 : -1;
}

void reserve_free(struct page_reserve *r)
{
	if (r->state && !r->shared)
		munmap((void *)r->state, r->npages ? r->npages : 1);
	r->state = NULL;
	r->npages = 0;
}
