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
#include <string.h>
#include <sys/mman.h>

#include "../../../include/profil.h"
#include "../../common/bins.h"
#include "core/memcheck.h"
#include "core/sampler.h"
#include "sinks/statemem.h"

#define EXPORT __attribute__((visibility("default")))

/*
 * Highest offset first, and stable (the earlier of two regions at one
 * offset wins, as with glibc's qsort).  Not qsort, which may allocate:
 * sprofil may be called from a signal handler that interrupted malloc.
 * A bottom-up merge sort through scratch space mapped for it, as a
 * program may pass thousands of regions; an insertion sort for a few.
 */
static int sort_descending(struct region *r, size_t n)
{
	if (n <= 32) {	/* the usual few: an insertion sort, in place */
		for (size_t i = 1; i < n; i++)
			for (size_t j = i; j > 0 && r[j].offset > r[j - 1].offset; j--) {
				struct region t = r[j];
				r[j] = r[j - 1];
				r[j - 1] = t;
			}
		return 0;
	}
	size_t bytes = n * sizeof *r;
	struct region *tmp = statemem_map(bytes, 0);
	if (tmp == MAP_FAILED)
		return -1;
	struct region *from = r, *to = tmp;
	for (size_t width = 1; width < n; width *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * width) {
			size_t mid = lo + width < n ? lo + width : n;
			size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
			size_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi)
				to[k++] = from[j].offset > from[i].offset ? from[j++] : from[i++];
			while (i < mid)
				to[k++] = from[i++];
			while (j < hi)
				to[k++] = from[j++];
		}
		struct region *t = from;
		from = to;
		to = t;
	}
	if (from != r)
		memcpy(r, from, bytes);
	munmap(tmp, bytes);
	return 0;
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
			sinks_free(set);
			errno = EFAULT;
			return NULL;
		}
		n++;
	}
	set->nregions = n;
	if (sort_descending(set->regions, n) != 0) {
		sinks_free(set);
		errno = ENOMEM;
		return NULL;
	}
	return set;
invalid:
	sinks_free(set);
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
