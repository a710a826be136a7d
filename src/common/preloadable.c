/*
 * preloadable.c - will the loader preload libprofil (preloadable.h)?
 *
 * Async-signal-safe: system calls on the caller's buffers only.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "preloadable.h"

#if __SIZEOF_POINTER__ == 8
#define OUR_CLASS ELFCLASS64
#else
#define OUR_CLASS ELFCLASS32
#endif

/* Has the ELF file fd of our class a PT_INTERP?  1, 0, or -1 (unreadable). */
static int has_interp(int fd)
{
#if __SIZEOF_POINTER__ == 8
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
#else
	Elf32_Ehdr eh;
	Elf32_Phdr ph;
#endif
	if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || eh.e_phentsize < sizeof ph)
		return -1;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (off_t)i * eh.e_phentsize))
		    != (ssize_t)sizeof ph)
			return -1;
		if (ph.p_type == PT_INTERP)
			return 1;
	}
	return 0;
}

static enum preloadable check(const char *path, char *interp, size_t size, int depth)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return PRELOADABLE;
	struct stat st;
	unsigned char head[256];
	ssize_t got = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? pread(fd, head, sizeof head - 1, 0)
								     : -1;
	enum preloadable r = PRELOADABLE;
	if (got <= 0) {
		r = PRELOADABLE;
	} else if (((st.st_mode & S_ISUID) && st.st_uid != geteuid())
		   || ((st.st_mode & S_ISGID) && st.st_gid != getegid())) {
		r = NOT_SETID;
	} else if (got > EI_CLASS && memcmp(head, ELFMAG, SELFMAG) == 0) {
		if (head[EI_CLASS] != OUR_CLASS)
			r = NOT_OUR_CLASS;
		else if (has_interp(fd) == 0)
			r = NOT_DYNAMIC;
	} else if (got > 2 && head[0] == '#' && head[1] == '!' && depth < 4 && size) {
		/* The interpreter is what runs: "#! /bin/sh -e" is /bin/sh. */
		head[got] = '\0';
		char *p = (char *)head + 2;
		p += strspn(p, " \t");
		size_t len = strcspn(p, " \t\n");
		if (len && len < size) {
			char name[sizeof head];
			memcpy(name, p, len);
			name[len] = '\0';
			r = check(name, interp, size, depth + 1);
			if (r != PRELOADABLE && !interp[0])
				memcpy(interp, name, len + 1);	/* the one that fails */
		}
	}
	close(fd);
	return r;
}

enum preloadable preloadable(const char *path, char *interp, size_t size)
{
	if (size)
		interp[0] = '\0';
	return check(path, interp, size, 0);
}

const char *preloadable_why(enum preloadable p)
{
	switch (p) {
	case NOT_DYNAMIC:
		return "statically linked (no dynamic loader to preload libprofil)";
	case NOT_OUR_CLASS:
		return __SIZEOF_POINTER__ == 8 ? "a 32-bit program (libprofil is 64-bit)"
					       : "a 64-bit program (libprofil is 32-bit)";
	case NOT_SETID:
		return "set-user-ID or set-group-ID (the loader ignores LD_PRELOAD there)";
	default:
		return "profiled";
	}
}
