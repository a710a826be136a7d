/*
 * objfind.c - which file holds an object as it was profiled (see
 * bidcache.h): the first whose build ID is the run's, of --exe (the
 * main executable), --symfs DIR's DIR/PATH and DIR/.build-id/ab/cdef,
 * the path itself, and the build-ID cache.  An object without a build
 * ID (a gmon.out's program, an old file) is the first of those that
 * exists: nothing tells a copy from another build.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../format/profile.h"
#include "bidcache.h"
#include "cli.h"

static const char *exe, *symfs;

void objfind_exe(const char *path)
{
	exe = path;
}

int objfind_symfs(const char *dir)
{
	struct stat st;
	if (stat(dir, &st) != 0) {
		error_line("--symfs '%s': %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		error_line("--symfs '%s': not a directory", dir);
		return -1;
	}
	symfs = dir;
	return 0;
}

char *objfind_debuginfo;

static void set_debuginfo_path(void)
{
	if (objfind_debuginfo)
		return;
	/* libdwfl's default, then the roots where DIR/.build-id/ab/cdef.debug
	   may be: --symfs's tree and the cache. */
	char dir[PATH_MAX], buf[3 * PATH_MAX + 64];
	int n = snprintf(buf, sizeof buf, ":.debug:/usr/lib/debug");
	if (symfs && symfs[0] == '/')
		n += snprintf(buf + n, sizeof buf - (size_t)n, ":%s/usr/lib/debug:%s", symfs, symfs);
	if (bidcache_dir(dir, sizeof dir) && dir[0] == '/')
		snprintf(buf + n, sizeof buf - (size_t)n, ":%s", dir);
	objfind_debuginfo = xstrdup(buf);
}

/* Is path's file o as profiled?  1 yes, 0 another build, -1 unreadable. */
static int same(const struct object *o, const char *path)
{
	uint8_t id[64];
	if (access(path, R_OK) != 0)
		return -1;
	if (!o->build_id_len)
		return 1;
	int n = bidcache_file_id(path, id);
	if (n < 0)
		return -1;
	return n == (int)o->build_id_len && memcmp(id, o->build_id, (size_t)n) == 0;
}

const char *objfind_path(const struct object *o, char *buf, size_t len, char *why, size_t wlen)
{
	set_debuginfo_path();
	if (exe && (o->flags & PROFILE_SEG_MAIN)) {
		int s = same(o, exe);
		if (s < 0) {
			snprintf(why, wlen, "--exe %s: cannot read it: %s", exe, strerror(errno));
			return NULL;
		}
		if (!s) {
			snprintf(why, wlen, "--exe %s: not the program profiled (its build ID "
				 "differs from %s's in the run)", exe, o->path);
			return NULL;
		}
		snprintf(buf, len, "%s", exe);
		return buf;
	}
	if (symfs) {
		snprintf(buf, len, "%s%s%s", symfs, o->path[0] == '/' ? "" : "/", o->path);
		if (same(o, buf) > 0)
			return buf;
		if (o->build_id_len) {
			bidcache_entry(buf, len, symfs, o->build_id, o->build_id_len, "");
			if (same(o, buf) > 0)
				return buf;
		}
	}
	int here = same(o, o->path), err = errno;
	if (here > 0) {
		snprintf(buf, len, "%s", o->path);
		return buf;
	}
	char dir[PATH_MAX];
	const char *cache = bidcache_dir(dir, sizeof dir);
	if (o->build_id_len && cache) {
		bidcache_entry(buf, len, dir, o->build_id, o->build_id_len, "");
		if (same(o, buf) > 0) {
			bidcache_touch(buf);
			return buf;
		}
	}
	const char *and = !o->build_id_len ? "" : cache ? ", and the build-ID cache has no copy"
			  : ", and the build-ID cache is off (PROFIL_CACHE)";
	if (here < 0)
		snprintf(why, wlen, "%s: cannot read: %s (it was profiled there)%s", o->path,
			 strerror(err), and);
	else
		snprintf(why, wlen, "%s: changed since the run (its build ID differs)%s", o->path, and);
	return NULL;
}
