/*
 * sink.c - counting samples into the program's histograms.
 *
 * sinks_count() and sinks_count_system() run in signal handlers: they
 * are async-signal-safe and lock-free (no malloc, no stdio, no locks).
 * A set with a thread table counts each sample into its thread's entry
 * on the same path (thread_table.c), with what the histogram took.
 *
 * Replacing the sink set uses two reader counters indexed by the parity
 * of an epoch, a small form of RCU: a handler announces itself on the
 * counter of the current epoch, checks that the epoch did not move, and
 * only then reads the set.  The writer publishes the new set, moves the
 * epoch, and waits for the old epoch's counter to drain; handlers are
 * short and never block, so the wait is a few microseconds.
 *
 * Each thread also counts its own places on the read side (thread-local):
 * a wait started in a frame that interrupted one of them (a program's
 * handler calling _exit, or profil(), on top of a sample being counted)
 * does not wait for those, which cannot leave before it returns.  The
 * exit path's wait is bounded as well: a handler of another thread may
 * have been interrupted by one that never returns.
 *
 * Sets are mapped, not allocated: profil() may be called from a signal
 * handler that interrupted malloc.
 */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "../../common/bins.h"
#include "../../format/profile.h"
#include "sinks/reserve.h"
#include "sinks/satadd.h"
#include "sinks/sink.h"
#include "core/stats.h"
#include "sinks/stack_table.h"
#include "sinks/thread_table.h"
#include "sinks/statemem.h"

static _Atomic(struct sink_set *) current;
static atomic_uint epoch;
static atomic_uint readers[2];
static _Atomic uint64_t faults;	/* samples lost in lose_faults sets */
/* This thread's places on the read side, by parity; changed only by the
   thread itself, and each nested frame undoes its own change. */
static __thread unsigned mine[2] __attribute__((tls_model("initial-exec")));

/*
 * The last set freed, kept for the next sinks_new that it fits: a
 * program that calls sprofil hundreds of times a second would otherwise
 * spend its time mapping, faulting in and unmapping pages.  Taken and
 * given with one exchange each: async-signal-safe.
 */
static _Atomic(struct sink_set *) spare;
static atomic_int outside_broken;	/* the outside table faulted: not used */

struct sink_set *sinks_new(unsigned n)
{
	size_t bytes = sizeof(struct sink_set) + n * sizeof(struct region);
	struct sink_set *set = atomic_exchange(&spare, NULL);
	if (set && set->bytes >= bytes) {
		size_t mapped = set->bytes;
		memset(set, 0, bytes);
		set->bytes = mapped;
	} else {
		if (set)
			munmap(set, set->bytes);
		/* Whole pages: what is mapped is what a later set may reuse. */
		size_t mapped = (bytes + 4095) & ~(size_t)4095;
		void *p = statemem_map(mapped, 0);
		if (p == MAP_FAILED) {
			errno = ENOMEM;
			return NULL;
		}
		set = p;
		set->bytes = mapped;
	}
	set->nregions = n;
	return set;
}

void sinks_free(struct sink_set *set)
{
	if (!set)
		return;
	struct sink_set *old = atomic_exchange(&spare, set);
	if (old)
		munmap(old, old->bytes);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Wait for the readers of the epoch before this call, but for this
   thread's own; with a limit (ns, 0 for none). */
static void quiesce(uint64_t limit)
{
	unsigned e = atomic_fetch_add(&epoch, 1) & 1;
	uint64_t start = 0;
	for (unsigned spins = 0; atomic_load(&readers[e]) > mine[e]; spins++) {
		if (limit && spins % 64 == 0) {
			uint64_t t = now_ns();
			if (!start)
				start = t;
			else if (t - start > limit)
				return;
		}
		sched_yield();
	}
}

void sinks_quiesce(void)
{
	quiesce(0);
}

void sinks_quiesce_exit(void)
{
	quiesce(100000000);	/* 100 ms */
}

void sinks_replace(struct sink_set *set)
{
	struct sink_set *old = atomic_exchange(&current, set);
	sinks_quiesce();
	sinks_free(old);
}

int sinks_installed(void)
{
	return atomic_load(&current) != NULL;
}

int sinks_owner(void)
{
	const struct sink_set *set = atomic_load(&current);
	return set ? (int)set->owner : -1;
}

uint64_t sinks_faults(void)
{
	return atomic_load(&faults);
}

void sinks_after_fork(void)
{
	atomic_store(&faults, 0);
	atomic_store(&outside_broken, 0);
	atomic_store(&readers[0], 0);
	atomic_store(&readers[1], 0);
	mine[0] = mine[1] = 0;
}

/* Add weight to counter index of r, and file the outcome; with a
   thread table, what was counted goes to who's entry too. */
static enum sink_result add_to(const struct sink_set *set, const struct region *r,
			       uint64_t index, uint32_t weight, struct thread_ref *who)
{
	void *counter = (char *)r->base + index * r->width;
	/* A page the file system refuses is never written: a fault there
	   would reach the program's own SIGBUS handler, if it has one. */
	int64_t added = reserve_pages(r->reserve, counter, r->width) < 0 ? -1
		: r->width == 4 ? satadd32(counter, weight)
		: satadd16(counter, weight);
	if (added < 0) {
		stats_lose(PROFILE_LOST_WRITE, weight);
		return SINK_FAULT;
	}
	stats_add(&stats.counted, (uint64_t)added);
	stats_add(&stats.saturated, weight - (uint64_t)added);
	if (set->threads && who)
		threadtab_count(set->threads, who, r->kind == REGION_BINS ? r->id : UINT32_MAX,
				index, (uint32_t)added);
	return SINK_OK;
}

/*
 * Store pc in the next weight free slots of r.  A slot index is claimed
 * with one atomic addition, so threads never share a slot; the index may
 * run past the end, and the samples that find no slot are saturated.
 */
static enum sink_result store_pcs(const struct sink_set *set, const struct region *r,
				  uintptr_t pc, uint32_t weight, struct thread_ref *who)
{
	uint64_t first = atomic_fetch_add(r->next, weight);
	uint64_t stored = 0;
	for (uint64_t i = first; i < r->ncounters && stored < weight; i++, stored++) {
		if (satstore64((uint64_t *)r->base + i, pc) < 0) {
			stats_add(&stats.counted, stored);
			stats_lose(PROFILE_LOST_WRITE, weight - stored);
			return SINK_FAULT;
		}
	}
	stats_add(&stats.counted, stored);
	stats_add(&stats.saturated, weight - stored);
	if (set->threads && who)
		threadtab_count(set->threads, who, UINT32_MAX, 0, (uint32_t)stored);
	return SINK_OK;
}

/*
 * Note n samples at pc, outside every region, in the set's outside table
 * (system: n of those already noted stand for kernel time).  A slot is
 * claimed with one compare-and-swap and never given back.  No room, or a
 * fault (the table is in a file a full disk can refuse pages to): the
 * samples stay outside at no pc kept, which is what a reader takes the
 * slots' shortfall for.  A page is asked for before it is first written
 * (reserve.h), so that a full disk is never a SIGBUS the program sees.
 */
static void keep_outside(const struct sink_set *set, uintptr_t pc, uint32_t n, int system)
{
	if (!pc || atomic_load_explicit(&outside_broken, memory_order_relaxed))
		return;
	uint64_t mask = set->noutside - 1, h = profile_pc_hash(pc, set->noutside);
	for (unsigned k = 0; k < PROFILE_PROBES && k < set->noutside; k++) {
		struct profile_pc *s = &set->outside[(h + k) & mask];
		uint64_t cur;
		if (system && reserve_untouched(set->outside_reserve, s))
			return;	/* never written: free, and no sample of pc's */
		if (reserve_pages(set->outside_reserve, s, sizeof *s) < 0)
			goto broken;	/* a page the file system refused */
		if (satload64(&s->key, &cur) < 0)
			goto broken;
		if (cur != pc) {
			if (cur || system)
				continue;
			int64_t r = satcas64(&s->key, 0, pc);
			if (r < 0)
				goto broken;
			if (r != 1 && (satload64(&s->key, &cur) < 0 || cur != pc))
				continue;
		}
		if (satadd32(system ? &s->system : &s->count, n) < 0)
			goto broken;
		return;
	}
	return;
broken:
	atomic_store_explicit(&outside_broken, 1, memory_order_relaxed);
}

/* in_region (if not NULL): set to 1 when the samples went to a region,
   to 0 when they were outside every one. */
static enum sink_result count_in(const struct sink_set *set, uintptr_t pc,
				 uint32_t weight, struct thread_ref *who, int *in_region)
{
	if (in_region)
		*in_region = 1;
	const struct region *overflow = NULL;
	for (unsigned i = 0; i < set->nregions; i++) {
		const struct region *r = &set->regions[i];
		uint64_t index;
		if (r->kind == REGION_PCS)
			return store_pcs(set, r, pc, weight, who);
		if (r->kind == REGION_SYSTEM)
			continue;
		if (r->kind == REGION_OVERFLOW)
			overflow = r;
		else if (bins_index(pc, r->offset, r->scale, r->ncounters, &index)) {
			enum sink_result res = add_to(set, r, index, weight, who);
			if (res == SINK_FAULT && set->lose_faults) {
				atomic_fetch_add_explicit(&faults, weight, memory_order_relaxed);
				res = SINK_OK;	/* lost; the other pages still count */
			}
			return res;
		}
	}
	if (overflow)
		return add_to(set, overflow, 0, weight, who);
	if (in_region)
		*in_region = 0;
	if (set->outside)
		keep_outside(set, pc, weight, 0);
	stats_add(&stats.outside, weight);
	return SINK_OK;
}

unsigned sinks_enter(void)
{
	for (;;) {
		unsigned e = atomic_load(&epoch);
		/* Our own count first: a frame that interrupts us between the
		   two must not wait for this one. */
		mine[e & 1]++;
		atomic_signal_fence(memory_order_seq_cst);
		atomic_fetch_add(&readers[e & 1], 1);
		if (atomic_load(&epoch) == e)
			return e;
		atomic_fetch_sub(&readers[e & 1], 1);
		atomic_signal_fence(memory_order_seq_cst);
		mine[e & 1]--;
	}
}

void sinks_leave(unsigned token)
{
	atomic_fetch_sub(&readers[token & 1], 1);
	atomic_signal_fence(memory_order_seq_cst);
	mine[token & 1]--;
}

enum sink_result sinks_count(uintptr_t pc, uint32_t weight, struct thread_ref *who)
{
	const struct sink_set *set = atomic_load(&current);
	return set ? count_in(set, pc, weight, who, NULL) : SINK_NONE;
}

enum sink_result sinks_count_stack(const uintptr_t *pcs, unsigned n, unsigned stop,
				   uint32_t weight, uint32_t system, struct thread_ref *who,
				   int *stored)
{
	*stored = 0;
	const struct sink_set *set = atomic_load(&current);
	if (!set)
		return SINK_NONE;
	int in_region;
	enum sink_result r = count_in(set, pcs[0], weight, who, &in_region);
	/* Only the samples counted in a histogram (profil(5): the slots
	   add up to what was counted); outside ones are at their pc alone. */
	if (r != SINK_OK || !set->stacks || !in_region)
		return r;
	int32_t entry = set->threads && who ? threadtab_entry(set->threads, who) : 0;
	stacktab_add(set->stacks, entry > 0 ? (uint32_t)entry : 0, pcs, n, stop, weight, system);
	*stored = 1;
	return r;
}

unsigned sinks_stack_depth(void)
{
	unsigned token = sinks_enter();
	const struct sink_set *set = atomic_load(&current);
	unsigned depth = set && set->stacks ? set->stacks->max_depth : 0;
	sinks_leave(token);
	return depth;
}

void sinks_count_system(uintptr_t pc, uint32_t system, struct thread_ref *who)
{
	const struct sink_set *set = atomic_load(&current);
	if (!set || !system)
		return;
	for (unsigned i = 0; i < set->nregions; i++) {
		const struct region *r = &set->regions[i];
		uint64_t index;
		if (r->kind != REGION_SYSTEM
		    || !bins_index(pc, r->offset, r->scale, r->ncounters, &index))
			continue;
		/* A fault here faulted the histogram too: nothing to add. */
		if (reserve_pages(r->reserve, (char *)r->base + index * r->width, r->width) < 0)
			return;
		if (r->width == 4)
			satadd32((uint32_t *)r->base + index, system);
		else
			satadd16((uint16_t *)r->base + index, system);
		if (set->threads && who)
			threadtab_count_system(set->threads, who, r->id, index, system);
		return;
	}
	if (set->outside)	/* an outside sample's, or a slot it never got */
		keep_outside(set, pc, system, 1);
}
