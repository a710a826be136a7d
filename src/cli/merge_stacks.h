/*
 * merge_stacks.h - the call stacks of profil merge (merge_stacks.c): the
 * stack tables of the inputs summed into the output's (profil(5)).
 */
#ifndef PROFIL_CLI_MERGE_STACKS_H
#define PROFIL_CLI_MERGE_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "../format/profile.h"

struct mstack {
	uint64_t hash;
	uint64_t count, system;
	size_t first;		/* its pcs in mstacks.pcs */
	uint32_t entry;		/* the output's thread entry */
	uint16_t depth;
	uint8_t stop;
};

struct mstacks {
	struct mstack *v;
	size_t n, cap;
	uint64_t *pcs;
	size_t npcs, cappcs;
	size_t *index;		/* of v by hash, SIZE_MAX: empty */
	size_t capindex;
	unsigned files;		/* inputs with stacks */
	uint64_t stacks, unplaced, stop[PROFILE_STOP_COUNT];
	uint32_t max_depth, stack_copy;
	/* Inputs with an extension page, their lost by cause (of those
	   that break it down) and the highest rate asked above the one used. */
	unsigned ext_files;
	uint64_t lost_by[PROFILE_LOST_COUNT];
	uint32_t hz_asked;
};

/*
 * The stacks of input p: its thread entry e is the output's entry_of[e]
 * (UINT32_MAX: none, so "other threads"), its segment i the output's
 * whose load bias is out_bias[i].
 */
void mstacks_add(struct mstacks *ms, const struct profile *p, const uint32_t *entry_of,
		 const uint64_t *out_bias);

/*
 * One stack of count samples (system of them in the kernel) of the
 * output's thread entry, summed into an equal one: 0, or -1 when the
 * output's table has no room for it (the caller counts it unplaced).
 */
int mstacks_put(struct mstacks *ms, uint32_t entry, const uint64_t *pcs, uint16_t depth,
		uint8_t stop, uint64_t count, uint64_t system);

/* Bytes of the extension page and its tables (0: no input had an
   extension page), and writing them at byte at: 0, or -1 with errno. */
uint64_t mstacks_size(const struct mstacks *ms);
int mstacks_write(int fd, const struct mstacks *ms, uint64_t at);
void mstacks_free(struct mstacks *ms);

#endif
