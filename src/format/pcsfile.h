/*
 * pcsfile.h - the pcsample file: what pcsample(3) stored, saved by
 * profil_pcsample_save(3) for profil report.  Writer (pcsfile.c, in the
 * runtime) and reader (pcsfile_read.c, in the command).  pcsample(5)
 * documents the format:
 *
 *	header, 48 bytes, little-endian:
 *	  char magic[8] "PCSAMPLE", u32 version 1, u32 hz,
 *	  u64 nsamples, u64 nobjects, u64 pid, u64 period_ns
 *	nobjects load-map records (loadmap.h)
 *	nsamples u64 pcs, in the order they were stored
 */
#ifndef PROFIL_PCSFILE_H
#define PROFIL_PCSFILE_H

#include <stddef.h>
#include <stdint.h>

#include "loadmap.h"

#define PCSFILE_MAGIC "PCSAMPLE"
#define PCSFILE_VERSION 1
#define PCSFILE_HEADER 48

/* Writer: the whole file into b.  Returns 0, or -1 if out of memory. */
int pcsfile_encode(struct bytes *b, const uintptr_t *samples, uint64_t n,
		   uint32_t hz, uint64_t period_ns, uint64_t pid);

struct pcs_file {
	uint32_t version, hz;
	uint64_t pid, period_ns;
	uint64_t nsamples, nobjects;
	uint64_t *samples;
	struct loadmap_entry *objects;
};

/* Does a file starting with these bytes look like a pcsample file? */
int pcsfile_is(const unsigned char *head, size_t len);

/*
 * Decode a whole file held in memory.  Returns 0, or -1 with *why saying
 * what is wrong (f then holds nothing to free).
 */
int pcsfile_parse(const unsigned char *data, size_t len, struct pcs_file *f,
		  const char **why);
void pcsfile_free(struct pcs_file *f);

#endif
