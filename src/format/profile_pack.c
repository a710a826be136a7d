/*
 * profile_pack.c - a finished profile packed: its holes left out
 * (profil(5), PROFILE_F_PACKED).
 *
 * The runtime writes sparse files: a histogram for every byte of text of
 * every object, tables sized for the most a process may need, counted
 * into in place so that a process killed hard leaves its samples behind.
 * A short process fills a page here and there of 19 MB: ls, du
 * --apparent-size, tar and cp without --sparse see 19 MB.  Once no
 * process writes the file, its pages of data are copied behind a table
 * of where they were, and the copy is swapped with the file: a reader
 * sees either file whole, never a mix.
 *
 * The sparse file swapped out is kept, emptied, to take the next packed
 * copy in the same directory (if its process closed it at its end): a new inode on an ext4 without a journal
 * (the kernel scans past every inode freed in the last minute, and a run
 * frees one a process) cost 0.8 ms a file on a busy machine, the unlink
 * and create more than the copy itself.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile.h"

static int say(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -1;
}

struct extents {
	struct profile_pack_extent *v;
	uint64_t n, cap, data;	/* data: bytes in extents */
};

static int push(struct extents *x, uint64_t at, uint64_t end)
{
	if (x->n && x->v[x->n - 1].end == at && at > PROFILE_PAGE) {
		x->v[x->n - 1].end = end;
	} else {
		if (x->n == x->cap) {
			uint64_t cap = x->cap ? 2 * x->cap : 16;
			struct profile_pack_extent *v = realloc(x->v, cap * sizeof *v);
			if (!v)
				return -1;
			x->v = v;
			x->cap = cap;
		}
		x->v[x->n++] = (struct profile_pack_extent){ at, end, 0 };
	}
	x->data += end - at;
	return 0;
}

/* The pages of [0, size) that hold data; the header page apart, first. */
static int find_data(int fd, uint64_t size, struct extents *x)
{
	if (push(x, 0, PROFILE_PAGE) != 0)
		return -1;
	for (uint64_t at = PROFILE_PAGE; at < size;) {
		off_t data = lseek(fd, (off_t)at, SEEK_DATA);
		if (data < 0 && errno == ENXIO)
			break;
		if (data < 0)
			return -1;	/* no SEEK_DATA: nothing to gain */
		off_t hole = lseek(fd, data, SEEK_HOLE);
		if (hole < 0 || (uint64_t)hole > size)
			hole = (off_t)size;
		uint64_t from = (uint64_t)data / PROFILE_PAGE * PROFILE_PAGE;
		uint64_t to = ((uint64_t)hole + PROFILE_PAGE - 1) / PROFILE_PAGE * PROFILE_PAGE;
		if (to > size)
			to = size;
		if (from < at)
			from = at;
		if (to <= from)
			break;
		if (push(x, from, to) != 0)
			return -1;
		at = to;
	}
	return 0;
}

static int write_all(int fd, const void *buf, size_t len, uint64_t at)
{
	const char *p = buf;
	while (len) {
		ssize_t w = pwrite(fd, p, len, (off_t)at);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			return -1;
		}
		p += w;
		len -= (size_t)w;
		at += (uint64_t)w;
	}
	return 0;
}

/* Read bytes [at, end) of fd into buf (zeros past its end). */
static int read_at(int fd, char *buf, uint64_t at, uint64_t end)
{
	while (at < end) {
		ssize_t r = pread(fd, buf, end - at, (off_t)at);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0) {	/* shorter than its header said */
			memset(buf, 0, end - at);
			break;
		}
		buf += r;
		at += (uint64_t)r;
	}
	return 0;
}

/* The sparse file of the last pack, under its temporary name. */
static struct {
	char path[4096];
	size_t dirlen;		/* path[0, dirlen) is its directory, with '/' */
	mode_t mode;
} spare;

void profile_pack_drop_spare(void)
{
	if (spare.path[0])
		unlink(spare.path);
	spare.path[0] = 0;
}

/* The temporary file tmp, made of the spare when there is one of the same
   directory and mode (and ours: the runtime of a set-user-ID program
   made its own file), else created. */
static int open_tmp(const char *tmp, size_t dirlen, mode_t mode)
{
	if (spare.path[0] && (spare.dirlen != dirlen || memcmp(spare.path, tmp, dirlen)
			      || spare.mode != mode))
		profile_pack_drop_spare();
	if (spare.path[0]) {
		int fd = -1;
		if (rename(spare.path, tmp) == 0)
			fd = open(tmp, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
		else
			unlink(spare.path);
		spare.path[0] = 0;
		/* Not emptied to size 0: ext4 then writes the file out at its
		   close (auto_da_alloc), as for a file renamed over another. */
		if (fd >= 0 && ftruncate(fd, PROFILE_PAGE) == 0)
			return fd;
		if (fd >= 0)
			close(fd);
		unlink(tmp);
	}
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0 && errno == EEXIST && unlink(tmp) == 0)	/* left by a pack killed */
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	return fd;
}

int profile_pack(const char *path, char *why, size_t len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return say(why, len, "%s", strerror(errno));
	struct stat st;
	static char page[PROFILE_PAGE];
	struct profile_header *h = (struct profile_header *)page;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < PROFILE_PAGE
	    || pread(fd, page, sizeof page, 0) != (ssize_t)sizeof page
	    || !profile_is_profile(page, sizeof page) || h->byte_order != 0x01020304
	    || h->version < PROFILE_VERSION_MIN || h->version > PROFILE_VERSION
	    || (h->flags & PROFILE_F_PACKED) || h->end < PROFILE_PAGE || h->end % PROFILE_PAGE
	    || h->end > (uint64_t)st.st_size) {
		close(fd);
		return 0;	/* not ours to pack: the reader says what is wrong */
	}
	struct extents x = { 0 };
	char tmp[4096];
	int out = -1;
	if (find_data(fd, h->end, &x) != 0)
		goto keep;
	uint64_t table = profile_pack_size(x.n);
	if (PROFILE_PAGE + table + (x.data - PROFILE_PAGE) >= (uint64_t)st.st_size)
		goto keep;	/* no gain */
	const char *slash = strrchr(path, '/');
	int dl = slash ? (int)(slash - path + 1) : 0;
	if (snprintf(tmp, sizeof tmp, "%.*s.%s.pack", dl, path, slash ? slash + 1 : path)
	    >= (int)sizeof tmp)
		goto keep;
	out = open_tmp(tmp, (size_t)dl, st.st_mode & 0777);
	if (out < 0) {
		say(why, len, "cannot pack: %s: %s", tmp, strerror(errno));
		goto fail;
	}
	uint64_t from = PROFILE_PAGE + table;
	for (uint64_t i = 1; i < x.n; i++) {
		x.v[i].from = from;
		from += x.v[i].end - x.v[i].at;
	}
	/* The whole packed file in one write: a few pages for a short
	   process, and far fewer system calls than a write per extent. */
	uint64_t total = PROFILE_PAGE + table + (x.data - PROFILE_PAGE);
	char *img = calloc(1, total);
	if (!img) {
		say(why, len, "out of memory");
		goto fail;
	}
	struct profile_pack *pk = (struct profile_pack *)(img + PROFILE_PAGE);
	pk->size = h->end;
	pk->nextents = x.n;
	memcpy(pk->extents, x.v, x.n * sizeof *x.v);
	h->flags |= PROFILE_F_PACKED;
	h->version = PROFILE_VERSION;
	memcpy(img, page, sizeof page);
	int bad = 0;
	for (uint64_t i = 1; !bad && i < x.n; i++)
		bad = read_at(fd, img + x.v[i].from, x.v[i].at, x.v[i].end) != 0;
	bad = bad || write_all(out, img, total, 0) != 0;
	free(img);
	if (bad || close(out) != 0) {
		out = -1;
		say(why, len, "cannot pack: %s", strerror(errno));
		goto fail;
	}
	out = -1;
	/* Swapped, not renamed over: ext4 starts writing out a file
	   renamed over another at once (auto_da_alloc), 0.13 ms a file
	   here against 0.07 for the swap and the unlink.  Either way a
	   reader finds one file, whole. */
	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_EXCHANGE) == 0) {
		/* tmp is the sparse file now: the next pack's, if it is ours
		   and closed at its process's end.  One left running (killed)
		   may still be mapped by a vfork child of its process, whose
		   stores must not land in, nor fault on, another file. */
		if (st.st_uid == geteuid() && st.st_gid == getegid()
		    && h->state == PROFILE_COMPLETE) {
			memcpy(spare.path, tmp, strlen(tmp) + 1);
			spare.dirlen = (size_t)dl;
			spare.mode = st.st_mode & 0777;
		} else {
			unlink(tmp);
		}
	} else if (rename(tmp, path) != 0) {
		say(why, len, "cannot pack: %s", strerror(errno));
		goto fail;
	}
	close(fd);
	free(x.v);
	return 1;
fail:
	if (out >= 0)
		close(out);
	unlink(tmp);
	close(fd);
	free(x.v);
	return -1;
keep:
	close(fd);
	free(x.v);
	return 0;
}
