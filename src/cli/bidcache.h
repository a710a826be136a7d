/*
 * bidcache.h - the build-ID cache (SPEC 6b): when profil run ends, each
 * object it sampled, and its separate debug file if it has one, is kept
 * under the cache directory by build ID, as /usr/lib/debug and perf's
 * ~/.debug lay them out:
 *
 *     DIR/.build-id/ab/cdef...        the object
 *     DIR/.build-id/ab/cdef....debug  its separate debug file
 *     DIR/.build-id/ab/cdef....path   the path it was profiled at (a line)
 *
 * so that libdwfl finds the debug file there by itself.  report, export
 * and the HTML page open the copy when the object on disk is missing or
 * has another build ID (objfind.c).  The cache stays under its size
 * (PROFIL_CACHE_SIZE), least recently used entries going first.
 */
#ifndef PROFIL_CLI_BIDCACHE_H
#define PROFIL_CLI_BIDCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* The size the cache is trimmed to after a run, unless PROFIL_CACHE_SIZE. */
#define BIDCACHE_DEFAULT_SIZE (2ull << 30)

/*
 * The cache's directory into buf: PROFIL_CACHE if set (off, no, 0 or
 * empty: no cache), else $XDG_CACHE_HOME/profil, else ~/.cache/profil.
 * NULL if there is no cache.
 */
const char *bidcache_dir(char *buf, size_t len);

/* The cache's size limit: PROFIL_CACHE_SIZE (a size, bidcache_size),
   else the default.  A bad value is said once, and the default used. */
uint64_t bidcache_limit(void);

/* "500M", "2G", "64k", "1048576": bytes into *out.  0, or -1 if not a size. */
int bidcache_size(const char *text, uint64_t *out);

/* An entry's file: DIR/.build-id/ab/cdef...SUFFIX ("" the object). */
void bidcache_entry(char *buf, size_t len, const char *dir, const uint8_t *id, unsigned idlen,
		    const char *suffix);

/* The build ID of the ELF file at path into id (64 bytes): its length,
   0 if it has none, -1 if it is not an ELF file that can be read. */
int bidcache_file_id(const char *path, uint8_t *id);

/*
 * After profil run: keep every object the run directory's profiles
 * sampled.  Silent when all goes well; one line for each object not
 * kept (too big, file system nearly full, changed during the run) and
 * for what trimming removed.
 */
void bidcache_keep_run(const char *rundir);

/* The entries, least recently used first, and their sizes. */
struct bidcache_entry {
	char base[32 + 2 * 64];	/* ab/cdef... under .build-id */
	char path[4096];	/* where it was profiled, or "" */
	uint64_t size;		/* the object's, its debug file's and note's */
	int64_t used;		/* the object's mtime: when last kept or read */
};
struct bidcache_entry *bidcache_list(const char *dir, size_t *n, uint64_t *total);

/* Remove the least recently used entries until the cache holds at
   most limit bytes; the number removed, their bytes in *freed. */
size_t bidcache_trim(const char *dir, uint64_t limit, uint64_t *freed);

/* Mark an entry used now (its object's mtime). */
void bidcache_touch(const char *path);

/*
 * Where report, export and the HTML page find objects (objfind.c):
 * --exe for the main executable of profil run's profiles, --symfs DIR
 * (DIR/PATH or DIR/.build-id/...), the path, then the cache.  The file
 * whose build ID is o's, into buf; NULL with a reason in why if none.
 */
void objfind_exe(const char *exe);
/* 0, or -1 after one line if dir is not a directory. */
int objfind_symfs(const char *dir);
const char *objfind_path(const struct object *o, char *buf, size_t len, char *why, size_t wlen);

/* libdwfl's debuginfo_path: its default, the cache and --symfs added;
   NULL (the default) until the first objfind_path. */
extern char *objfind_debuginfo;

#endif
