/*
 * gmon.c - writing gmon.out (see gmon.h and gmon.out(5)).
 *
 * Async-signal-safe: no allocation, no stdio, no locks; output goes
 * through a buffer on the caller's stack and write(2).  The runtime
 * writes its profile with these functions from crash handlers.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "gmon.h"

void gmon_out_init(struct gmon_out *out, int fd)
{
	out->fd = fd;
	out->error = 0;
	out->written = 0;
	out->used = 0;
}

int gmon_out_flush(struct gmon_out *out)
{
	size_t done = 0;
	while (!out->error && done < out->used) {
		ssize_t n = write(out->fd, out->buf + done, out->used - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			out->error = n < 0 ? errno : EIO;
		else
			done += (size_t)n;
	}
	out->written += done;
	out->used = 0;
	if (out->error) {
		errno = out->error;
		return -1;
	}
	return 0;
}

static void put(struct gmon_out *out, const void *p, size_t n)
{
	const unsigned char *s = p;
	while (n > 0) {
		if (out->used == sizeof out->buf && gmon_out_flush(out) != 0)
			return;
		size_t room = sizeof out->buf - out->used;
		size_t k = n < room ? n : room;
		memcpy(out->buf + out->used, s, k);
		out->used += k;
		s += k;
		n -= k;
	}
}

/* Integers in the machine's byte order, as gprof reads them. */
static void put_u8(struct gmon_out *out, uint8_t v) { put(out, &v, 1); }
static void put_u16(struct gmon_out *out, uint16_t v) { put(out, &v, 2); }
static void put_u32(struct gmon_out *out, uint32_t v) { put(out, &v, 4); }
static void put_u64(struct gmon_out *out, uint64_t v) { put(out, &v, 8); }

void gmon_put_header(struct gmon_out *out)
{
	unsigned char spare[12] = { 0 };
	put(out, GMON_MAGIC, 4);
	put_u32(out, GMON_VERSION);
	put(out, spare, sizeof spare);
}

static uint64_t count_at(const void *counts, unsigned width, uint64_t i)
{
	if (width == 8)
		return __atomic_load_n((const uint64_t *)counts + i, __ATOMIC_RELAXED);
	return __atomic_load_n((const uint32_t *)counts + i, __ATOMIC_RELAXED);
}

void gmon_put_hist(struct gmon_out *out, uint64_t low_pc, uint64_t high_pc,
		   uint64_t nbins, uint32_t rate, const char *dimen,
		   char dimen_abbrev, const void *counts, unsigned width)
{
	/* Counters may still be counting (a snapshot of a live profile):
	   the number of records is settled once, from one pass. */
	uint64_t max = 0;
	for (uint64_t i = 0; i < nbins; i++) {
		uint64_t c = count_at(counts, width, i);
		if (c > max)
			max = c;
	}
	uint64_t records = max ? (max + GMON_HIST_MAX - 1) / GMON_HIST_MAX : 1;
	char dim[15] = { 0 };
	for (size_t i = 0; dimen && dimen[i] && i < sizeof dim; i++)
		dim[i] = dimen[i];
	for (uint64_t r = 0; r < records; r++) {
		put_u8(out, GMON_TAG_TIME_HIST);
		put_u64(out, low_pc);
		put_u64(out, high_pc);
		put_u32(out, (uint32_t)nbins);
		put_u32(out, rate);
		put(out, dim, sizeof dim);
		put_u8(out, (uint8_t)dimen_abbrev);
		/* Record r holds the part of each count above r * 65535. */
		uint64_t floor = r * GMON_HIST_MAX;
		for (uint64_t i = 0; i < nbins; i++) {
			uint64_t c = count_at(counts, width, i);
			if (c > max)	/* grew since the first pass */
				c = max;
			c = c > floor ? c - floor : 0;
			put_u16(out, (uint16_t)(c > GMON_HIST_MAX ? GMON_HIST_MAX : c));
		}
	}
}

void gmon_put_arc(struct gmon_out *out, uint64_t from_pc, uint64_t self_pc,
		  uint64_t count)
{
	while (count > 0) {
		uint32_t part = count > GMON_ARC_MAX ? GMON_ARC_MAX : (uint32_t)count;
		put_u8(out, GMON_TAG_CG_ARC);
		put_u64(out, from_pc);
		put_u64(out, self_pc);
		put_u32(out, part);
		count -= part;
	}
}

void gmon_put_bb(struct gmon_out *out, const struct gmon_bb *bb, size_t n)
{
	while (n > 0) {
		uint32_t part = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
		put_u8(out, GMON_TAG_BB_COUNT);
		put_u32(out, part);
		for (uint32_t i = 0; i < part; i++) {
			put_u64(out, bb[i].pc);
			put_u64(out, bb[i].count);
		}
		bb += part;
		n -= part;
	}
}

int gmon_write(int fd, const struct gmon_profile *p)
{
	for (size_t i = 0; i < p->nhist; i++)
		if (p->hist[i].nbins > UINT32_MAX) {	/* hist_size is 32 bits */
			errno = EOVERFLOW;
			return -1;
		}
	struct gmon_out out;
	gmon_out_init(&out, fd);
	gmon_put_header(&out);
	for (size_t i = 0; i < p->nhist; i++) {
		const struct gmon_hist *h = &p->hist[i];
		gmon_put_hist(&out, h->low_pc, h->high_pc, h->nbins, h->rate,
			      h->dimen, h->dimen_abbrev, h->counts, 8);
	}
	for (size_t i = 0; i < p->narcs; i++)
		gmon_put_arc(&out, p->arcs[i].from_pc, p->arcs[i].self_pc,
			     p->arcs[i].count);
	if (p->nbb)
		gmon_put_bb(&out, p->bb, p->nbb);
	return gmon_out_flush(&out);
}
