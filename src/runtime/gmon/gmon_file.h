/*
 * gmon_file.h - where the profile of a -pg program goes, and writing it
 * there safely (SPEC section 6).
 */
#ifndef PROFIL_GMON_FILE_H
#define PROFIL_GMON_FILE_H

#include "../../format/gmon.h"

/*
 * At monstartup: read PROFDIR, GMON_OUT_PREFIX and PROFIL_OUT (not in a
 * set-user-ID or set-group-ID program) and hold the directory current
 * now.  Returns 0, or -1 when no file is wanted (PROFDIR set but empty).
 */
int gmon_file_setup(void);

/* In a fork child: the child's file is its own, not yet created. */
void gmon_file_after_fork(void);

/*
 * Write a profile: emit() puts the records after the header.  The file
 * is written under a temporary name and moved into place whole; the
 * first time, without replacing anything that exists there (another
 * name is taken then); later, replacing only the file made before.
 * Returns 0 or -1; a failure is reported once on standard error.
 * Async-signal-safe; the caller makes sure one writer runs at a time.
 */
int gmon_file_write(void (*emit)(struct gmon_out *out, void *arg), void *arg);

/*
 * Write text in a file beside the one last written, named as it is with
 * suffix added, whole or not at all; 0 or -1 (not reported).
 * Async-signal-safe; the same one-writer rule.
 */
int gmon_file_write_beside(const char *suffix, const char *text, size_t len);

/* The name last written, for messages and tests ("" if none). */
const char *gmon_file_name(void);

#endif
