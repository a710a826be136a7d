/*
 * bidcache.c - keeping the objects a run sampled by build ID, and
 * trimming the cache (see bidcache.h).
 *
 * Objects are copied, not hard-linked: a hard link shares the inode,
 * and `cp new prog` (or a linker that truncates its output) rewrites
 * that inode in place, the kept copy with it.  A copy goes through a
 * temporary name and rename(2), so that a run killed half-way, or two
 * runs keeping the same object, never leave a partial entry.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "../format/profile.h"
#include "bidcache.h"
#include "cli.h"
#include "run_dir.h"

static int off(const char *v)
{
	return !*v || strcmp(v, "0") == 0 || strcmp(v, "off") == 0 || strcmp(v, "no") == 0;
}

const char *bidcache_dir(char *buf, size_t len)
{
	const char *v = getenv("PROFIL_CACHE");
	if (v) {
		if (off(v))
			return NULL;
		snprintf(buf, len, "%s", v);
		return buf;
	}
	/* The XDG base directory spec: a relative XDG_CACHE_HOME is ignored. */
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	if (xdg && xdg[0] == '/')
		snprintf(buf, len, "%s/profil", xdg);
	else if (home && home[0] == '/')
		snprintf(buf, len, "%s/.cache/profil", home);
	else
		return NULL;
	return buf;
}

int bidcache_size(const char *text, uint64_t *out)
{
	char *end;
	errno = 0;
	if (*text < '0' || *text > '9')
		return -1;
	double v = strtod(text, &end);
	if (errno || end == text)
		return -1;
	double unit = 1;
	switch (*end) {
	case 'k': case 'K': unit = 1024.0; end++; break;
	case 'm': case 'M': unit = 1024.0 * 1024; end++; break;
	case 'g': case 'G': unit = 1024.0 * 1024 * 1024; end++; break;
	case 't': case 'T': unit = 1024.0 * 1024 * 1024 * 1024; end++; break;
	}
	if (*end == 'i' && unit > 1)
		end++;
	if ((*end == 'B' || *end == 'b') && end[1] == '\0')
		end++;
	if (*end || !(v * unit < 1.8e19))
		return -1;
	*out = (uint64_t)(v * unit);
	return 0;
}

uint64_t bidcache_limit(void)
{
	static int said;
	const char *v = getenv("PROFIL_CACHE_SIZE");
	uint64_t n;
	if (!v)
		return BIDCACHE_DEFAULT_SIZE;
	if (bidcache_size(v, &n) == 0)
		return n;
	if (!said++)
		error_line("PROFIL_CACHE_SIZE='%s': not a size (such as 500M or 2G): 2G used", v);
	return BIDCACHE_DEFAULT_SIZE;
}

void bidcache_entry(char *buf, size_t len, const char *dir, const uint8_t *id, unsigned idlen,
		    const char *suffix)
{
	char hex[2 * 64 + 1];
	for (unsigned i = 0; i < idlen && i < 64; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	hex[2 * (idlen < 64 ? idlen : 64)] = '\0';
	snprintf(buf, len, "%s/.build-id/%.2s/%s%s", dir, hex, idlen ? hex + 2 : "", suffix);
}

int bidcache_file_id(const char *path, uint8_t *id)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	int n = -1;
	if (elf && elf_kind(elf) == ELF_K_ELF) {
		const void *bits;
		ssize_t len = dwelf_elf_gnu_build_id(elf, &bits);
		n = 0;
		if (len > 0 && len <= 64) {
			memcpy(id, bits, (size_t)len);
			n = (int)len;
		}
	}
	elf_end(elf);
	close(fd);
	return n;
}

void bidcache_touch(const char *path)
{
	utimensat(AT_FDCWD, path, NULL, 0);	/* a read-only cache stays as it is */
}

/* mkdir -p of path's directory. */
static int make_parents(const char *path)
{
	char d[PATH_MAX];
	snprintf(d, sizeof d, "%s", path);
	for (char *p = d + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(d, 0755) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return 0;
}

/* Would size more bytes leave the file system of dir less free than
   the smaller of a tenth of it and 1 GiB?  Then the cache must not take them. */
static int too_full(const char *dir, uint64_t size, uint64_t *left)
{
	struct statvfs v;
	if (statvfs(dir, &v) != 0)
		return 0;
	uint64_t avail = (uint64_t)v.f_bavail * v.f_frsize;
	uint64_t whole = (uint64_t)v.f_blocks * v.f_frsize;
	uint64_t keep = whole / 10 < (1ull << 30) ? whole / 10 : 1ull << 30;
	*left = avail;
	return avail < size || avail - size < keep;
}

static int copy_to(const char *from, const char *to)
{
	char tmp[PATH_MAX + 32];
	snprintf(tmp, sizeof tmp, "%s.%d.tmp", to, (int)getpid());
	int in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -1;
	int out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0) {
		close(in);
		return -1;
	}
	int ok = 1;
	char buf[1 << 16];
	for (;;) {
		ssize_t n = copy_file_range(in, NULL, out, NULL, 1 << 30, 0);
		if (n == 0)
			break;
		if (n > 0)
			continue;
		if (errno != EXDEV && errno != ENOSYS && errno != EINVAL && errno != EOPNOTSUPP) {
			ok = 0;
			break;
		}
		/* An old kernel, or file systems it does not copy between. */
		while (ok && (n = read(in, buf, sizeof buf)) != 0) {
			if (n < 0) {
				ok = errno == EINTR;
				continue;
			}
			for (ssize_t at = 0; ok && at < n;) {
				ssize_t w = write(out, buf + at, (size_t)(n - at));
				if (w < 0 && errno != EINTR)
					ok = 0;
				at += w > 0 ? w : 0;
			}
		}
		break;
	}
	int err = errno;
	close(in);
	if (close(out) != 0)
		ok = 0;
	if (ok && rename(tmp, to) == 0)
		return 0;
	err = ok ? errno : err;
	unlink(tmp);
	errno = err;
	return -1;
}

struct keeping {
	const char *dir;
	uint64_t limit;
	unsigned kept;
	uint64_t bytes;
	struct seen {
		uint8_t id[64];
		uint32_t len;
	} *seen;		/* the objects of this run tried already */
	size_t nseen;
};

/* Has this run tried the object already?  Noted if not. */
static int tried(struct keeping *k, const struct profile_segment *o)
{
	for (size_t i = 0; i < k->nseen; i++)
		if (k->seen[i].len == o->build_id_len
		    && memcmp(k->seen[i].id, o->build_id, o->build_id_len) == 0)
			return 1;
	if (!(k->nseen & (k->nseen - 1)))	/* 0, 1, 2, 4...: grow to twice */
		k->seen = xrealloc(k->seen, (k->nseen ? 2 * k->nseen : 1) * sizeof *k->seen);
	memcpy(k->seen[k->nseen].id, o->build_id, o->build_id_len);
	k->seen[k->nseen++].len = o->build_id_len;
	return 0;
}

/* Copy from (size bytes) to the entry's file, if it fits; 0 if kept. */
static int keep_file(struct keeping *k, const char *what, const char *from, const char *to,
		     uint64_t size)
{
	uint64_t left;
	if (size > k->limit / 4) {
		error_line("cache: %s (%.1f MiB) not kept by build ID: above a quarter of the "
			   "cache's size (PROFIL_CACHE_SIZE, %.0f MiB)", what, size / 1048576.0,
			   k->limit / 1048576.0);
		return -1;
	}
	if (too_full(k->dir, size, &left)) {
		error_line("cache: %s not kept by build ID: %s has %.0f MiB free, too little "
			   "to spare %.1f MiB", what, k->dir, left / 1048576.0, size / 1048576.0);
		return -1;
	}
	if (make_parents(to) != 0 || copy_to(from, to) != 0) {
		error_line("cache: %s not kept by build ID: %s: %s", what, to, strerror(errno));
		return -1;
	}
	k->kept++;
	k->bytes += size;
	return 0;
}

/* The separate debug file libdwfl finds for the object at path, into
   buf (the default places, not the cache); NULL if none. */
static const char *debug_file(const char *path, char *buf, size_t len)
{
	static char *debuginfo_path;
	const Dwfl_Callbacks cb = {
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = &debuginfo_path,
	};
	Dwfl *d = dwfl_begin(&cb);
	if (!d)
		return NULL;
	const char *found = NULL;
	Dwfl_Module *mod = dwfl_report_elf(d, "object", path, -1, 0, false);
	dwfl_report_end(d, NULL, NULL);
	Dwarf_Addr bias;
	const char *main_file = NULL, *debug = NULL;
	if (mod && dwfl_module_getdwarf(mod, &bias)) {
		dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &main_file, &debug);
		if (debug && main_file && strcmp(debug, main_file) != 0) {
			snprintf(buf, len, "%s", debug);
			found = buf;
		}
	}
	dwfl_end(d);
	return found;
}

static void keep_object(struct keeping *k, const struct profile_segment *o)
{
	char entry[PATH_MAX], note[PATH_MAX];
	uint8_t id[64];
	bidcache_entry(entry, sizeof entry, k->dir, o->build_id, o->build_id_len, "");
	if (access(entry, F_OK) == 0) {
		bidcache_touch(entry);
		return;
	}
	char path[PROFILE_PATH_MAX + 1];
	snprintf(path, sizeof path, "%.*s", (int)PROFILE_PATH_MAX, o->path);
	/* The file may have been rebuilt while the program ran. */
	int n = bidcache_file_id(path, id);
	if (n != (int)o->build_id_len || memcmp(id, o->build_id, o->build_id_len) != 0) {
		error_line("cache: %s not kept by build ID: %s", path,
			   n < 0 ? "cannot read it" : "it changed during the run");
		return;
	}
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return;
	/* The debug file first: an object in the cache is taken for complete. */
	char dbg[PATH_MAX], dentry[PATH_MAX];
	struct stat dst;
	if (debug_file(path, dbg, sizeof dbg) && stat(dbg, &dst) == 0) {
		char what[2 * PATH_MAX + 32];
		snprintf(what, sizeof what, "%s's debug file %s", path, dbg);
		bidcache_entry(dentry, sizeof dentry, k->dir, o->build_id, o->build_id_len, ".debug");
		if (access(dentry, F_OK) != 0)
			keep_file(k, what, dbg, dentry, (uint64_t)dst.st_size);
	}
	bidcache_entry(note, sizeof note, k->dir, o->build_id, o->build_id_len, ".path");
	if (make_parents(note) == 0) {
		FILE *f = fopen(note, "w");
		if (f) {
			fprintf(f, "%s\n", path);
			fclose(f);
		}
	}
	if (keep_file(k, path, path, entry, (uint64_t)st.st_size) != 0) {
		unlink(note);
		bidcache_entry(dentry, sizeof dentry, k->dir, o->build_id, o->build_id_len, ".debug");
		unlink(dentry);
	}
}

void bidcache_keep_run(const char *rundir)
{
	char dir[PATH_MAX];
	if (!bidcache_dir(dir, sizeof dir))
		return;
	unsigned nfiles = 0;
	char **files = run_files(rundir, &nfiles);
	if (!files)
		return;
	/* The segments' heads only, not the model: a tree of a thousand
	   processes is read once by summary() already.  Each object once
	   (the entry exists after its first). */
	struct keeping k = { dir, bidcache_limit(), 0, 0, NULL, 0 };
	for (unsigned i = 0; i < nfiles; i++) {
		/* A finished process that took no sample has no object to
		   keep, as its header says: most of a tree of short
		   processes, read no further. */
		struct profile_header hd;
		int fd = open(files[i], O_RDONLY | O_CLOEXEC);
		int none = fd >= 0 && pread(fd, &hd, sizeof hd, 0) == (ssize_t)sizeof hd
			   && profile_is_profile(&hd, sizeof hd) && hd.state == PROFILE_COMPLETE
			   && hd.counted == 0;
		if (fd >= 0)
			close(fd);
		struct profile p;
		char why[256];
		if (none || profile_open(&p, files[i], why, sizeof why) != 0)
			continue;
		for (size_t s = 0; s < p.nsegs; s++) {
			const struct profile_seg_view *v = &p.segs[s];
			const struct profile_segment *h = v->head;
			if (!h->build_id_len || h->build_id_len > 64 || h->path[0] != '/'
			    || (h->flags & (PROFILE_SEG_VDSO | PROFILE_SEG_SYSTEM)))
				continue;
			/* Only the runs of counters the file holds data for. */
			uint64_t any = 0, end;
			for (uint64_t c = 0; !any && (c = profile_data(&p, v->counters, h->width,
								       h->ncounters, c, &end))
						       < h->ncounters;)
				for (; !any && c < end; c++)
					any = profile_count(v, c);
			if (any && !tried(&k, h))
				keep_object(&k, h);
		}
		profile_close(&p);
	}
	free_files(files);
	free(k.seen);
	uint64_t freed = 0;
	size_t removed = bidcache_trim(dir, k.limit, &freed);
	if (removed)
		error_line("cache: %s was above its size (%.0f MiB, PROFIL_CACHE_SIZE): the %zu "
			   "least recently used objects removed (%.1f MiB)", dir,
			   k.limit / 1048576.0, removed, freed / 1048576.0);
}

static int is_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

static int by_use(const void *a, const void *b)
{
	const struct bidcache_entry *x = a, *y = b;
	if (x->used != y->used)
		return x->used < y->used ? -1 : 1;
	return strcmp(x->base, y->base);
}

static uint64_t size_of(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (uint64_t)st.st_blocks * 512 : 0;
}

struct bidcache_entry *bidcache_list(const char *dir, size_t *count, uint64_t *total)
{
	struct bidcache_entry *v = NULL;
	size_t n = 0, cap = 0;
	*total = 0;
	char top[PATH_MAX];
	snprintf(top, sizeof top, "%s/.build-id", dir);
	DIR *d = opendir(top);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (strlen(e->d_name) != 2 || !is_hex(e->d_name, 2))
			continue;
		char sub[PATH_MAX + 8];
		snprintf(sub, sizeof sub, "%s/%.2s", top, e->d_name);
		DIR *s = opendir(sub);
		struct dirent *f;
		while (s && (f = readdir(s))) {
			size_t len = strlen(f->d_name);
			/* Objects without a debug file or note: their bare names
			   (126 hex digits at most, as the formats below say). */
			if (!len || !is_hex(f->d_name, len) || len > 126)
				continue;
			if (n == cap)
				v = xrealloc(v, (cap = cap ? 2 * cap : 64) * sizeof *v);
			struct bidcache_entry *x = &v[n++];
			char path[PATH_MAX + 200];
			snprintf(x->base, sizeof x->base, "%.2s/%.126s", e->d_name, f->d_name);
			snprintf(path, sizeof path, "%s/%.126s", sub, f->d_name);
			struct stat st;
			x->used = stat(path, &st) == 0 ? (int64_t)st.st_mtime : 0;
			x->size = size_of(path);
			snprintf(path, sizeof path, "%s/%.126s.debug", sub, f->d_name);
			x->size += size_of(path);
			snprintf(path, sizeof path, "%s/%.126s.path", sub, f->d_name);
			x->size += size_of(path);
			x->path[0] = '\0';
			FILE *p = fopen(path, "r");
			if (p) {
				if (fgets(x->path, sizeof x->path, p))
					x->path[strcspn(x->path, "\n")] = '\0';
				fclose(p);
			}
			*total += x->size;
		}
		if (s)
			closedir(s);
	}
	if (d)
		closedir(d);
	if (n)
		qsort(v, n, sizeof *v, by_use);
	*count = n;
	return v;
}

size_t bidcache_trim(const char *dir, uint64_t limit, uint64_t *freed)
{
	size_t n, removed = 0;
	uint64_t total;
	*freed = 0;
	struct bidcache_entry *v = bidcache_list(dir, &n, &total);
	for (size_t i = 0; i < n && total > limit; i++) {
		static const char *const suffixes[] = { ".debug", ".path", "" };
		char path[PATH_MAX + 200];
		for (size_t s = 0; s < 3; s++) {
			snprintf(path, sizeof path, "%s/.build-id/%s%s", dir, v[i].base, suffixes[s]);
			unlink(path);
		}
		snprintf(path, sizeof path, "%s/.build-id/%.2s", dir, v[i].base);
		rmdir(path);	/* only if empty */
		total -= v[i].size;
		*freed += v[i].size;
		removed++;
	}
	free(v);
	return removed;
}
