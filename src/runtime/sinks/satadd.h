/*
 * satadd.h - saturating, atomic, fault-tolerant counter increments.
 *
 * A profil buffer belongs to the program, which may unmap it or make it
 * read-only at any time.  The kernel's profil survives that by counting
 * with a fault-checked copy; here the increment is a small assembly
 * routine whose faulting instructions are listed, like a kernel exception
 * table, so that the SIGSEGV/SIGBUS handler of fault.c can resume it at
 * its fixup label, which returns -1.  Nothing on the normal path costs
 * more than a lock cmpxchg.
 *
 * Async-signal-safe and lock-free.
 */
#ifndef PROFIL_SATADD_H
#define PROFIL_SATADD_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Add w to *counter, stopping at the type's maximum.  Returns how much
 * was added (0..w), or -1 if the counter is not writable memory.
 */
int64_t satadd16(uint16_t *counter, uint32_t w);
int64_t satadd32(uint32_t *counter, uint32_t w);

/*
 * Store v in *slot (pcsample's array).  Returns 0, or -1 if the slot is
 * not writable memory.
 */
int64_t satstore64(uint64_t *slot, uint64_t v);

/*
 * The same protection for the thread table of a profile file, which is
 * mapped from a file that a full disk or a truncation can take away:
 * load *p into *out (0, or -1); compare *p with expected and store
 * desired if equal (1 stored, 0 not, -1 not writable); add v to *p (0,
 * or -1).  All three are atomic.
 */
int64_t satload64(const uint64_t *p, uint64_t *out);
int64_t satcas64(uint64_t *p, uint64_t expected, uint64_t desired);
int64_t satxadd64(uint64_t *p, uint64_t v);

/* True if satadd16/satadd32 can recover from a fault on this machine. */
bool satadd_recovers(void);

/*
 * If pc is one of the instructions of satadd16/satadd32 that may fault,
 * return the address to resume at; else 0.
 */
uintptr_t satadd_fixup(uintptr_t pc);

#endif
