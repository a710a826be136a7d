/*
 * gmon_arcs.h - call arcs counted by mcount, one table per thread.
 *
 * Each thread counts into a table of its own, so that mcount takes no
 * lock and shares no cache line with other threads (OpenBSD's idea);
 * the writer sums the tables.  Tables are never freed: a thread that
 * ends gives its table, counts and all, to the next thread that needs
 * one, since only the sums matter.
 */
#ifndef PROFIL_GMON_ARCS_H
#define PROFIL_GMON_ARCS_H

#include <stdint.h>

/* Called by the mcount stubs (mcount_*.S). */
int gmon_arc_hit(uintptr_t from, uintptr_t self);
void gmon_arc_new(uintptr_t from, uintptr_t self);

/* Start counting arcs, sized for a text of text_size bytes; stop. */
void gmon_arcs_on(uint64_t text_size);
void gmon_arcs_off(void);

/* The calling thread ends: its table goes to the next thread. */
void gmon_arcs_thread_end(void);

/* In a fork child: every count back to zero, the other threads' tables free. */
void gmon_arcs_after_fork(void);

/*
 * Call fn for every arc of every table (an arc counted by several
 * threads is visited once per table), with counts as they are now.
 * Async-signal-safe.
 */
void gmon_arcs_each(void (*fn)(void *arg, uintptr_t from, uintptr_t self,
			       uint64_t count), void *arg);

/* An upper bound of the arcs gmon_arcs_each() would visit now. */
uint64_t gmon_arcs_count(void);

/* Arcs that could not be counted (no memory for a table or an arc). */
uint64_t gmon_arcs_lost(void);

#endif
