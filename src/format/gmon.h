/*
 * gmon.h - GNU gprof's gmon.out format: writer and reader.
 *
 * A file is a 20-byte header ("gmon", version 1, 12 spare bytes)
 * followed by tagged records: histograms (tag 0), call-graph arcs
 * (tag 1) and basic-block counts (tag 2).  Integers are in the byte
 * order of the machine, addresses are 8 bytes: this module reads and
 * writes the files of 64-bit little-endian programs, as on x86-64.
 * gmon.out(5) documents the format as written and read here.
 *
 * The model (struct gmon_profile) holds what the records mean, not how
 * they were split: a histogram's counts are 64-bit sums over every
 * record of the same range, an arc's count the sum over its records.
 * The writer splits what a record cannot hold (histogram counts above
 * 65535, arc counts above 2^32-1) into several records that gprof sums,
 * so that reading what was written gives back the same model.
 *
 * The writing functions (gmon_out_*, gmon_put_*) allocate nothing and
 * use only write(2): they are async-signal-safe, and the runtime uses
 * them from crash handlers.  The reader allocates.
 */
#ifndef PROFIL_GMON_H
#define PROFIL_GMON_H

#include <stddef.h>
#include <stdint.h>

#define GMON_MAGIC "gmon"
#define GMON_VERSION 1

enum gmon_tag {
	GMON_TAG_TIME_HIST = 0,
	GMON_TAG_CG_ARC = 1,
	GMON_TAG_BB_COUNT = 2,
};

#define GMON_HEADER_SIZE 20
#define GMON_HIST_HEADER_SIZE 40	/* after the tag byte */
#define GMON_ARC_SIZE 20		/* after the tag byte */
#define GMON_HIST_MAX 65535u		/* what one histogram counter holds */
#define GMON_ARC_MAX 0xffffffffu	/* what one arc record holds */

/* One histogram: nbins counters of equal width over [low_pc, high_pc). */
struct gmon_hist {
	uint64_t low_pc, high_pc;
	uint64_t nbins;
	uint32_t rate;		/* prof_rate: samples per second */
	char dimen[16];		/* "seconds" (15 bytes in the file) */
	char dimen_abbrev;	/* 's' */
	uint64_t *counts;	/* nbins sums */
};

struct gmon_arc {
	uint64_t from_pc;	/* the call site (return address) */
	uint64_t self_pc;	/* in the callee, near its entry */
	uint64_t count;
};

struct gmon_bb {
	uint64_t pc;
	uint64_t count;
};

struct gmon_profile {
	size_t nhist;
	struct gmon_hist *hist;
	size_t narcs;
	struct gmon_arc *arcs;	/* reader: sorted by (from_pc, self_pc), unique */
	size_t nbb;
	struct gmon_bb *bb;
};

/* ---- writing: async-signal-safe, no allocation ---------------------- */

/* A buffered writer to a file descriptor. */
struct gmon_out {
	int fd;
	int error;		/* errno of the first failure, else 0 */
	uint64_t written;	/* bytes written so far */
	size_t used;
	unsigned char buf[8192];
};

void gmon_out_init(struct gmon_out *out, int fd);
/* Flush the buffer; 0, or -1 with errno (the first error of the run). */
int gmon_out_flush(struct gmon_out *out);

void gmon_put_header(struct gmon_out *out);

/*
 * The histogram over [low_pc, high_pc) with nbins counters, counts given
 * as nbins integers of width bytes (4 or 8), written as as many records
 * as the largest count needs (at least one).
 */
void gmon_put_hist(struct gmon_out *out, uint64_t low_pc, uint64_t high_pc,
		   uint64_t nbins, uint32_t rate, const char *dimen,
		   char dimen_abbrev, const void *counts, unsigned width);

/* One arc; a count above GMON_ARC_MAX takes several records. Nothing for 0. */
void gmon_put_arc(struct gmon_out *out, uint64_t from_pc, uint64_t self_pc,
		  uint64_t count);

void gmon_put_bb(struct gmon_out *out, const struct gmon_bb *bb, size_t n);

/* Write a whole profile to fd: 0, or -1 with errno. */
int gmon_write(int fd, const struct gmon_profile *p);

/* ---- reading ----------------------------------------------------------- */

/*
 * Read a gmon.out image of size bytes into *p.  On error, returns -1 and
 * puts one line (without the file name) in err; *p is left empty.
 * Never reads past size, whatever the bytes say.
 */
int gmon_read_buffer(const void *data, size_t size, struct gmon_profile *p,
		     char *err, size_t errlen);

/*
 * Read the file at path.  On error returns -1 with err holding
 * "PATH: what is wrong".
 */
int gmon_read_file(const char *path, struct gmon_profile *p, char *err,
		   size_t errlen);

void gmon_free(struct gmon_profile *p);

/* qsort order of struct gmon_arc: by from_pc, then self_pc (the reader's;
   gprof breaks ties between equal arcs by the order of the records). */
int gmon_arc_order(const void *a, const void *b);

/* Whether the file at path starts as a gmon.out does ("gmon"). */
int gmon_is_file(const char *path);

#endif
