/*
 * preloadable.h - will the loader preload libprofil into this program?
 * Read from the file alone (the ELF program headers, the set-ID bits, a
 * script's interpreter), by profil run before it runs the program and
 * by libprofil before an exec in the tree.
 */
#ifndef PROFIL_PRELOADABLE_H
#define PROFIL_PRELOADABLE_H

#include <stddef.h>

enum preloadable {
	PRELOADABLE = 0,	/* or not readable: exec says why, if it fails */
	NOT_DYNAMIC,		/* statically linked: no PT_INTERP, no loader */
	NOT_OUR_CLASS,		/* an ELF class other than libprofil's */
	NOT_SETID,		/* set-ID for someone else: AT_SECURE */
};

/*
 * Why path cannot be profiled by preloading, or PRELOADABLE.  For a
 * script ("#!"), the answer for its interpreter, whose path goes into
 * interp (empty for a program); the answer is about interp then.
 * Async-signal-safe (open, pread, fstat, close; no allocation): an exec
 * wrapper calls it in a vfork child.
 */
enum preloadable preloadable(const char *path, char *interp, size_t size);

/* What is wrong, as a phrase: "statically linked", ... */
const char *preloadable_why(enum preloadable p);

#endif
