/*
 * profile_guard.c - a reader never dies of a profile file that shrinks
 * while its pages are mapped.
 *
 * profile.c maps large extents of a file's data instead of copying them.
 * A page of a mapping past the end of its file raises SIGBUS when
 * touched; a file may be cut short by another process (a user, a tool)
 * while a report reads it.  The handler here turns such a page into a
 * page of zeros and lets the access go on: a mapped file that shrinks
 * reads as zeros from there, as a copied one does (profile.c read_at).
 * A SIGBUS anywhere else gets the action there was before.
 *
 * on_sigbus runs in a signal handler: it is async-signal-safe (it reads
 * the table of ranges, calls mmap and sigaction, nothing else).  The
 * table is changed only by the thread that reads the files, never while
 * that thread touches a page it guards.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "profile_guard.h"

#define RANGES 64	/* files mapped at once */

static volatile struct {
	uintptr_t at, end;	/* end 0: a free slot */
} ranges[RANGES];
static struct sigaction before;
static volatile sig_atomic_t installed;
static uintptr_t page_size;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	uintptr_t a = (uintptr_t)si->si_addr;
	for (int i = 0; si->si_code == BUS_ADRERR && i < RANGES; i++)
		if (a >= ranges[i].at && a < ranges[i].end) {
			void *pg = (void *)(a & ~(page_size - 1));
			if (mmap(pg, page_size, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED)
				return;	/* the access again, on zeros */
			break;
		}
	/* Not ours: as if there were no guard (the fault comes again). */
	sigaction(SIGBUS, &before, NULL);
	installed = 0;
}

int profile_guard_add(const void *at, size_t len)
{
	if (!installed) {
		long ps = sysconf(_SC_PAGESIZE);
		page_size = ps > 0 ? (uintptr_t)ps : 4096;
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = on_sigbus;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGBUS, &sa, &before) != 0)
			return -1;
		installed = 1;
	}
	for (int i = 0; i < RANGES; i++)
		if (!ranges[i].end) {
			ranges[i].at = (uintptr_t)at;
			ranges[i].end = (uintptr_t)at + len;
			return 0;
		}
	return -1;
}

void profile_guard_remove(const void *at)
{
	for (int i = 0; i < RANGES; i++)
		if (ranges[i].end && ranges[i].at == (uintptr_t)at) {
			ranges[i].end = 0;
			ranges[i].at = 0;
		}
}
