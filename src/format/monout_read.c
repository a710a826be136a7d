/*
 * monout_read.c - reading mon.out (see monout.h).  The footer is read
 * first and every size in it is checked against the file's own size
 * before anything else is read.
 */
#include <stdlib.h>
#include <string.h>

#include "../common/bins.h"
#include "monout.h"

int monout_is(const unsigned char *data, size_t len)
{
	return len >= MONOUT_FOOTER && memcmp(data + len - 8, MONOUT_MAGIC, 8) == 0;
}

void monout_free(struct monout *m)
{
	free(m->cnt);
	free(m->hist);
	loadmap_free(m->objects, m->nobjects);
	memset(m, 0, sizeof *m);
}

int monout_parse(const unsigned char *data, size_t len, struct monout *m, const char **why)
{
	memset(m, 0, sizeof *m);
	if (!monout_is(data, len)) {
		*why = "not a mon.out of libprofil (no PROFMON1 at its end)";
		return -1;
	}
	const unsigned char *f = data + len - MONOUT_FOOTER;
	uint64_t nobjects = get64(f), trailer = get64(f + 8);
	m->nhist = get64(f + 16);
	m->period_ns = get64(f + 24);
	m->scale = get32(f + 32);
	m->hz = get32(f + 36);
	if (get32(f + 40) != MONOUT_VERSION) {
		*why = "unknown version";
		return -1;
	}
	if (trailer < MONOUT_FOOTER || trailer > len - MONOUT_HDR) {
		*why = "trailer length does not fit the file";
		return -1;
	}
	size_t body = len - (size_t)trailer;	/* header, counts, histogram */
	m->lowpc = get64(data);
	m->highpc = get64(data + 8);
	m->nfunc = get64(data + 16);
	if (m->nfunc > (body - MONOUT_HDR) / MONOUT_CNT) {
		*why = "more call counts than the file holds";
		return -1;
	}
	size_t hist_bytes = body - MONOUT_HDR - (size_t)m->nfunc * MONOUT_CNT;
	if (hist_bytes % 2 != 0 || hist_bytes / 2 != m->nhist || m->nhist == 0) {
		*why = "histogram size disagrees with the footer";
		return -1;
	}
	if (m->highpc <= m->lowpc
	    || m->scale != bins_scale_for_range(m->lowpc, m->highpc, m->nhist)
	    || m->scale < 2) {
		*why = "histogram scale disagrees with its range";
		return -1;
	}
	const unsigned char *p = data + body, *end = data + len - MONOUT_FOOTER;
	m->objects = loadmap_decode(&p, end, nobjects, why);
	if (!m->objects)
		return -1;
	m->nobjects = nobjects;
	if (p != end) {
		monout_free(m);
		*why = "load map length disagrees with the footer";
		return -1;
	}
	m->cnt = calloc(m->nfunc ? m->nfunc : 1, sizeof *m->cnt);
	m->hist = malloc(m->nhist * 2);
	if (!m->cnt || !m->hist) {
		monout_free(m);
		*why = "out of memory";
		return -1;
	}
	const unsigned char *c = data + MONOUT_HDR;
	for (uint64_t i = 0; i < m->nfunc; i++, c += MONOUT_CNT) {
		m->cnt[i].pc = get64(c);
		m->cnt[i].count = (int64_t)get64(c + 8);
	}
	for (uint64_t i = 0; i < m->nhist; i++, c += 2)
		m->hist[i] = (uint16_t)(c[0] | c[1] << 8);
	return 0;
}
