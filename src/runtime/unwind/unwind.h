/*
 * unwind.h - walk a thread's stack from (ip, sp, bp[, lr]) with the
 * tables of table.h.  Async-signal-safe and lock-free.
 */
#ifndef PROFIL_UNWIND_H
#define PROFIL_UNWIND_H

#include <stdint.h>

enum { UNWIND_MAX_DEPTH = 128 };

enum unwind_stop {
	UNWIND_COMPLETE = 0,	/* reached a frame whose return address is undefined */
	UNWIND_NO_OBJECT,	/* a pc in no object with tables (JIT code, garbage) */
	UNWIND_NO_CFI,		/* an object with no usable rule for the pc */
	UNWIND_BAD_READ,	/* a read outside the bounds, or one that faulted */
	UNWIND_DEPTH,		/* more frames than asked for: the innermost are kept */
	UNWIND_CFA_NOT_INCREASING,
	UNWIND_STOP_COUNT
};

/*
 * bp is the frame pointer: rbp on x86-64, x29 on arm64.  lr is arm64's
 * x30, where a leaf's return address stays (0 on x86-64, where a call
 * pushes it).
 */
struct unwind_regs {
	uintptr_t ip, sp, bp, lr;
};

/*
 * Where the walk reads the stack: [lo, hi) bounds every read.  With copy
 * NULL the reads go to live memory through satload64 (a fault returns an
 * error, never reaches the program; fault_install() must have run);
 * with copy set, memory at lo is copy[0], as in a perf sample's stack
 * copy, and nothing outside it is read.
 */
struct unwind_mem {
	uintptr_t lo, hi;
	const unsigned char *copy;
};

/*
 * Fill pcs[0..max) with the sampled pc and then each return address
 * outward; returns how many, and why the walk stopped in *stop (also
 * counted, see unwind_stop_counts).  max is at most UNWIND_MAX_DEPTH.
 */
int unwind_walk(const struct unwind_regs *regs, const struct unwind_mem *mem, uintptr_t *pcs,
		int max, enum unwind_stop *stop);

/*
 * The same walk with the tables of set (table.h) instead of the loaded
 * objects': profil run -p walks the copies of another process's stacks
 * with tables it built from that process's objects.  The caller keeps
 * set alive for the walk.
 */
struct unwind_set;
int unwind_walk_in(const struct unwind_set *set, const struct unwind_regs *regs,
		   const struct unwind_mem *mem, uintptr_t *pcs, int max, enum unwind_stop *stop);

/* The registers of a signal handler's ucontext; -1 on an unsupported machine. */
int unwind_regs_from_context(const void *context, struct unwind_regs *regs);

/* How many walks stopped for each reason since the start. */
void unwind_stop_counts(uint64_t counts[UNWIND_STOP_COUNT]);

#endif
