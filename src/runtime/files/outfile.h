/*
 * outfile.h - writing a profile file completely or not at all.
 */
#ifndef PROFIL_OUTFILE_H
#define PROFIL_OUTFILE_H

#include <stddef.h>

/*
 * Write len bytes of data to name, relative to dirfd (AT_FDCWD for the
 * current directory), mode 0600.  The bytes go to a temporary file that
 * is then linked under name: a reader never sees a torn file, no
 * symbolic link is followed, and a file that exists is never replaced
 * (EEXIST).  Returns 0 or -1 with errno.  Not for signal handlers.
 */
int outfile_write(int dirfd, const char *name, const void *data, size_t len);

#endif
