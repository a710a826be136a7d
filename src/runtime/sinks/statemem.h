/*
 * statemem.h - memory for the runtime's own state that the profiled
 * program can tell from its own.
 *
 * A program may scan its anonymous mappings: redis, when it crashes,
 * tests every writable anonymous mapping of /proc/self/maps in place,
 * and reports a memory error when a value changes under its test, as
 * our counters do while samples come in.  Mapped privately from
 * /dev/zero (anonymous memory to the kernel: a fork's child gets its
 * copy), our state is listed as /dev/zero, a device, which such scans
 * skip; the library's own statics are in its file's data (libprofil.ld).
 * Where /dev/zero cannot be opened (no /dev, no descriptor left, a
 * sandbox), plain anonymous memory.
 * Async-signal-safe and lock-free.
 */
#ifndef PROFIL_STATEMEM_H
#define PROFIL_STATEMEM_H

#include <stddef.h>

/* size bytes of zeroed private memory, as mmap: MAP_FAILED on failure
   with errno.  noreserve: only the pages touched are committed. */
void *statemem_map(size_t size, int noreserve);

#endif
