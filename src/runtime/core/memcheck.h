/*
 * memcheck.h - is a range of addresses writable memory of the process?
 */
#ifndef PROFIL_MEMCHECK_H
#define PROFIL_MEMCHECK_H

#include <stdbool.h>
#include <stddef.h>

/*
 * True if every byte of [p, p + len) lies in a writable mapping, as
 * /proc/self/maps says now.  If /proc cannot be read, true (the fault
 * handler still catches a bad buffer at its first sample).
 */
bool memory_writable(const void *p, size_t len);

#endif
