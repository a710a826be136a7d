/*
 * merge_stacks.c - the call stacks of profil merge (merge_stacks.h).
 *
 * A stack's pcs are runtime addresses of its process.  Each one in a
 * segment of its input is moved to the same link-time address of the
 * output's segment for that object (whose load bias is the first
 * input's), so that the output's stacks resolve as the inputs' did; pcs
 * in no segment (JIT code) stay as they were.  Stacks equal after that,
 * of the same output thread, are summed: a file merged with itself has
 * each stack once, at twice its count.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../format/profile.h"
#include "cli.h"
#include "merge_stacks.h"
#include "stacks.h"

static uint64_t stack_hash(uint32_t entry, const uint64_t *pcs, size_t n)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325) ^ entry;
	for (size_t i = 0; i < n; i++)
		h = (h ^ pcs[i]) * UINT64_C(0x100000001b3) + (h >> 31);
	return h ? h : 1;	/* 0 is a free slot */
}

static size_t *lookup(struct mstacks *ms, uint64_t h, uint32_t entry, uint8_t stop,
		      const uint64_t *pcs, size_t n)
{
	size_t j = h & (ms->capindex - 1);
	for (; ms->index[j] != SIZE_MAX; j = (j + 1) & (ms->capindex - 1)) {
		const struct mstack *x = &ms->v[ms->index[j]];
		if (x->hash == h && x->entry == entry && x->stop == stop && x->depth == n
		    && memcmp(ms->pcs + x->first, pcs, n * sizeof *pcs) == 0)
			break;
	}
	return &ms->index[j];
}

static void grow_index(struct mstacks *ms)
{
	size_t cap = ms->capindex ? 2 * ms->capindex : 1024;
	free(ms->index);
	ms->index = xmalloc(cap * sizeof *ms->index);
	memset(ms->index, 0xff, cap * sizeof *ms->index);
	ms->capindex = cap;
	for (size_t i = 0; i < ms->n; i++) {
		size_t j = ms->v[i].hash & (cap - 1);
		while (ms->index[j] != SIZE_MAX)
			j = (j + 1) & (cap - 1);
		ms->index[j] = i;
	}
}

void mstacks_add(struct mstacks *ms, const struct profile *p, const uint32_t *entry_of,
		 const uint64_t *out_bias)
{
	const struct profile_ext *x = p->ext;
	if (!x)
		return;
	ms->ext_files++;
	for (uint32_t i = 0; i < x->lost_kinds; i++)	/* profile.c checked it */
		ms->lost_by[i] += x->lost_by[i];
	if (x->hz_asked > ms->hz_asked)
		ms->hz_asked = x->hz_asked;
	if (!x->stacks_at)
		return;
	ms->files++;
	ms->stacks += x->stacks;
	ms->unplaced += x->stacks_unplaced;
	for (int i = 0; i < PROFILE_STOP_COUNT; i++)
		ms->stop[i] += x->stop[i];
	if (x->max_depth > ms->max_depth)
		ms->max_depth = x->max_depth;
	if (x->stack_copy > ms->stack_copy)
		ms->stack_copy = x->stack_copy;
	uint64_t pcs[PROFILE_DEPTH_MAX];
	size_t hint = 0;
	/* A file its process did not complete has statistics up to half a
	   second older than its slots (as stacks.c reads it). */
	uint64_t slot_stacks = 0, slot_stop[PROFILE_STOP_COUNT] = { 0 };
	for (uint64_t k = 0; k < p->nstacks; k++) {
		const struct profile_stack *st = &p->stacks[k];
		const uint64_t *in = profile_stack_pcs(p, st);
		if (!in)
			continue;
		slot_stacks += st->count;
		if (st->stop < PROFILE_STOP_COUNT)
			slot_stop[st->stop] += st->count;
		uint32_t entry = entry_of[st->entry] == UINT32_MAX ? 0 : entry_of[st->entry];
		for (uint16_t d = 0; d < st->depth; d++) {
			size_t seg = stacks_segment_of(p, in[d], &hint);
			pcs[d] = seg == SIZE_MAX ? in[d] : in[d] - p->segs[seg].head->bias + out_bias[seg];
		}
		uint32_t system = st->system < st->count ? st->system : st->count;
		if (mstacks_put(ms, entry, pcs, st->depth, st->stop, st->count, system) != 0) {
			ms->unplaced += st->count;	/* no room in the output's table */
			ms->stacks -= ms->stacks >= st->count ? st->count : ms->stacks;
		}
	}
	if (p->header->state != PROFILE_COMPLETE && slot_stacks > x->stacks) {
		ms->stacks += slot_stacks - x->stacks;
		for (int i = 0; i < PROFILE_STOP_COUNT; i++)
			ms->stop[i] = ms->stop[i] - x->stop[i] + slot_stop[i];
	}
}

int mstacks_put(struct mstacks *ms, uint32_t entry, const uint64_t *pcs, uint16_t depth,
		uint8_t stop, uint64_t count, uint64_t system)
{
	if (2 * (ms->n + 1) > ms->capindex)
		grow_index(ms);
	uint64_t h = stack_hash(entry, pcs, depth);
	size_t *slot = lookup(ms, h, entry, stop, pcs, depth);
	if (*slot != SIZE_MAX) {
		ms->v[*slot].count += count;
		ms->v[*slot].system += system;
		return 0;
	}
	if (ms->npcs + depth > PROFILE_FRAMES_MAX || ms->n >= PROFILE_STACK_SLOTS_MAX / 2)
		return -1;
	if (ms->npcs + depth > ms->cappcs) {
		ms->cappcs = 2 * (ms->cappcs + depth);
		ms->pcs = xrealloc(ms->pcs, ms->cappcs * sizeof *ms->pcs);
	}
	if (ms->n == ms->cap) {
		ms->cap = ms->cap ? 2 * ms->cap : 256;
		ms->v = xrealloc(ms->v, ms->cap * sizeof *ms->v);
	}
	memcpy(ms->pcs + ms->npcs, pcs, depth * sizeof *pcs);
	ms->v[ms->n] = (struct mstack){ h, count, system, ms->npcs, entry, depth, stop };
	ms->npcs += depth;
	*slot = ms->n++;
	return 0;
}

/* Slots for n stacks: a power of two, at most half full. */
static uint64_t slots_for(size_t n)
{
	uint64_t s = 1;
	while (s < 2 * (uint64_t)n)
		s *= 2;
	return s;
}

uint64_t mstacks_size(const struct mstacks *ms)
{
	if (!ms->files)
		return ms->ext_files ? PROFILE_PAGE : 0;
	return PROFILE_PAGE + profile_stacks_size(slots_for(ms->n))
	       + profile_frames_size(ms->npcs);
}

int mstacks_write(int fd, const struct mstacks *ms, uint64_t at)
{
	if (!ms->ext_files)
		return 0;
	uint64_t nslots = ms->files ? slots_for(ms->n) : 0;
	struct profile_ext *x = calloc(1, sizeof *x);
	struct profile_stack *slots = calloc(nslots ? nslots : 1, sizeof *slots);
	if (!x || !slots) {
		error_line("out of memory");
		exit(2);
	}
	x->size = mstacks_size(ms);
	x->lost_kinds = PROFILE_LOST_KINDS;
	memcpy(x->lost_by, ms->lost_by, sizeof x->lost_by);
	x->hz_asked = ms->hz_asked;
	if (!ms->files) {	/* the page alone */
		int bad = pwrite(fd, x, sizeof *x, (off_t)at) != (ssize_t)sizeof *x;
		free(x);
		free(slots);
		return bad ? -1 : 0;
	}
	x->stacks_at = at + PROFILE_PAGE;
	x->stack_slots = nslots;
	x->frames_at = x->stacks_at + profile_stacks_size(nslots);
	x->frames_cap = x->frames_used = ms->npcs;
	x->max_depth = ms->max_depth;
	x->stack_copy = ms->stack_copy;
	x->stacks = ms->stacks;
	x->stacks_unplaced = ms->unplaced;
	memcpy(x->stop, ms->stop, sizeof x->stop);
	for (size_t i = 0; i < ms->n; i++) {
		const struct mstack *s = &ms->v[i];
		uint64_t j = s->hash & (nslots - 1);
		while (slots[j].hash)
			j = (j + 1) & (nslots - 1);
		slots[j] = (struct profile_stack){
			.hash = s->hash,
			.count = s->count > UINT32_MAX ? UINT32_MAX : (uint32_t)s->count,
			.frames = (uint32_t)s->first, .entry = s->entry, .depth = s->depth,
			.stop = s->stop, .ready = 1 };
		slots[j].system = s->system > slots[j].count ? slots[j].count : (uint32_t)s->system;
	}
	size_t bytes = nslots * sizeof *slots, pcbytes = ms->npcs * sizeof *ms->pcs;
	int bad = pwrite(fd, x, sizeof *x, (off_t)at) != (ssize_t)sizeof *x
		  || pwrite(fd, slots, bytes, (off_t)x->stacks_at) != (ssize_t)bytes
		  || (pcbytes && pwrite(fd, ms->pcs, pcbytes, (off_t)x->frames_at) != (ssize_t)pcbytes);
	free(x);
	free(slots);
	return bad ? -1 : 0;
}

void mstacks_free(struct mstacks *ms)
{
	free(ms->v);
	free(ms->pcs);
	free(ms->index);
	memset(ms, 0, sizeof *ms);
}
