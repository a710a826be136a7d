/*
 * statemem.h - memory for the runtime's own state that the profiled
 * program can tell from its own.
 *
 * A program may scan its anonymous mappings: redis, when it crashes,
 * tests every writable anonymous mapping of /proc/self/maps in place,
 * and reports a memory error when a value changes under its test, as
 * our counters do while samples come in.  Mapped from a memfd
 * (privately: a fork's child gets its copy, as with anonymous memory),
 * our state is listed as /memfd:profil, a file, which such scans skip.
 * Where no memfd can be had (an old kernel, no descriptor left, an
 * RLIMIT_FSIZE below its size, a seccomp filter that might kill the
 * process for trying), plain anonymous memory.
 * Async-signal-safe and lock-free.
 */
#ifndef PROFIL_STATEMEM_H
#define PROFIL_STATEMEM_H

#include <stddef.h>

/* size bytes of zeroed private memory, as mmap: MAP_FAILED on failure
   with errno.  noreserve: only the pages touched are committed. */
void *statemem_map(size_t size, int noreserve);

#endif
