/*
 * dlname.h - the name an interposed dlopen passes on, so that glibc
 * finds what it would have found for the real caller (not libprofil).
 * Not async-signal-safe: called from dlopen only.
 */
#ifndef PROFIL_DLNAME_H
#define PROFIL_DLNAME_H

#include <stddef.h>

/*
 * file as the object that holds the address caller would have it
 * opened: its $ORIGIN expanded, a bare name looked up along its search
 * path.  Returns file itself when glibc, called from libprofil, does the
 * same, or out (size bytes) holding the name to open.
 */
const char *dlname_as_caller(const char *file, const void *caller, char *out, size_t size);

#endif
