/*
 * statemem.c - the runtime's state in mappings of /dev/zero (statemem.h).
 *
 * Async-signal-safe and lock-free (a handler's rescan arms threads):
 * system calls only, through syscall() so that none is a cancellation
 * point, errno kept.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sinks/statemem.h"

/* One mapping of many pages, reserved in address space only, from which
   mappings are cut in order: a process's state costs a few system
   calls, not four per table (a short process has twenty tables).
   Large enough for the timer backend's tallies (56 MiB) as well. */
#define ARENA_SIZE ((size_t)256 << 20)
static _Atomic uintptr_t arena_next, arena_end;

/* libprofil.ld puts the library's .bss after this, in a section of the
   file (initialised data makes it one). */
__attribute__((section(".data.state_anchor"), used)) static char state_anchor = 1;

/*
 * A private mapping of /dev/zero is anonymous memory to the kernel (a
 * page costs a zeroing, a fork's child gets a copy) but is listed under
 * the device's name, which a test of anonymous mappings skips.  A memfd
 * did the same at twice the cost a page (the file's page, then the
 * private copy), and a look at the seccomp mode first, as a filter may
 * kill at memfd_create: every filter lets a program open files.
 */
static void *zero_map(size_t size)
{
	/* Read access is all a private mapping needs, also to write. */
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/dev/zero", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return MAP_FAILED;
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_NORESERVE, fd, 0);
	syscall(SYS_close, fd);
	return p;
}

void *statemem_map(size_t size, int noreserve)
{
	int saved = errno;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size = (size + page - 1) & ~(page - 1);
	/* The descriptor lives only until the mapping is made; a program
	   at its limit keeps its descriptors and we take anonymous memory. */
	for (int tries = 0; size <= ARENA_SIZE / 4 && tries < 4; tries++) {
		uintptr_t next = atomic_load(&arena_next), end = atomic_load(&arena_end);
		if (next && next < end && end - next >= size) {
			if (atomic_compare_exchange_weak(&arena_next, &next, next + size)) {
				errno = saved;
				return (void *)next;
			}
			continue;
		}
		void *a = zero_map(ARENA_SIZE);
		if (a == MAP_FAILED)
			break;
		/* This allocation first, the rest for those after it; a
		   thread that made an arena at the same time keeps its own. */
		atomic_store(&arena_end, 0);
		atomic_store(&arena_next, (uintptr_t)a + size);
		atomic_store(&arena_end, (uintptr_t)a + ARENA_SIZE);
		errno = saved;
		return a;
	}
	void *p = zero_map(size);
	if (p == MAP_FAILED)
		p = mmap(NULL, size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | (noreserve ? MAP_NORESERVE : 0), -1, 0);
	errno = saved;
	return p;
}

/* The arena at load: a program that turns profiling on and off sees its
   address space as it was before the first time (the arena stays for
   the process's life), and a process that never profiles pays an open
   and a mapping, no page. */
__attribute__((constructor(101))) static void statemem_init(void)
{
	int saved = errno;
	void *a = zero_map(ARENA_SIZE);
	uintptr_t none = 0;
	if (a != MAP_FAILED
	    && !atomic_compare_exchange_strong(&arena_next, &none, (uintptr_t)a))
		munmap(a, ARENA_SIZE);	/* a statemem_map before us made one */
	else if (a != MAP_FAILED)
		atomic_store(&arena_end, (uintptr_t)a + ARENA_SIZE);
	errno = saved;
}
