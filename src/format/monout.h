/*
 * monout.h - mon.out, the file monitor(3) writes: writer (monout.c, in
 * the runtime) and reader (monout_read.c, in the command).  mon.out(5)
 * documents it.  The file starts as Solaris's does, with the buffer the
 * program gave monitor() as it stands (on LP64, little-endian):
 *
 *	struct hdr { u64 lpc, hpc, nfns; }		24 bytes
 *	struct cnt { u64 fnpc; i64 mcnt; } [nfns]	16 bytes each
 *	u16 histogram[nhist]
 *
 * and ends with what a reader needs to place the histogram exactly and
 * resolve its addresses, found from the end of the file:
 *
 *	nobjects load-map records (loadmap.h)
 *	footer, 56 bytes: u64 nobjects, u64 trailer_len (the records and
 *	the footer), u64 nhist, u64 period_ns, u32 scale, u32 hz,
 *	u32 version 1, u32 0, char magic[8] "PROFMON1"
 *
 * The histogram maps pc to counter ((pc - lpc) / 2) * scale / 65536;
 * scale is bins_scale_for_range(lpc, hpc, nhist), which a reader checks.
 */
#ifndef PROFIL_MONOUT_H
#define PROFIL_MONOUT_H

#include <stddef.h>
#include <stdint.h>

#include "loadmap.h"

#define MONOUT_MAGIC "PROFMON1"
#define MONOUT_VERSION 1
#define MONOUT_HDR 24
#define MONOUT_CNT 16
#define MONOUT_FOOTER 56

/* Writer: the buffer as it stands, then the trailer, into b. */
int monout_encode(struct bytes *b, const void *buffer, size_t bytes, uint64_t nhist,
		  uint32_t scale, uint32_t hz, uint64_t period_ns);

struct monout_cnt {
	uint64_t pc;
	int64_t count;
};

struct monout {
	uint64_t lowpc, highpc, nfunc, nhist;
	uint32_t scale, hz;
	uint64_t period_ns;
	struct monout_cnt *cnt;
	uint16_t *hist;
	uint64_t nobjects;
	struct loadmap_entry *objects;
};

/* Does a whole file held in memory end like a mon.out of this project? */
int monout_is(const unsigned char *data, size_t len);

/* Decode a whole file; -1 with *why if it is not a sound mon.out. */
int monout_parse(const unsigned char *data, size_t len, struct monout *m, const char **why);
void monout_free(struct monout *m);

#endif
