/*
 * thread_table.h - counts per thread, in the thread table of a profile
 * file (profil(5), src/format/profile.h).
 *
 * A sink set may carry a thread table: every sample it counts into a
 * histogram is counted, by the same path, into the entry of the thread
 * it was taken in, and at the same counter in the table's pc pool.  The
 * table is bounded: a thread that finds no free entry goes to entry 0
 * ("other threads"), a counter that finds no pc slot is left to the
 * entry's total alone, and if the table cannot be written (a full disk
 * under the mapping) the samples are counted as unattributed.  So the
 * entries and unattributed always add up to what was counted.
 */
#ifndef PROFIL_THREAD_TABLE_H
#define PROFIL_THREAD_TABLE_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../format/profile.h"
#include "sinks/reserve.h"

struct thread_table {
	struct profile_thread *entries;	/* in the file, mapped shared */
	uint32_t nentries;
	struct profile_pc *pcs;
	uint64_t npcs;
	uint32_t owner;			/* the process's pid */
	atomic_uint_fast64_t unattributed;
	atomic_int broken;		/* a write faulted: no more tries */
	/* Its pages asked for before they are first written (reserve.h),
	   or NULL. */
	const struct page_reserve *reserve;
};

/* The thread a sample was taken of, and its entry once looked up. */
struct thread_ref {
	pid_t tid;
	int self;		/* taken in that thread (a signal handler) */
	int32_t entry;		/* -1 until looked up */
};

#define THREAD_REF(tid_, self_) ((struct thread_ref){ .tid = (tid_), .self = (self_), .entry = -1 })

/*
 * n samples of who counted at counter index of the file's segment seg;
 * with system, n of them for time in the kernel that were counted
 * before (sinks_count_system).  Async-signal-safe and lock-free.
 */
void threadtab_count(struct thread_table *t, struct thread_ref *who, uint32_t seg,
		     uint64_t index, uint32_t n);
void threadtab_count_system(struct thread_table *t, struct thread_ref *who, uint32_t seg,
			    uint64_t index, uint32_t n);

/* who's entry, claimed if need be: 0 ("other threads") if it found
   none, -1 if the table is broken.  Async-signal-safe, lock-free. */
int32_t threadtab_entry(struct thread_table *t, struct thread_ref *who);

/*
 * The calling thread ends (after its sampler is stopped): its name is
 * read a last time and its entry closed, so that a later thread of the
 * same tid gets one of its own.  Not in a signal handler.
 */
void threadtab_end(struct thread_table *t, pid_t tid);

/* Read the name of every thread of the table still running (at exit,
   before exec).  Not in a signal handler. */
void threadtab_name_all(struct thread_table *t);

#endif
