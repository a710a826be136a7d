/*
 * run_elf.c - can profil run profile this program at all?  Said before
 * it runs, from the file: the loader preloads libprofil only into a
 * dynamically linked program of libprofil's own class, and not into a
 * set-ID one (AT_SECURE).  A script is judged by its interpreter.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run_elf.h"

#if __SIZEOF_POINTER__ == 8
#define OUR_CLASS ELFCLASS64
#define OUR_BITS 64
#else
#define OUR_CLASS ELFCLASS32
#define OUR_BITS 32
#endif

/* Has the ELF file fd a PT_INTERP?  1, 0, or -1 (unreadable). */
static int has_interp(int fd, const unsigned char *head, size_t got)
{
	if (head[EI_CLASS] == ELFCLASS64) {
		Elf64_Ehdr eh;
		if (got < sizeof eh)
			return -1;
		memcpy(&eh, head, sizeof eh);
		if (eh.e_phentsize < sizeof(Elf64_Phdr))
			return -1;
		for (unsigned i = 0; i < eh.e_phnum; i++) {
			Elf64_Phdr ph;
			if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (Elf64_Off)i * eh.e_phentsize))
			    != (ssize_t)sizeof ph)
				return -1;
			if (ph.p_type == PT_INTERP)
				return 1;
		}
		return 0;
	}
	Elf32_Ehdr eh;
	if (got < sizeof eh)
		return -1;
	memcpy(&eh, head, sizeof eh);
	if (eh.e_phentsize < sizeof(Elf32_Phdr))
		return -1;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf32_Phdr ph;
		if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (Elf32_Off)i * eh.e_phentsize))
		    != (ssize_t)sizeof ph)
			return -1;
		if (ph.p_type == PT_INTERP)
			return 1;
	}
	return 0;
}

static int check(const char *path, char *why, size_t size, int depth)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;	/* exec says why, if it fails */
	struct stat st;
	unsigned char head[512];
	ssize_t got = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? pread(fd, head, sizeof head - 1, 0)
								     : -1;
	int r = 0;
	if (got <= 0) {
		r = 0;
	} else if (((st.st_mode & S_ISUID) && st.st_uid != geteuid())
		   || ((st.st_mode & S_ISGID) && st.st_gid != getegid())) {
		snprintf(why, size, "set-user-ID or set-group-ID (the loader ignores LD_PRELOAD "
			 "there)");
		r = -1;
	} else if (got >= SELFMAG && memcmp(head, ELFMAG, SELFMAG) == 0 && got > EI_CLASS) {
		if (head[EI_CLASS] != OUR_CLASS) {
			snprintf(why, size, "a %d-bit program (libprofil is %d-bit)",
				 head[EI_CLASS] == ELFCLASS32 ? 32 : 64, OUR_BITS);
			r = -1;
		} else if (has_interp(fd, head, (size_t)got) == 0) {
			snprintf(why, size, "statically linked (no dynamic loader to preload "
				 "libprofil)");
			r = -1;
		}
	} else if (got > 2 && head[0] == '#' && head[1] == '!' && depth < 4) {
		/* The interpreter is what runs: "#! /bin/sh -e" is /bin/sh. */
		head[got] = '\0';
		char *p = (char *)head + 2;
		p += strspn(p, " \t");
		p[strcspn(p, " \t\n")] = '\0';
		if (*p) {
			char inner[256];
			if (check(p, inner, sizeof inner, depth + 1) != 0) {
				snprintf(why, size, "a script run by %s: %s", p, inner);
				r = -1;
			}
		}
	}
	close(fd);
	return r;
}

int program_profilable(const char *path, char *why, size_t size)
{
	return check(path, why, size, 0);
}
