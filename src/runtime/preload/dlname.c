/*
 * dlname.c - the name libprofil's dlopen passes to glibc's (see
 * dlname.h).  Not async-signal-safe, and never called from a signal
 * handler: only from the interposed dlopen.  It allocates nothing but
 * glibc's search path list (dlinfo needs a buffer of the size it says).
 *
 * glibc resolves a dlopen name for the object that called dlopen, the
 * "loader": its $ORIGIN, and for a name without a slash its search path
 * (DT_RPATH, LD_LIBRARY_PATH, DT_RUNPATH, the cache, the system
 * directories).  Interposed, the caller glibc sees is libprofil, so:
 *
 * - $ORIGIN and ${ORIGIN}, wherever they stand in the name as ld.so(8)
 *   recognizes them (the name not followed by a letter, digit or '_'),
 *   become the real caller's directory here;
 * - $LIB, $PLATFORM and their ${} forms are left for glibc: they expand
 *   to the same for every loader (glibc's own $PLATFORM, which on x86
 *   can be a CPU name, not the AT_PLATFORM string), and glibc, as ld.so
 *   does, expands tokens only in names with a slash;
 * - a bare name is looked up along the caller's own search path when it
 *   has one (dlinfo RTLD_DI_SERINFO, whose directories glibc has already
 *   expanded for the caller: $ORIGIN, $LIB and $PLATFORM in DT_RUNPATH
 *   and DT_RPATH entries), and passed on as found.
 *
 * In a set-user-ID program (AT_SECURE) names are passed on untouched,
 * so that glibc's restrictions on $ORIGIN hold.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "preload/dlname.h"

/* Does the object have a search path of its own (DT_RPATH, DT_RUNPATH)? */
static int has_search_path(const struct link_map *lm)
{
	for (const ElfW(Dyn) *d = lm->l_ld; d && d->d_tag != DT_NULL; d++)
		if (d->d_tag == DT_RPATH || d->d_tag == DT_RUNPATH)
			return 1;
	return 0;
}

/* The length of the token ORIGIN at s (just after a '$'), as ld.so
   reads one: "ORIGIN" or "{ORIGIN}", not followed by an identifier's
   character; 0 if there is none. */
static size_t origin_token(const char *s)
{
	int curly = *s == '{';
	const char *p = s + curly;
	if (strncmp(p, "ORIGIN", 6) != 0)
		return 0;
	p += 6;
	if (curly) {
		if (*p != '}')
			return 0;
		return 8;
	}
	if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')
	    || *p == '_')
		return 0;
	return 6;
}

/* The directory of the object lm (the program if it has no name). */
static int origin_of(const struct link_map *lm, char *dir, size_t size)
{
	if (lm->l_name && lm->l_name[0]) {
		size_t n = strlen(lm->l_name);
		if (n >= size)
			return -1;
		memcpy(dir, lm->l_name, n + 1);
	} else {
		ssize_t n = readlink("/proc/self/exe", dir, size - 1);
		if (n <= 0)
			return -1;
		dir[n] = '\0';
	}
	char *slash = strrchr(dir, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	if (slash == dir)	/* an object in / */
		strcpy(dir, "/");
	return 0;
}

/* file with every $ORIGIN replaced by dir, in out: 1 if one was, 0 if
   none was, -1 if the result does not fit. */
static int expand_origin(const char *file, const char *dir, char *out, size_t size)
{
	size_t at = 0, dlen = strlen(dir);
	int any = 0;
	for (const char *s = file; *s;) {
		size_t t = *s == '$' ? origin_token(s + 1) : 0;
		const char *piece = t ? dir : s;
		size_t n = t ? dlen : 1;
		if (at + n >= size)
			return -1;
		memcpy(out + at, piece, n);
		at += n;
		s += t ? t + 1 : 1;
		any |= t != 0;
	}
	out[at] = '\0';
	return any;
}

/* A bare name along the caller's search path, or file if not found. */
static const char *along_path(const char *file, struct link_map *lm, char *out, size_t size)
{
	Dl_serinfo head;
	if (dlinfo(lm, RTLD_DI_SERINFOSIZE, &head) != 0 || head.dls_size < sizeof head)
		return file;
	Dl_serinfo *si = malloc(head.dls_size);
	if (!si)
		return file;
	*si = head;
	const char *found = file;
	if (dlinfo(lm, RTLD_DI_SERINFO, si) == 0) {
		for (unsigned i = 0; i < si->dls_cnt && found == file; i++) {
			const char *dir = si->dls_serpath[i].dls_name;
			if (strlen(dir) + strlen(file) + 2 > size)
				continue;
			strcat(strcat(strcpy(out, dir), "/"), file);
			if (access(out, F_OK) == 0)
				found = out;
		}
	}
	free(si);
	return found;
}

const char *dlname_as_caller(const char *file, const void *caller, char *out, size_t size)
{
	Dl_info info;
	struct link_map *lm = NULL;
	if (!file || getauxval(AT_SECURE)
	    || !dladdr1(caller, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
		return file;
	if (!strchr(file, '/'))	/* no token is expanded in a bare name */
		return has_search_path(lm) ? along_path(file, lm, out, size) : file;
	if (!strchr(file, '$'))
		return file;
	char dir[PATH_MAX];
	if (origin_of(lm, dir, sizeof dir) != 0)
		return file;
	return expand_origin(file, dir, out, size) == 1 ? out : file;
}
