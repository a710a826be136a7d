/*
 * profile_guard.h - pages of mapped profile files that SIGBUS (their file
 * cut short meanwhile) read as zeros instead (profile_guard.c).
 */
#ifndef PROFIL_FORMAT_PROFILE_GUARD_H
#define PROFIL_FORMAT_PROFILE_GUARD_H

#include <stddef.h>

/* Guard [at, at + len), the handler installed if it is not: 0, or -1 if
   it cannot be (then map nothing of a file there: copy it). */
int profile_guard_add(const void *at, size_t len);
/* The range guarded from at, no longer (before it is unmapped). */
void profile_guard_remove(const void *at);

#endif
