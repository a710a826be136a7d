/*
 * stackfile.c - the extension page and stack table of profil run's file.
 *
 * stackfile_publish() runs in signal handlers (from preload_sampled and
 * _exit): it is async-signal-safe and lock-free, plain stores into a
 * page written before it was mapped.  The rest runs under preload.c's
 * lock, never in a handler.
 *
 * The tables are sparse in the file and in memory: a slot's page and a
 * frame's page are asked for (reserve.h) when first written, so the
 * default 65536 slots and 1M frames cost what the program's distinct
 * stacks use, not 10 MiB.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/env.h"
#include "core/stats.h"
#include "preload/stackfile.h"
#include "unwind/unwind.h"

#define SLOTS_DEFAULT 65536u
#define FRAMES_DEFAULT (1u << 20)

/* A whole number from min to max in variable name, else dflt (said). */
static uint64_t knob(const char *name, uint64_t min, uint64_t max, uint64_t dflt,
		     const char *range, const char *dflt_text)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return dflt;
	char *end;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 10);
	if (*v < '0' || *v > '9' || errno || *end || n < min || n > max) {
		env_complain(name, v, range, dflt_text);
		return dflt;
	}
	return n;
}

void stackfile_conf(unsigned depth, struct stackfile_conf *c)
{
#if defined(__x86_64__) || defined(__aarch64__)
	/* The walk keeps at most UNWIND_MAX_DEPTH frames. */
	c->depth = depth < UNWIND_MAX_DEPTH ? depth : UNWIND_MAX_DEPTH;
#else
	c->depth = 0;	/* the unwinder has no rules for this machine yet */
	(void)depth;
#endif
	c->slots = knob("PROFIL_RUN_STACK_SLOTS", 1, PROFILE_STACK_SLOTS_MAX, SLOTS_DEFAULT,
			"not a whole number from 1 to 16777216", "65536");
	while (c->slots & (c->slots - 1))	/* up to a power of two */
		c->slots += c->slots & -c->slots;
	c->frames = knob("PROFIL_RUN_STACK_FRAMES", 1, PROFILE_FRAMES_MAX, FRAMES_DEFAULT,
			 "not a whole number from 1 to 268435456", "1048576");
}

uint64_t stackfile_size(const struct stackfile_conf *c)
{
	return PROFILE_PAGE + (c->depth ? profile_stacks_size(c->slots)
					  + profile_frames_size(c->frames) : 0);
}

struct stackfile *stackfile_map(void *p, uint64_t at, const struct stackfile_conf *c)
{
	uint64_t size = stackfile_size(c);
	struct stackfile *sf = calloc(1, sizeof *sf);
	if (!sf)
		return NULL;
	if (reserve_init(&sf->reserve, p, size) != 0) {
		free(sf);
		errno = ENOMEM;
		return NULL;
	}
	sf->reserve.state[0] = RESERVE_HAD;	/* the page was written */
	sf->ext = p;
	sf->size = size;
	struct profile_ext *e = sf->ext;
	memset(e, 0, sizeof *e);
	e->size = size;
	if (c->depth) {
		e->stacks_at = at + PROFILE_PAGE;
		e->stack_slots = c->slots;
		e->frames_at = e->stacks_at + profile_stacks_size(c->slots);
		e->frames_cap = c->frames;
		e->max_depth = c->depth;
		struct stack_table *t = &sf->table;
		t->slots = (struct profile_stack *)((char *)p + PROFILE_PAGE);
		t->nslots = c->slots;
		t->frames = (uint64_t *)((char *)t->slots + profile_stacks_size(c->slots));
		t->frames_cap = c->frames;
		t->frames_used = &e->frames_used;
		t->max_depth = c->depth;
		t->reserve = &sf->reserve;
	}
	return sf;
}

void stackfile_publish(struct stackfile *sf, const uint64_t *lost_by, unsigned hz_asked,
		       unsigned hz)
{
	struct profile_ext *e = sf->ext;
	for (int i = 0; i < PROFILE_LOST_COUNT; i++)
		e->lost_by[i] = lost_by[i];
	e->lost_kinds = PROFILE_LOST_KINDS;
	e->hz_asked = hz_asked != hz ? hz_asked : 0;
	if (e->stack_slots) {
		e->stacks = atomic_load_explicit(&sf->table.stacks, memory_order_relaxed);
		e->stacks_unplaced = atomic_load_explicit(&sf->table.unplaced, memory_order_relaxed);
	}
	for (int i = 0; i < PROFILE_STOP_COUNT; i++)
		e->stop[i] = atomic_load_explicit(&stats.stack_stop[i], memory_order_relaxed);
	e->stack_copy = atomic_load_explicit(&stats.stack_copy, memory_order_relaxed);
}

void stackfile_free(struct stackfile *sf)
{
	if (!sf)
		return;
	munmap(sf->ext, sf->size);
	reserve_free(&sf->reserve);
	free(sf);
}
