/*
 * gmon_read.c - reading gmon.out into a struct gmon_profile (gmon.h).
 *
 * Every length in the file is checked against the bytes that remain
 * before anything is allocated for it, so that a truncated, corrupt or
 * hostile file gets one line of error and never a read past its end or
 * an allocation larger than the file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gmon.h"

struct cursor {
	const unsigned char *p;
	size_t size, at;
};

static int take(struct cursor *c, void *dst, size_t n)
{
	if (c->size - c->at < n)
		return 0;
	memcpy(dst, c->p + c->at, n);
	c->at += n;
	return 1;
}

static void fail(char *err, size_t errlen, const char *fmt, ...)
{
	if (!err || !errlen)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

void gmon_free(struct gmon_profile *p)
{
	for (size_t i = 0; i < p->nhist; i++)
		free(p->hist[i].counts);
	free(p->hist);
	free(p->arcs);
	free(p->bb);
	memset(p, 0, sizeof *p);
}

/* Grow *array (of elem-sized items, *cap of them) to hold one more. */
static int grow(void *array, size_t *cap, size_t n, size_t elem)
{
	if (n < *cap)
		return 1;
	size_t want = *cap ? *cap * 2 : 16;
	void *q = reallocarray(*(void **)array, want, elem);
	if (!q)
		return 0;
	*(void **)array = q;
	*cap = want;
	return 1;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static int read_hist(struct cursor *c, struct gmon_profile *p, size_t *cap,
		     char *err, size_t errlen)
{
	size_t start = c->at - 1;
	uint64_t low, high;
	uint32_t nbins, rate;
	char dimen[15], abbrev;
	if (!take(c, &low, 8) || !take(c, &high, 8) || !take(c, &nbins, 4)
	    || !take(c, &rate, 4) || !take(c, dimen, 15) || !take(c, &abbrev, 1)) {
		fail(err, errlen, "histogram record at offset %zu is cut short", start);
		return -1;
	}
	if (high < low) {
		fail(err, errlen, "histogram record at offset %zu ends (%#llx) below its start (%#llx)",
		     start, (unsigned long long)high, (unsigned long long)low);
		return -1;
	}
	if ((c->size - c->at) / 2 < nbins) {
		fail(err, errlen, "histogram record at offset %zu says %u counters but the file ends first",
		     start, nbins);
		return -1;
	}
	struct gmon_hist *h = NULL;
	for (size_t i = 0; i < p->nhist; i++)
		if (p->hist[i].low_pc == low && p->hist[i].high_pc == high
		    && p->hist[i].nbins == nbins) {
			h = &p->hist[i];
			break;
		}
	if (h && h->rate != rate) {
		fail(err, errlen, "histogram record at offset %zu has rate %u, an earlier one of the same range %u",
		     start, rate, h->rate);
		return -1;
	}
	if (!h) {
		if (!grow(&p->hist, cap, p->nhist, sizeof *p->hist))
			goto nomem;
		h = &p->hist[p->nhist];
		memset(h, 0, sizeof *h);
		h->counts = calloc(nbins ? nbins : 1, sizeof *h->counts);
		if (!h->counts)
			goto nomem;
		p->nhist++;
		h->low_pc = low;
		h->high_pc = high;
		h->nbins = nbins;
		h->rate = rate;
		memcpy(h->dimen, dimen, sizeof dimen);
		h->dimen[15] = '\0';
		h->dimen_abbrev = abbrev;
	}
	for (uint32_t i = 0; i < nbins; i++) {
		uint16_t v = 0;
		take(c, &v, 2);	/* checked above: present */
		h->counts[i] += v;	/* at most 2^32 records of 2^16: no overflow */
	}
	return 0;
nomem:
	fail(err, errlen, "out of memory");
	return -1;
}

static int read_arc(struct cursor *c, struct gmon_profile *p, size_t *cap,
		    char *err, size_t errlen)
{
	size_t start = c->at - 1;
	struct gmon_arc a;
	uint32_t count;
	if (!take(c, &a.from_pc, 8) || !take(c, &a.self_pc, 8) || !take(c, &count, 4)) {
		fail(err, errlen, "arc record at offset %zu is cut short", start);
		return -1;
	}
	a.count = count;
	if (!grow(&p->arcs, cap, p->narcs, sizeof *p->arcs)) {
		fail(err, errlen, "out of memory");
		return -1;
	}
	p->arcs[p->narcs++] = a;
	return 0;
}

static int read_bb(struct cursor *c, struct gmon_profile *p, size_t *cap,
		   char *err, size_t errlen)
{
	size_t start = c->at - 1;
	uint32_t n;
	if (!take(c, &n, 4) || (c->size - c->at) / 16 < n) {
		fail(err, errlen, "basic-block record at offset %zu is cut short", start);
		return -1;
	}
	for (uint32_t i = 0; i < n; i++) {
		if (!grow(&p->bb, cap, p->nbb, sizeof *p->bb)) {
			fail(err, errlen, "out of memory");
			return -1;
		}
		take(c, &p->bb[p->nbb].pc, 8);
		take(c, &p->bb[p->nbb].count, 8);
		p->nbb++;
	}
	return 0;
}

int gmon_arc_order(const void *x, const void *y)
{
	const struct gmon_arc *a = x, *b = y;
	if (a->from_pc != b->from_pc)
		return a->from_pc < b->from_pc ? -1 : 1;
	if (a->self_pc != b->self_pc)
		return a->self_pc < b->self_pc ? -1 : 1;
	return 0;
}

/* Sort the arcs and sum the records of each (gprof sums them too). */
static void merge_arcs(struct gmon_profile *p)
{
	if (p->narcs == 0)
		return;
	qsort(p->arcs, p->narcs, sizeof *p->arcs, gmon_arc_order);
	size_t n = 0;
	for (size_t i = 1; i < p->narcs; i++) {
		if (gmon_arc_order(&p->arcs[n], &p->arcs[i]) == 0)
			p->arcs[n].count = sat_add(p->arcs[n].count, p->arcs[i].count);
		else
			p->arcs[++n] = p->arcs[i];
	}
	p->narcs = n + 1;
}

int gmon_read_buffer(const void *data, size_t size, struct gmon_profile *p,
		     char *err, size_t errlen)
{
	memset(p, 0, sizeof *p);
	struct cursor c = { data, size, 0 };
	char magic[4];
	uint32_t version;
	unsigned char spare[12];
	if (!take(&c, magic, 4) || memcmp(magic, GMON_MAGIC, 4) != 0) {
		fail(err, errlen, "not a gmon.out file (no \"gmon\" at the start)");
		return -1;
	}
	if (!take(&c, &version, 4) || !take(&c, spare, sizeof spare)) {
		fail(err, errlen, "gmon.out header is cut short");
		return -1;
	}
	if (version != GMON_VERSION) {
		fail(err, errlen, "gmon.out version %u, only version 1 is read", version);
		return -1;
	}
	size_t hist_cap = 0, arc_cap = 0, bb_cap = 0;
	while (c.at < c.size) {
		uint8_t tag;
		take(&c, &tag, 1);
		int r;
		switch (tag) {
		case GMON_TAG_TIME_HIST:
			r = read_hist(&c, p, &hist_cap, err, errlen);
			break;
		case GMON_TAG_CG_ARC:
			r = read_arc(&c, p, &arc_cap, err, errlen);
			break;
		case GMON_TAG_BB_COUNT:
			r = read_bb(&c, p, &bb_cap, err, errlen);
			break;
		default:
			fail(err, errlen, "unknown record tag %u at offset %zu", tag, c.at - 1);
			r = -1;
		}
		if (r != 0) {
			gmon_free(p);
			return -1;
		}
	}
	merge_arcs(p);
	return 0;
}

int gmon_read_file(const char *path, struct gmon_profile *p, char *err,
		   size_t errlen)
{
	memset(p, 0, sizeof *p);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fail(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	unsigned char *data = NULL;
	size_t size = 0, cap = 0;
	for (;;) {
		if (size == cap) {
			size_t want = cap ? cap * 2 : 65536;
			unsigned char *q = realloc(data, want);
			if (!q) {
				fail(err, errlen, "%s: out of memory", path);
				goto out;
			}
			data = q;
			cap = want;
		}
		ssize_t n = read(fd, data + size, cap - size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fail(err, errlen, "%s: %s", path, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		size += (size_t)n;
	}
	char why[200];
	if (gmon_read_buffer(data, size, p, why, sizeof why) != 0) {
		fail(err, errlen, "%s: %s", path, why);
		goto out;
	}
	free(data);
	close(fd);
	return 0;
out:
	free(data);
	close(fd);
	return -1;
}

int gmon_is_file(const char *path)
{
	char magic[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	int is = read(fd, magic, 4) == 4 && memcmp(magic, GMON_MAGIC, 4) == 0;
	close(fd);
	return is;
}
