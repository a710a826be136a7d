/*
 * reserve.h - pages of a file mapping made sure of before they are
 * written.
 *
 * Counters that live in a file mapped shared (profil run's profile) get
 * their pages one by one, as samples first reach them.  On a full file
 * system or past a quota, the first write to a page the file system
 * cannot give is a SIGBUS; a program that installed its own SIGBUS
 * handler (zstd does) would then get our fault.  So a page is asked for
 * with MADV_POPULATE_WRITE first, which fails with an error where the
 * write would have faulted, and a page refused once is never written.
 */
#ifndef PROFIL_RESERVE_H
#define PROFIL_RESERVE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct page_reserve {
	uintptr_t base;			/* the mapping, page-aligned */
	uint64_t npages;
	_Atomic uint8_t *state;		/* per page: RESERVE_UNKNOWN ... */
	int shared;			/* state on a page with others' */
};

enum { RESERVE_UNKNOWN, RESERVE_HAD, RESERVE_REFUSED };

/*
 * Make sure the pages of [p, p+len) can be written without a fault:
 * 0 if they can (or r is NULL, or the kernel cannot tell: then a fault
 * is left to fault.c, as before), -1 if one was refused.  Async-signal-
 * safe and lock-free (atomics and one system call per page, the first
 * time); errno is kept.
 */
int reserve_pages(const struct page_reserve *r, const void *p, size_t len);

/* True if the page of p was never asked for, so never written: it
   reads as zeros (and a read of it, on tmpfs, would take a page too). */
int reserve_untouched(const struct page_reserve *r, const void *p);

/* Where the untouched page of p ends (the next thing that may have been
   written), or 0 if reserve_untouched(r, p) is false: so that a scan of
   a table skips a page of it at once. */
uintptr_t reserve_untouched_end(const struct page_reserve *r, const void *p);

/* Set r up over the mapping [base, base+size), its state zeroed (for a
   mapping up to 4 MiB, on a page shared with other reserves' states);
   -1 without memory.  Not in a signal handler. */
int reserve_init(struct page_reserve *r, void *base, uint64_t size);
void reserve_free(struct page_reserve *r);

#endif
