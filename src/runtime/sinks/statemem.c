/*
 * statemem.c - the runtime's state in memfd mappings (statemem.h).
 *
 * Async-signal-safe and lock-free (a handler's rescan arms threads):
 * system calls only, through syscall() so that none is a cancellation
 * point, errno kept.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <string.h>
#include <unistd.h>

#include "sinks/statemem.h"

#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC 1u
#endif

/* One memfd of many pages, reserved in address space only, from which
   mappings are cut in order: a process's state costs a few system
   calls, not four per table (a short process has twenty tables).
   Large enough for the timer backend's tallies (56 MiB) as well: one
   memfd a process, and one look at /proc/self/status, not two. */
#define ARENA_SIZE ((size_t)256 << 20)
static _Atomic uintptr_t arena_next, arena_end;

/* Under a seccomp filter memfd_create may kill the process (a filter
   cannot be read back): anonymous memory there.  Asked each time, as a
   program may install one at any time; only a new arena asks. */
static int seccomp_on(void)
{
	char buf[4096];
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 1;
	ssize_t n = syscall(SYS_read, fd, buf, sizeof buf - 1);
	syscall(SYS_close, fd);
	if (n <= 0)
		return 1;
	buf[n] = '\0';
	const char *at = strstr(buf, "\nSeccomp:");
	if (!at)
		return 0;	/* a kernel without seccomp */
	at += strlen("\nSeccomp:");
	while (*at == ' ' || *at == '\t')
		at++;
	return *at != '0';
}

static void *memfd_map(size_t size)
{
	if (seccomp_on())
		return MAP_FAILED;
	/* A memfd longer than RLIMIT_FSIZE is refused with SIGXFSZ, which
	   would kill the program: within it, or anonymous memory. */
	struct rlimit fsize;
	if (syscall(SYS_prlimit64, 0, RLIMIT_FSIZE, NULL, &fsize) != 0
	    || (fsize.rlim_cur != RLIM_INFINITY && size > fsize.rlim_cur))
		return MAP_FAILED;
	int fd = (int)syscall(SYS_memfd_create, "profil", MFD_CLOEXEC);
	if (fd < 0)
		return MAP_FAILED;
	void *p = MAP_FAILED;
	if (syscall(SYS_ftruncate, fd, (off_t)size) == 0)
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_NORESERVE, fd, 0);
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
		void *a = memfd_map(ARENA_SIZE);
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
	void *p = memfd_map(size);
	if (p == MAP_FAILED)
		p = mmap(NULL, size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | (noreserve ? MAP_NORESERVE : 0), -1, 0);
	errno = saved;
	return p;
}

static int zero_page(const char *p, size_t len)
{
	const uint64_t *w = (const uint64_t *)(const void *)p;
	for (size_t i = 0; i < len / sizeof *w; i++)
		if (w[i])
			return 0;
	return 1;
}

/* Which of the n pages at p have been touched (have a page of memory):
   one mincore for them all, at most 64.  All when the kernel cannot say. */
static void touched(const char *p, size_t page, size_t n, unsigned char *in)
{
	if (syscall(SYS_mincore, p, n * page, in) != 0)
		memset(in, 1, n);
}

/*
 * The library's own zero-initialised statics (.bss) past the last page
 * of its file are anonymous memory too: moved into a memfd at load,
 * before any of our constructors has written them.  Only in the shared
 * library: linked into a program, .bss is the program's.
 */
static int own_bss(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	uintptr_t here = (uintptr_t)(void *)own_bss;
	int ours = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && here - (info->dlpi_addr + ph->p_vaddr) < ph->p_memsz)
			ours = 1;
	}
	if (!ours)
		return 0;
	if (!info->dlpi_name || !*info->dlpi_name)
		return 1;	/* the program itself */
	long page = sysconf(_SC_PAGESIZE);
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W) || ph->p_memsz <= ph->p_filesz)
			continue;
		uintptr_t at = info->dlpi_addr + ph->p_vaddr;
		uintptr_t lo = (at + ph->p_filesz + page - 1) & ~(uintptr_t)(page - 1);
		uintptr_t hi = (at + ph->p_memsz + page - 1) & ~(uintptr_t)(page - 1);
		if (hi <= lo)
			continue;
		size_t len = hi - lo;
		void *copy = statemem_map(len, 0);
		if (copy == MAP_FAILED)
			continue;
		/* Only the pages that hold something: a page of the copy
		   written costs the memfd a page and the private mapping
		   another, 0.2 ms a process for 21 pages that are all zero
		   at load.  A page never touched is zero without a look
		   (mincore): a look costs a fault for the shared zero page. */
		for (size_t off = 0; off < len; off += 64 * (size_t)page) {
			unsigned char in[64];
			size_t n = (len - off) / (size_t)page < 64 ? (len - off) / (size_t)page : 64;
			touched((const char *)lo + off, (size_t)page, n, in);
			for (size_t k = 0; k < n; k++) {
				const char *from = (const char *)lo + off + k * (size_t)page;
				if ((in[k] & 1) && !zero_page(from, (size_t)page))
					memcpy((char *)copy + off + k * (size_t)page, from,
					       (size_t)page);
			}
		}
		/* One call puts the copy in place of the original. */
		if (mremap(copy, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)lo) == MAP_FAILED)
			munmap(copy, len);
	}
	return 1;
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STATEMEM_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define STATEMEM_ASAN 1
#endif

__attribute__((constructor(101))) static void statemem_init(void)
{
#ifdef STATEMEM_ASAN
	/* ASan poisons the red zones between globals: copying .bss whole
	   would be reported as an overflow.  A sanitizer build is a test
	   build: its .bss stays where the loader put it. */
	return;
#endif
	int saved = errno;
	dl_iterate_phdr(own_bss, NULL);
	errno = saved;
}
