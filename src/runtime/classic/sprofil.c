/*
 * sprofil.c - several histograms at once (glibc's <sys/profil.h>).
 *
 * Each region becomes one sink of the set; sink.c files a sample in the
 * first region that holds it, so the set is sorted by descending pr_off,
 * which makes the highest pr_off win as the interface says.  The overflow
 * bin (pr_off 0, pr_scale 2) is a region of its own kind that sink.c
 * consults only when no histogram holds the pc.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "../../../include/profil.h"
#include "../../common/bins.h"
#include "core/memcheck.h"
#include "core/sampler.h"

#define EXPORT __attribute__((visibility("default")))

static int by_offset_descending(const void *a, const void *b)
{
	const struct region *x = a, *y = b;
	return x->offset < y->offset ? 1 : x->offset > y->offset ? -1 : 0;
}

/* Check the arguments and build the sink set; NULL with errno if bad. */
static struct sink_set *regions_of(const struct prof *profp, int profcnt,
				   unsigned flags)
{
	uint32_t width = flags & PROF_UINT ? 4 : 2;
	struct sink_set *set = sinks_new((unsigned)profcnt);
	if (!set)
		return NULL;
	set->owner = OWNER_SPROFIL;
	unsigned n = 0, overflows = 0;
	for (int i = 0; i < profcnt; i++) {
		const struct prof *p = &profp[i];
		if (p->pr_scale > BINS_SCALE_ONE)
			goto invalid;
		if (p->pr_scale < 2 || p->pr_size < width)
			continue;	/* ignored, as the interface says */
		struct region *r = &set->regions[n];
		*r = (struct region){
			.offset = p->pr_off,
			.ncounters = p->pr_size / width,
			.scale = (uint32_t)p->pr_scale,
			.width = width,
			.base = p->pr_base,
			.kind = REGION_BINS,
		};
		if (p->pr_off == 0 && p->pr_scale == 2) {
			if (overflows++)
				goto invalid;	/* which one would count? */
			r->kind = REGION_OVERFLOW;
			r->ncounters = 1;
		}
		if ((uintptr_t)r->base % width != 0)
			goto invalid;
		if (!memory_writable(r->base, r->ncounters * width)) {
			free(set);
			errno = EFAULT;
			return NULL;
		}
		n++;
	}
	set->nregions = n;
	qsort(set->regions, n, sizeof set->regions[0], by_offset_descending);
	return set;
invalid:
	free(set);
	errno = EINVAL;
	return NULL;
}

EXPORT int sprofil(struct prof *profp, int profcnt, struct timeval *tvp,
		   unsigned int flags)
{
	if (profcnt < 0 || (flags & ~(unsigned)(PROF_UINT | PROF_FAST))) {
		errno = EINVAL;
		return -1;
	}
	if (profcnt == 0) {
		sampler_stop();
	} else {
		if (profp == NULL) {
			errno = EFAULT;
			return -1;
		}
		struct sink_set *set = regions_of(profp, profcnt, flags);
		if (!set || sampler_start(set) != 0)
			return -1;
	}
	if (tvp) {
		/* The period the sampler runs at, rounded to the microsecond. */
		uint64_t us = (sampler_period_ns() + 500) / 1000;
		tvp->tv_sec = (time_t)(us / 1000000);
		tvp->tv_usec = (suseconds_t)(us % 1000000);
	}
	return 0;
}
