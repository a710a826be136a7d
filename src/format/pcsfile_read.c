/*
 * pcsfile_read.c - reading a pcsample file (see pcsfile.h).  Sizes are
 * checked against the file before anything is allocated or read, so a
 * truncated or hostile file is refused with a reason.
 */
#include <stdlib.h>
#include <string.h>

#include "pcsfile.h"

int pcsfile_is(const unsigned char *head, size_t len)
{
	return len >= 8 && memcmp(head, PCSFILE_MAGIC, 8) == 0;
}

void pcsfile_free(struct pcs_file *f)
{
	free(f->samples);
	loadmap_free(f->objects, f->nobjects);
	memset(f, 0, sizeof *f);
}

int pcsfile_parse(const unsigned char *data, size_t len, struct pcs_file *f,
		  const char **why)
{
	memset(f, 0, sizeof *f);
	if (!pcsfile_is(data, len)) {
		*why = "not a pcsample file (no PCSAMPLE magic)";
		return -1;
	}
	if (len < PCSFILE_HEADER) {
		*why = "truncated header";
		return -1;
	}
	f->version = get32(data + 8);
	f->hz = get32(data + 12);
	f->nsamples = get64(data + 16);
	uint64_t nobjects = get64(data + 24);
	f->pid = get64(data + 32);
	f->period_ns = get64(data + 40);
	if (f->version != PCSFILE_VERSION) {
		*why = "unknown version";
		return -1;
	}
	const unsigned char *p = data + PCSFILE_HEADER, *end = data + len;
	struct loadmap_entry *objects = loadmap_decode(&p, end, nobjects, why);
	if (!objects)
		return -1;
	if (f->nsamples != (uint64_t)(end - p) / 8 || (end - p) % 8 != 0) {
		loadmap_free(objects, nobjects);
		*why = f->nsamples > (uint64_t)(end - p) / 8 ? "truncated samples"
			: "data after the samples";
		return -1;
	}
	f->samples = malloc(f->nsamples ? f->nsamples * 8 : 1);
	if (!f->samples) {
		loadmap_free(objects, nobjects);
		*why = "out of memory";
		return -1;
	}
	for (uint64_t i = 0; i < f->nsamples; i++)
		f->samples[i] = get64(p + 8 * i);
	f->objects = objects;
	f->nobjects = nobjects;
	return 0;
}
