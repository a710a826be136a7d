/*
 * run_dir.h - the directory of one `profil run` (SPEC section 6b): what
 * is a run, its files in the order the processes started, and the
 * previous run of the same name kept as NAME.old.
 */
#ifndef PROFIL_RUN_DIR_H
#define PROFIL_RUN_DIR_H

#include <limits.h>

/* The run directory's name in the current directory (or PROFDIR). */
#define RUN_DIR_DEFAULT "profil.data"
/* The name of each process's file in it (PROFIL_OUT's pattern). */
#define RUN_FILE_PATTERN "%n.%p.prof"
/* The end of the name of a note of a process libprofil could not follow
   (src/runtime/core/follow.c): PROGRAM.PID.skipped, one line of text. */
#define RUN_NOTE_SUFFIX ".skipped"

/* The directory in a run where libprofil keeps the unwind tables it
   built, for the run's other processes (src/runtime/preload/unwcache.h);
   removed once the run is over. */
#define RUN_CACHE_DIR ".unwind"

int run_is_note(const char *name);

/* Remove the run's RUN_CACHE_DIR, if any. */
void run_drop_cache(const char *dir);

/*
 * What is at path: 0 nothing, 1 a run (a directory holding only
 * profiles and notes, or a profile file as profil run wrote before 6b), or -1 with
 * why (something else, left alone) put in why.
 */
int run_kind(const char *path, char *why, size_t size);

/*
 * The profile files in the run directory dir, oldest process first (by
 * the start time in each header, then the name): a NULL-terminated
 * array of paths (dir/name) with *n set.  NULL with errno if dir cannot
 * be read.
 */
char **run_files(const char *dir, unsigned *n);
/* The notes in dir, in the same order. */
char **run_notes(const char *dir, unsigned *n);

/*
 * Rotation: begin moves name's previous run to name.old (an older
 * name.old aside under a hidden name) and makes name, an empty
 * directory; commit (the run wrote something) removes what was set
 * aside; undo (it wrote nothing) puts everything back as it was.
 * begin returns 0, or -1 after one line saying why (nothing changed).
 */
struct rotation {
	char name[PATH_MAX], old[PATH_MAX + 8], aside[PATH_MAX + 32];
	int moved_name, moved_old;
};
int rotate_begin(struct rotation *r, const char *name);
void rotate_commit(struct rotation *r);
void rotate_undo(struct rotation *r);

/*
 * Point the pointer file (.profil-last in the directory where profil run
 * was started) at dir, replacing it whole.  0, or -1 after one line.
 */
int run_point(const char *pointer, const char *dir);

#endif
