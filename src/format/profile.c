/*
 * profile.c - reading the profil profile file (profil(5)) in the command.
 *
 * The runtime writes the file in place (src/runtime/preload/preload.c); this is
 * the other side.  The file's data is mapped (not its holes: see
 * map_file) and every field that
 * leads somewhere (sizes, counts, offsets) is checked against the file's
 * size before it is followed, so that a truncated, corrupt or hostile
 * file is refused in one line and never read past.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../common/bins.h"
#include "profile.h"
#include "profile_guard.h"

static int fail(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -1;
}

/* Say why, then let go of the file. */
static int refuse(struct profile *p, char *why, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	profile_close(p);
	return -1;
}

int profile_is_profile(const void *data, size_t size)
{
	return size >= 8 && memcmp(data, PROFILE_MAGIC, 8) == 0;
}

static int check_segment(const struct profile_segment *s, uint64_t at, uint64_t end,
			 char *why, size_t len)
{
	if (s->width != 4 && s->width != 8)
		return fail(why, len, "corrupt segment at byte %llu: counter width %u",
			    (unsigned long long)at, s->width);
	if (s->scale < 2 || s->scale > BINS_SCALE_ONE)
		return fail(why, len, "corrupt segment at byte %llu: scale %u",
			    (unsigned long long)at, s->scale);
	if (s->ncounters > (UINT64_C(1) << 40)
	    || s->size != profile_segment_size(s->ncounters, s->width))
		return fail(why, len, "corrupt segment at byte %llu: %llu counters in %llu bytes",
			    (unsigned long long)at, (unsigned long long)s->ncounters,
			    (unsigned long long)s->size);
	if (s->length > UINT64_MAX - s->start || s->length > UINT64_MAX - s->vaddr
	    || bins_count_for_range(s->start, s->start + s->length, s->scale) > s->ncounters)
		return fail(why, len, "corrupt segment at byte %llu: %llu counters do not cover "
			    "its %llu bytes of text", (unsigned long long)at,
			    (unsigned long long)s->ncounters, (unsigned long long)s->length);
	if (s->size > end - at)
		return fail(why, len, "truncated: segment at byte %llu runs past the end",
			    (unsigned long long)at);
	if (memchr(s->path, '\0', sizeof s->path) == NULL || s->build_id_len > sizeof s->build_id)
		return fail(why, len, "corrupt segment at byte %llu: bad path or build ID",
			    (unsigned long long)at);
	return 0;
}

/* Note that bytes [at, end) of the file hold data (are mapped). */
static int add_extent(struct profile *p, uint64_t at, uint64_t end)
{
	if (p->nextents && p->extents[p->nextents - 1].end == at) {
		p->extents[p->nextents - 1].end = end;
		return 0;
	}
	if ((p->nextents & (p->nextents - 1)) == 0) {
		struct profile_extent *e = realloc(p->extents, (p->nextents ? 2 * p->nextents : 8)
								 * sizeof *e);
		if (!e)
			return -1;
		p->extents = e;
	}
	p->extents[p->nextents++] = (struct profile_extent){ at, end };
	return 0;
}

/* len bytes at byte from of fd to to; zeros past the end of the file. */
static int read_at(int fd, char *to, uint64_t len, uint64_t from)
{
	for (uint64_t k = 0; k < len;) {
		ssize_t r = pread(fd, to + k, len - k, (off_t)(from + k));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0) {	/* shrank meanwhile: zeros from there */
			memset(to + k, 0, len - k);
			break;
		}
		k += (uint64_t)r;
	}
	return 0;
}

/* Bytes [at, end) of fd into the reserved map: the file's own pages
 * mapped over the reservation (no copy), or read where it cannot be
 * mapped, and where they are few: a runtime's file has a page of data
 * here and there, and a mapping of each cost more than the copy (a
 * system call, a mapping to split and later undo). */
#define MAP_AT_LEAST (256u << 10)

/* The page(s) of p's map at [at, at + len) made p's own, if they may be
   the file's (p->guarded): copied to anonymous pages in their place, so
   that what is checked there is what is read later, whatever becomes of
   the file (a file cut short takes even the pages of a private mapping
   that were written: the copy must be of our own).  A page cut short
   already reads as zeros (and is refused for that). */
static void own(const struct profile *p, const void *at, size_t len)
{
	static char copy[PROFILE_PAGE];
	if (!p->guarded)
		return;
	for (size_t k = 0; k < len; k += PROFILE_PAGE) {
		char *pg = (char *)at + k;
		memcpy(copy, pg, sizeof copy);
		if (mmap(pg, PROFILE_PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED)
			memcpy(pg, copy, sizeof copy);
	}
}

/* p's map guarded (profile_guard.c) before a page of it is mapped from
   its file, which another process may cut short: 0, or -1 (copy). */
static int guard(struct profile *p)
{
	if (!p->guarded && profile_guard_add(p->map, p->map_size) == 0)
		p->guarded = 1;
	return p->guarded ? 0 : -1;
}
static int place(struct profile *p, int fd, uint64_t at, uint64_t end, uint64_t from)
{
	char *where = (char *)p->map + at;
	if (end - at >= MAP_AT_LEAST && guard(p) == 0
	    && mmap(where, end - at, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd,
		    (off_t)from)
	       != MAP_FAILED)
		return add_extent(p, at, end);
	if (read_at(fd, where, end - at, from) != 0)
		return -1;
	return add_extent(p, at, end);
}

/*
 * The file's data in p->map, its holes (counters never written: the
 * runtime's files are sparse) left as pages of an anonymous reservation
 * that are never touched: zeros that cost nothing, and that no loop
 * needs to read (p->extents).  Only data is mapped from the file: on a
 * full tmpfs, reading a hole through a mapping of the file has to
 * allocate a page, and the reader would die of SIGBUS.
 */
static int map_file(struct profile *p, int fd, uint64_t size)
{
	long sc = sysconf(_SC_PAGESIZE);
	uint64_t pg = sc > 0 ? (uint64_t)sc : PROFILE_PAGE;
	uint64_t pages = (size + pg - 1) / pg * pg;
	for (uint64_t at = 0; at < size;) {
		off_t data = lseek(fd, (off_t)at, SEEK_DATA);
		if (data < 0 && errno == ENXIO)
			return 0;	/* a hole to the end */
		if (data < 0)
			data = (off_t)at;	/* no SEEK_DATA here: all of it */
		off_t hole = lseek(fd, data, SEEK_HOLE);
		if (hole < 0 || (uint64_t)hole > size)
			hole = (off_t)size;
		uint64_t from = (uint64_t)data / pg * pg;
		uint64_t to = ((uint64_t)hole + pg - 1) / pg * pg;
		if (to > pages)
			to = pages;
		if (from < at)
			from = at;
		if (to <= from)
			break;
		if (place(p, fd, from, to, from) != 0)
			return -1;
		at = to;
	}
	return 0;
}

/*
 * The reservation a packed file is read into, kept when its file is
 * closed for the next one to open: a command reads hundreds of files one
 * after another, and a fresh reservation for each cost a page fault, a
 * page cleared and an unmapping for every page of data (60% of a report
 * of 700 files).  A file is put back where it was, so only its extents
 * hold data; the next file clears them.  Pages once touched stay
 * resident: past SPARE_RESIDENT of them the reservation is given up.
 */
#define SPARE_RESIDENT (16u << 20)
#define SPARE_SIZE_MAX (UINT64_C(1) << 34)	/* reservations worth keeping */
struct profile_spare {
	void *map;
	size_t size;
	struct profile_extent *dirty;	/* data left by the last file */
	size_t ndirty;
	uint8_t *touched;		/* a bit a page ever written */
	size_t resident;		/* bytes of those pages */
};
static _Thread_local struct profile_spare *kept;

static void spare_free(struct profile_spare *s)
{
	if (s->map)
		munmap(s->map, s->size);
	free(s->dirty);
	free(s->touched);
	free(s);
}

/* A writable reservation of size bytes for p (p->map, p->spare), zeros
   but where p->extents will be read: the one kept if it is large
   enough.  NULL if none could be made. */
static void *reserve(struct profile *p, uint64_t size)
{
	struct profile_spare *s = kept;
	kept = NULL;
	if (s && s->size >= size) {
		/* What the last file left and this one will not overwrite
		   (p->extents): files of one program have much the same. */
		size_t j = 0;
		for (size_t i = 0; i < s->ndirty; i++) {
			uint64_t at = s->dirty[i].at, end = s->dirty[i].end;
			while (at < end) {
				while (j < p->nextents && p->extents[j].end <= at)
					j++;
				uint64_t to = j < p->nextents && p->extents[j].at < end
					      ? p->extents[j].at : end;
				if (to > at)
					memset((char *)s->map + at, 0, to - at);
				at = j < p->nextents && p->extents[j].at < end ? p->extents[j].end
									       : end;
			}
		}
		s->ndirty = 0;
	} else {
		if (s)
			spare_free(s);
		s = calloc(1, sizeof *s);
		if (!s)
			return NULL;
		s->map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS
			      | MAP_NORESERVE, -1, 0);
		if (s->map == MAP_FAILED) {
			s->map = NULL;
			spare_free(s);
			return NULL;
		}
		s->size = size;
		if (size <= SPARE_SIZE_MAX)	/* else not kept: no bitmap */
			s->touched = calloc(size / PROFILE_PAGE / 8 + 1, 1);
	}
	p->spare = s;
	p->map = s->map;
	p->map_size = size;
	return p->map;
}

/* A reservation of size bytes for p alone, unmapped when p is closed. */
static void *reserve_fresh(struct profile *p, uint64_t size)
{
	void *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS
			 | MAP_NORESERVE, -1, 0);
	if (map == MAP_FAILED)
		return NULL;
	p->map = map;
	p->map_size = size;
	return map;
}

/* p's reservation kept for the next file, its extents as what to clear. */
static void unreserve(struct profile *p)
{
	struct profile_spare *s = p->spare;
	p->spare = NULL;
	for (size_t i = 0; s->touched && i < p->nextents; i++)
		for (uint64_t pg = p->extents[i].at / PROFILE_PAGE;
		     pg < p->extents[i].end / PROFILE_PAGE; pg++)
			if (!(s->touched[pg / 8] & 1u << pg % 8)) {
				s->touched[pg / 8] |= (uint8_t)(1u << pg % 8);
				s->resident += PROFILE_PAGE;
			}
	if (!s->touched || s->resident > SPARE_RESIDENT || kept) {
		spare_free(s);
		return;
	}
	free(s->dirty);
	s->dirty = p->extents;
	s->ndirty = p->nextents;
	p->extents = NULL;
	p->nextents = 0;
	kept = s;
}

/*
 * A packed file (profile.h): the size it says, reserved, and each of its
 * extents placed where it was, all of them read in one preadv (the
 * extents lie back to back in the file).  1 if packed (p->map set up),
 * 0 if not, -1 with why.
 */
static int map_packed(struct profile *p, int fd, uint64_t fsize, char *why, size_t len)
{
	struct profile_header h;
	struct profile_pack pk;
	if (fsize < PROFILE_PAGE + sizeof pk || pread(fd, &h, sizeof h, 0) != (ssize_t)sizeof h
	    || !profile_is_profile(&h, sizeof h) || h.byte_order != 0x01020304 || h.version < 5
	    || !(h.flags & PROFILE_F_PACKED))
		return 0;
	if (pread(fd, &pk, sizeof pk, PROFILE_PAGE) != (ssize_t)sizeof pk)
		return fail(why, len, "cannot read: %s", strerror(errno));
	if (!pk.size || pk.size % PROFILE_PAGE || pk.size > PROFILE_PACK_MAX || !pk.nextents
	    || pk.nextents > pk.size / PROFILE_PAGE)
		return fail(why, len, "corrupt pack table: %llu extents of %llu bytes",
			    (unsigned long long)pk.nextents, (unsigned long long)pk.size);
	if (profile_pack_size(pk.nextents) > fsize - PROFILE_PAGE)
		return fail(why, len, "truncated: %llu bytes, the pack table runs past the end",
			    (unsigned long long)fsize);
	size_t tsize = pk.nextents * sizeof(struct profile_pack_extent);
	struct profile_pack_extent *e = malloc(tsize);
	if (!e)
		return fail(why, len, "out of memory");
	if (pread(fd, e, tsize, PROFILE_PAGE + sizeof pk) != (ssize_t)tsize) {
		free(e);
		return fail(why, len, "truncated: the pack table runs past the end");
	}
	uint64_t at = 0, from = PROFILE_PAGE + profile_pack_size(pk.nextents), fend = from;
	int big = 0;	/* extents worth mapping */
	for (uint64_t i = 0; i < pk.nextents; i++) {
		const struct profile_pack_extent *x = &e[i];
		int bad = x->at % PROFILE_PAGE || x->end % PROFILE_PAGE || x->from % PROFILE_PAGE
			  || x->at < at || x->end <= x->at || x->end > pk.size
			  || (i ? x->from < from : x->at || x->from);
		if (bad) {
			free(e);
			return fail(why, len, "corrupt pack table: extent %llu",
				    (unsigned long long)i);
		}
		if (x->from > fsize || x->end - x->at > fsize - x->from) {
			free(e);
			return fail(why, len, "truncated: %llu bytes, extent %llu of the pack "
				    "table runs past the end", (unsigned long long)fsize,
				    (unsigned long long)i);
		}
		if (add_extent(p, x->at, x->end) != 0) {
			free(e);
			return fail(why, len, "out of memory");
		}
		at = x->end;
		if (i)
			from = x->from + (x->end - x->at);
		if (i && from > fend)
			fend = from;
		big |= i && x->end - x->at >= MAP_AT_LEAST;
	}
	/*
	 * Large extents are mapped from the file, not copied, when the file
	 * is as its packer left it: its process complete and the file the
	 * size its table says.  Nothing writes such a file again (profil run
	 * writes a packed copy whole under another name and swaps it in);
	 * one cut short by someone else reads as zeros past its end
	 * (profile_guard.c), as a copy would.  Such a file gets a reservation
	 * of its own: the one kept for the next file must hold no pages of
	 * this one's.
	 */
	big = big && h.state == PROFILE_COMPLETE && fend == fsize;
	char *map = big ? reserve_fresh(p, pk.size) : reserve(p, pk.size);
	if (!map) {
		free(e);
		return fail(why, len, "cannot read: %s", strerror(errno));
	}
	if (big && guard(p) != 0)
		big = 0;
	/* Extents back to back in the file are read together; large ones
	   of a file as packed, mapped. */
	struct iovec iov[64];
	for (uint64_t i = 0, first; (first = i) < pk.nextents;) {
		if (big && i && e[i].end - e[i].at >= MAP_AT_LEAST) {
			if (mmap(map + e[i].at, e[i].end - e[i].at, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_FIXED, fd, (off_t)e[i].from) != MAP_FAILED) {
				i++;
				continue;
			}
		}
		int n = 0;
		uint64_t want = 0;
		for (; i < pk.nextents && n < 64
		       && (i == first || (e[i].from == e[i - 1].from + (e[i - 1].end - e[i - 1].at)
					  && !(big && e[i].end - e[i].at >= MAP_AT_LEAST)));
		     i++, n++) {
			iov[n] = (struct iovec){ map + e[i].at, e[i].end - e[i].at };
			want += e[i].end - e[i].at;
		}
		ssize_t r = preadv(fd, iov, n, (off_t)e[first].from);
		if (r < 0 && errno == EINTR) {
			i = first;
			continue;
		}
		/* Short (the file shrank meanwhile): the rest one at a time,
		   zeros past the end. */
		for (uint64_t j = first; r >= 0 && (uint64_t)r < want && j < i; j++)
			if (read_at(fd, map + e[j].at, e[j].end - e[j].at, e[j].from) != 0)
				r = -1;
		if (r < 0) {
			free(e);
			return fail(why, len, "cannot read: %s", strerror(errno));
		}
	}
	free(e);
	/* The file as it was written: a copy of this header (trim_profile,
	   merge) describes an unpacked file. */
	((struct profile_header *)map)->flags &= ~PROFILE_F_PACKED;
	return 1;
}

uint64_t profile_data(const struct profile *p, const void *base, uint32_t width, uint64_t n,
		      uint64_t k, uint64_t *end)
{
	uint64_t off = (uint64_t)((const char *)base - (const char *)p->map);
	size_t lo = 0, hi = p->nextents;
	while (lo < hi) {	/* the first extent that ends after counter k */
		size_t mid = lo + (hi - lo) / 2;
		if (p->extents[mid].end <= off + k * width)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == p->nextents || k >= n)
		return *end = n;
	const struct profile_extent *e = &p->extents[lo];
	if (e->at > off + k * width)
		k = (e->at - off + width - 1) / width;
	uint64_t last = (e->end - off) / width;
	*end = last < n ? last : n;
	return k < n ? k : n;
}

uint64_t profile_nonzero(const void *base, uint32_t width, uint64_t k, uint64_t end)
{
	const unsigned char *b = base;
	uint64_t at = k * width, stop = end * width;
#define NONZERO(x) (width == 8 ? *(const uint64_t *)(b + (x)) != 0 \
			       : *(const uint32_t *)(b + (x)) != 0)
	for (; at < stop && at % 32; at += width)
		if (NONZERO(at))
			return at / width;
	for (; stop - at >= 32; at += 32) {	/* 32 bytes a test */
		uint64_t w[4];
		memcpy(w, b + at, sizeof w);
		if (w[0] | w[1] | w[2] | w[3])
			break;
	}
	for (; at < stop; at += width)
		if (NONZERO(at))
			return at / width;
#undef NONZERO
	return end;
}

/* The sum of counters k..end-1 at base, width bytes each. */
static uint64_t sum_counters(const void *base, uint32_t width, uint64_t k, uint64_t end)
{
	uint64_t sum = 0;
	if (width == 8)
		for (const uint64_t *c = base; k < end; k++)
			sum += c[k];
	else
		for (const uint32_t *c = base; k < end; k++)
			sum += c[k];
	return sum;
}

/* The thread table of a version 2 header, if it has one: p->threads. */
static int check_threads(struct profile *p, char *why, size_t len)
{
	const struct profile_header *h = p->header;
	if (!h->thread_entries && !h->threads_at && !h->threads_size && !h->thread_pcs)
		return 0;
	if (h->threads_at != PROFILE_PAGE || !h->thread_entries
	    || h->thread_entries > PROFILE_THREADS_MAX || h->thread_pcs > PROFILE_PCS_MAX
	    || (h->thread_pcs & (h->thread_pcs - 1))
	    || h->threads_size != profile_threads_size(h->thread_entries, h->thread_pcs))
		return fail(why, len, "corrupt header: a thread table of %u threads and %llu pcs "
			    "in %llu bytes at byte %llu", h->thread_entries,
			    (unsigned long long)h->thread_pcs, (unsigned long long)h->threads_size,
			    (unsigned long long)h->threads_at);
	if (h->threads_size > h->end - h->threads_at)
		return fail(why, len, "truncated: the thread table runs past the end");
	p->threads = (const void *)((const char *)p->map + h->threads_at);
	p->nthreads = h->thread_entries;
	p->pcs = (const void *)((const char *)p->threads
				+ h->thread_entries * sizeof(struct profile_thread));
	p->npcs = h->thread_pcs;
	return 0;
}

/*
 * The extension page of a version 4 header, which must come at byte at
 * (where the tables before it end), and its stack table: p->ext,
 * p->stacks, p->frames.
 */
static int check_ext(struct profile *p, uint64_t at, char *why, size_t len)
{
	const struct profile_header *h = p->header;
	if (h->ext_at != at || PROFILE_PAGE > h->end - at)
		return fail(why, len, "corrupt header: an extension page at byte %llu",
			    (unsigned long long)h->ext_at);
	const struct profile_ext *e = (const void *)((const char *)p->map + at);
	own(p, e, PROFILE_PAGE);
	uint64_t size = PROFILE_PAGE;
	if (e->stacks_at || e->stack_slots) {
		if (!e->stack_slots || e->stack_slots > PROFILE_STACK_SLOTS_MAX
		    || (e->stack_slots & (e->stack_slots - 1)) || e->frames_cap > PROFILE_FRAMES_MAX
		    || e->stacks_at != at + PROFILE_PAGE
		    || e->frames_at != e->stacks_at + profile_stacks_size(e->stack_slots))
			return fail(why, len, "corrupt extension page: a stack table of %llu slots at "
				    "byte %llu, %llu frames at byte %llu",
				    (unsigned long long)e->stack_slots,
				    (unsigned long long)e->stacks_at,
				    (unsigned long long)e->frames_cap,
				    (unsigned long long)e->frames_at);
		size += profile_stacks_size(e->stack_slots) + profile_frames_size(e->frames_cap);
	}
	if (e->lost_kinds > PROFILE_LOST_COUNT)
		return fail(why, len, "corrupt extension page: %u causes of loss, at most %u",
			    e->lost_kinds, PROFILE_LOST_COUNT);
	if (e->size != size)
		return fail(why, len, "corrupt extension page: %llu bytes, its tables take %llu",
			    (unsigned long long)e->size, (unsigned long long)size);
	if (size > h->end - at)
		return fail(why, len, "truncated: the stack table runs past the end");
	p->ext = e;
	if (e->stack_slots) {
		p->stacks = (const void *)((const char *)p->map + e->stacks_at);
		p->nstacks = e->stack_slots;
		p->frames = (const void *)((const char *)p->map + e->frames_at);
		p->nframes = e->frames_used < e->frames_cap ? e->frames_used : e->frames_cap;
	}
	return 0;
}

int profile_open(struct profile *p, const char *path, char *why, size_t len)
{
	memset(p, 0, sizeof *p);
	p->name = path;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(why, len, "%s", strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return fail(why, len, "not a regular file");
	}
	if (st.st_size == 0) {
		close(fd);
		return fail(why, len, "empty file");
	}
	int packed = map_packed(p, fd, (uint64_t)st.st_size, why, len);
	if (packed < 0) {
		close(fd);
		profile_close(p);	/* why is written */
		return -1;
	}
	void *map = p->map;
	if (!packed) {
		map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (map == MAP_FAILED) {
			close(fd);
			return fail(why, len, "cannot read: %s", strerror(errno));
		}
		p->map = map;
		p->map_size = (size_t)st.st_size;
	}
	int r = packed ? 0 : map_file(p, fd, (uint64_t)st.st_size);
	int err = errno;
	close(fd);
	/* Read-only, as the file; not a kept reservation, which would have
	   to be made writable again, each time a walk of all its pages; nor
	   one holding pages of the file, some of which own() copies. */
	if (!p->spare && !p->guarded)
		mprotect(map, p->map_size, PROT_READ);
	if (r != 0)
		return refuse(p, why, len, "cannot read: %s", strerror(err));
	if (!profile_is_profile(map, p->map_size)) {
		return refuse(p, why, len, "not a profil profile (bad magic number)");
	}
	if (p->map_size < PROFILE_PAGE) {
		return refuse(p, why, len, "truncated: %zu bytes, the header alone takes %u",
			    (size_t)st.st_size, PROFILE_PAGE);
	}
	const struct profile_header *h = map;
	p->header = h;
	if (h->byte_order != 0x01020304) {
		return refuse(p, why, len, "written on a machine of another byte order");
	}
	if (h->version < PROFILE_VERSION_MIN || h->version > PROFILE_VERSION) {
		return refuse(p, why, len, "format version %u; this profil reads versions %u to %u",
			    h->version, PROFILE_VERSION_MIN, PROFILE_VERSION);
	}
	if (h->state != PROFILE_RUNNING && h->state != PROFILE_COMPLETE) {
		return refuse(p, why, len, "corrupt header: state %u", h->state);
	}
	if (h->end < PROFILE_PAGE || h->end % PROFILE_PAGE) {
		return refuse(p, why, len, "corrupt header: end %llu", (unsigned long long)h->end);
	}
	if (h->end > p->map_size) {
		return refuse(p, why, len, "truncated: %zu bytes, the header says %llu",
			    p->map_size, (unsigned long long)h->end);
	}
	if (h->taken != h->counted + h->outside + h->saturated + h->lost) {
		return refuse(p, why, len, "statistics do not add up: taken %llu, counted %llu + "
			    "outside %llu + saturated %llu + lost %llu",
			    (unsigned long long)h->taken, (unsigned long long)h->counted,
			    (unsigned long long)h->outside, (unsigned long long)h->saturated,
			    (unsigned long long)h->lost);
	}
	if (h->cmdline_len > PROFILE_CMDLINE_MAX) {
		return refuse(p, why, len, "corrupt header: a command line of %u bytes, at most %u "
			    "fit", h->cmdline_len, PROFILE_CMDLINE_MAX);
	}
	if (h->nsegments > h->end / PROFILE_PAGE) {
		return refuse(p, why, len, "corrupt header: %u segments in %llu bytes",
			    h->nsegments, (unsigned long long)h->end);
	}
	p->segs = calloc(h->nsegments ? h->nsegments : 1, sizeof *p->segs);
	if (!p->segs) {
		return refuse(p, why, len, "out of memory");
	}
	uint64_t at = PROFILE_PAGE;
	if (h->version >= 2 && check_threads(p, why, len) != 0) {
		profile_close(p);	/* why is written */
		return -1;
	}
	if (p->nthreads)
		at = h->threads_at + h->threads_size;
	if (h->version >= 3 && (h->outside_at || h->outside_pcs)) {
		if (h->outside_at != at || !h->outside_pcs || h->outside_pcs > PROFILE_OUTSIDE_MAX
		    || (h->outside_pcs & (h->outside_pcs - 1))) {
			return refuse(p, why, len, "corrupt header: an outside table of %llu pcs at "
				    "byte %llu", (unsigned long long)h->outside_pcs,
				    (unsigned long long)h->outside_at);
		}
		if (profile_outside_size(h->outside_pcs) > h->end - at) {
			return refuse(p, why, len, "truncated: the outside table runs past the end");
		}
		p->outside = (const void *)((const char *)map + at);
		p->noutside = h->outside_pcs;
		at += profile_outside_size(h->outside_pcs);
	}
	if (h->version >= 4 && h->ext_at) {
		if (check_ext(p, at, why, len) != 0) {
			profile_close(p);	/* why is written */
			return -1;
		}
		at += p->ext->size;
	}
	for (uint32_t i = 0; i < h->nsegments; i++) {
		if (at + PROFILE_PAGE > h->end) {
			return refuse(p, why, len, "truncated: %u segments announced, %u found",
				    h->nsegments, i);
		}
		const struct profile_segment *s = (const void *)((const char *)map + at);
		own(p, s, PROFILE_PAGE);
		if (check_segment(s, at, h->end, why, len) != 0) {
			profile_close(p);	/* why is written */
			return -1;
		}
		at += s->size;
		if (s->flags & PROFILE_SEG_SYSTEM) {
			/* The system counts of the segment before: not a
			   segment of their own, so no reader counts them twice. */
			struct profile_seg_view *v = p->nsegs ? &p->segs[p->nsegs - 1] : NULL;
			if (!v || v->system || v->head->start != s->start
			    || v->head->ncounters != s->ncounters || v->head->width != s->width
			    || v->head->scale != s->scale) {
				return refuse(p, why, len, "corrupt segment at byte %llu: system "
					    "counts that match no segment before them",
					    (unsigned long long)(at - s->size));
			}
			v->system = (const char *)s + PROFILE_PAGE;
			p->has_system = 1;
			for (uint64_t k = 0, end; (k = profile_data(p, v->system, s->width, s->ncounters,
								      k, &end)) < s->ncounters; k = end)
				p->system += sum_counters(v->system, s->width, k, end);
			continue;
		}
		struct profile_seg_view *v = &p->segs[p->nsegs++];
		v->head = s;
		v->counters = (const char *)s + PROFILE_PAGE;
		for (uint64_t k = 0, end; (k = profile_data(p, v->counters, s->width, s->ncounters, k,
							      &end)) < s->ncounters; k = end)
			p->counted += sum_counters(v->counters, s->width, k, end);
	}
	/*
	 * A complete file's counters hold exactly what the header says was
	 * counted.  A running one (killed, or still going) was counted into
	 * after its statistics were last copied, never before.
	 */
	if (h->state == PROFILE_COMPLETE ? p->counted != h->counted : p->counted < h->counted) {
		return refuse(p, why, len, "counts do not add up: the counters hold %llu samples, "
			    "the header says %llu were counted",
			    (unsigned long long)p->counted, (unsigned long long)h->counted);
	}
	/* So does the thread table's; a running file's may be a sample or
	   two behind its counters. */
	if (p->nthreads) {
		uint64_t sum = h->unattributed;
		for (uint32_t i = 0; i < p->nthreads; i++)
			sum += p->threads[i].samples;
		if (h->state == PROFILE_COMPLETE ? sum != p->counted : sum > p->counted) {
			return refuse(p, why, len, "thread counts do not add up: the threads hold %llu "
				    "samples, the counters %llu", (unsigned long long)sum,
				    (unsigned long long)p->counted);
		}
	}
	return 0;
}

void profile_close(struct profile *p)
{
	if (p->guarded)
		profile_guard_remove(p->map);
	p->guarded = 0;
	if (p->spare)
		unreserve(p);
	else if (p->map)
		munmap(p->map, p->map_size);
	free(p->segs);
	free(p->extents);
	p->extents = NULL;
	p->nextents = 0;
	p->map = NULL;
	p->segs = NULL;
	p->nsegs = 0;
}
