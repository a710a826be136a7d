/*
 * outname.h - PROFIL_OUT's name pattern: %p the process ID, %n the
 * program's name, %% a percent sign (any other %c: c).  The preload
 * mode and the gmon runtime name their files with it alike.
 */
#ifndef PROFIL_OUTNAME_H
#define PROFIL_OUTNAME_H

#include <stddef.h>

/*
 * Expand pattern into out (size bytes, size >= 1), always NUL-terminated.
 * Returns 0, or -1 when the name did not fit (out then holds what did).
 * Async-signal-safe: no allocation, no stdio.
 */
int outname_expand(const char *pattern, const char *prog, unsigned long pid,
		   char *out, size_t size);

#endif
