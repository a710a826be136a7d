/*
 * sink.h - the only code that touches counters.
 *
 * A sink set is the list of histograms samples go to (one for profil(),
 * several for sprofil()).  The sampler hands every sample to
 * sinks_count(), which files it in exactly one statistic.  Sink sets are
 * replaced by sinks_replace(), which returns only when no signal handler
 * can still be counting into the old set, so that a buffer the caller has
 * replaced or turned off is never written again.
 */
#ifndef PROFIL_SINK_H
#define PROFIL_SINK_H

#include <stddef.h>
#include <stdint.h>

enum region_kind {
	REGION_BINS,		/* a histogram: counter bins_index(pc) */
	REGION_OVERFLOW,	/* one counter for the pcs no histogram holds */
	REGION_PCS,		/* raw pcs, stored in order until full */
	REGION_SYSTEM		/* like REGION_BINS, but only the samples that
				   stand for kernel time (sinks_count_system) */
};

struct region {
	uint64_t offset;	/* pc of the first counter */
	uint64_t ncounters;	/* counters, or slots of a REGION_PCS */
	uint32_t scale;		/* 2 .. 0x10000 */
	uint32_t width;		/* bytes per counter: 2 or 4 (8 for pcs) */
	void *base;		/* the program's counters */
	enum region_kind kind;
	_Atomic uint64_t *next;	/* REGION_PCS: the next free slot; it
				   outlives the set (pcsample reads it) */
	uint32_t id;		/* with a thread table: the profile file's
				   segment the counters are in */
	/* Counters in a file mapping: each page asked for before it is
	   first written (reserve.h), or NULL.  Not owned. */
	const struct page_reserve *reserve;
};

/* Which call installed a set, so that each call stops only its own. */
enum sink_owner { OWNER_PROFIL, OWNER_SPROFIL, OWNER_PCSAMPLE, OWNER_MONITOR };

struct thread_table;
struct stack_table;
struct page_reserve;
struct thread_ref;
struct profile_pc;

struct sink_set {
	unsigned nregions;
	size_t bytes;		/* mapped for it, whole pages (sinks_new) */
	enum sink_owner owner;
	int lose_faults;	/* a fault loses the sample, no more: counters
				   in a file whose pages a full file system
				   may refuse one by one (profil run) */
	/* Counts per thread as well (thread_table.h), or NULL; not owned:
	   it outlives the set. */
	struct thread_table *threads;
	/* Where the samples no region holds were, or NULL: noutside slots
	   (a power of two) keyed by pc, in profil run's file (profil(5)'s
	   outside table); not owned. */
	struct profile_pc *outside;
	uint64_t noutside;
	const struct page_reserve *outside_reserve;	/* its pages (reserve.h) */
	/* Where the samples' call stacks go (stack_table.h), or NULL: no
	   stacks.  Not owned: it outlives the set. */
	struct stack_table *stacks;
	struct region regions[];	/* histograms highest offset first */
};

/* A new set with room for n regions, zeroed, or NULL (errno ENOMEM).
   No malloc: async-signal-safe (profil() may be called from a handler). */
struct sink_set *sinks_new(unsigned n);

/* Release a set that was never installed (or NULL). */
void sinks_free(struct sink_set *set);

/*
 * Install set (NULL for none), wait until no handler uses the previous
 * one, and free it.  Called with the sampler's lock held.
 */
void sinks_replace(struct sink_set *set);

/* True if a sink set is installed. */
int sinks_installed(void);

/* The owner of the installed set, or -1 if none (under the sampler's lock). */
int sinks_owner(void);

/*
 * The read side, for signal handlers: sinks_count() and anything that
 * must not outlive the session it belongs to run between sinks_enter()
 * and sinks_leave().  Async-signal-safe and lock-free.
 */
unsigned sinks_enter(void);
void sinks_leave(unsigned token);

/* Wait until every handler that entered before this call has left, but
   for those of the calling thread (a frame it interrupted cannot leave
   before it returns). */
void sinks_quiesce(void);

/* The same on an exit path: waits at most 100 ms, since a handler of
   another thread may have been interrupted by one that never returns.
   Async-signal-safe and lock-free. */
void sinks_quiesce_exit(void);

enum sink_result { SINK_OK, SINK_FAULT, SINK_NONE };

/*
 * Count weight samples at pc, taken of thread who (NULL: unknown; only
 * for a set without a thread table); call between sinks_enter() and
 * sinks_leave().  Async-signal-safe and lock-free.
 * SINK_FAULT means a counter was not writable: the samples are counted
 * as lost and the caller should turn profiling off.  SINK_NONE means no
 * set is installed (profiling is being turned off): nothing was taken.
 */
enum sink_result sinks_count(uintptr_t pc, uint32_t weight, struct thread_ref *who);

/*
 * sinks_count(pcs[0], weight, who), and if it counted the samples in a
 * histogram and the set has a stack table, the stack pcs[0..n) (innermost first, the walk
 * ended for reason stop, enum profile_stop) stored there with system of
 * them for kernel time; *stored says whether it was.  Call between
 * sinks_enter() and sinks_leave().  Async-signal-safe and lock-free.
 */
enum sink_result sinks_count_stack(const uintptr_t *pcs, unsigned n, unsigned stop,
				   uint32_t weight, uint32_t system, struct thread_ref *who,
				   int *stored);

/* The depth of the installed set's stack table: 0 if it has none. */
unsigned sinks_stack_depth(void);

/* Samples lost to faults in a set with lose_faults, since the start. */
uint64_t sinks_faults(void);

/*
 * Of weight samples sinks_count() has just counted at pc, system stand
 * for kernel time: add them to the REGION_SYSTEM region that holds pc, if
 * any.  Touches no statistic: the samples are already filed.  Call
 * between sinks_enter() and sinks_leave().  Async-signal-safe, lock-free.
 */
void sinks_count_system(uintptr_t pc, uint32_t system, struct thread_ref *who);

/* In the child after fork(): no handler of the parent is running here. */
void sinks_after_fork(void);

#endif
