/*
 * stackfile.h - the extension page and stack table of profil run's file
 * (profil(5) version 4): sized, laid out and published here, so that
 * preload.c only says where in the file they go.
 */
#ifndef PROFIL_STACKFILE_H
#define PROFIL_STACKFILE_H

#include <stdint.h>

#include "../../format/profile.h"
#include "sinks/reserve.h"
#include "sinks/stack_table.h"

/* Sizes, from PROFIL_RUN_STACK_SLOTS and PROFIL_RUN_STACK_FRAMES. */
struct stackfile_conf {
	unsigned depth;		/* frames a stack keeps; 0: no stacks */
	uint64_t slots;		/* a power of two */
	uint64_t frames;
};

struct stackfile {
	struct profile_ext *ext;	/* the page, mapped shared */
	uint64_t size;			/* bytes mapped: the page and the tables */
	struct page_reserve reserve;
	struct stack_table table;
};

/* The sizes for a session whose stacks are depth frames deep (0: off). */
void stackfile_conf(unsigned depth, struct stackfile_conf *c);

/* Bytes the page and its tables take in the file. */
uint64_t stackfile_size(const struct stackfile_conf *c);

/*
 * Lay out for c the page at p, byte at of the file, mapped shared by the
 * caller (written already, the rest of stackfile_size bytes sparse).
 * Returns a new stackfile, or NULL (errno).  Not in a signal handler.
 */
struct stackfile *stackfile_map(void *p, uint64_t at, const struct stackfile_conf *c);

/* Copy the counts into the page, with lost by cause (lost_by, as the
   header's lost was made from them) and the rates asked and used.
   Async-signal-safe: stores only. */
void stackfile_publish(struct stackfile *sf, const uint64_t *lost_by, unsigned hz_asked,
		       unsigned hz);

/* Unmap and free (or NULL): only when no sink set points at it. */
void stackfile_free(struct stackfile *sf);

#endif
