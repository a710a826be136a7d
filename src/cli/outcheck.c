/*
 * outcheck.c - SPEC 6b: report, merge and export never destroy what they
 * were given.  An output name is refused, before anything is written,
 * when it is a directory, something other than a regular file (a device
 * would be replaced by the rename), a file the command reads (a profile,
 * the run list, the program or a library whose symbols it reads), or a
 * profile of any kind, recognised by its content: a slip of the fingers
 * (`report --html $(cat .profil-last)`) must cost a message, not the
 * only copy of a run.  Nor is an output made inside a run directory the
 * command reads: it would be read with the run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../format/monout.h"
#include "../format/pcsfile.h"
#include "../format/profile.h"
#include "cli.h"
#include "model.h"
#include "run_dir.h"

/* What kind of profile the regular file at fd holds, or NULL. */
static const char *profile_kind(int fd, off_t size)
{
	unsigned char head[8], tail[8];
	if (size < 8 || pread(fd, head, 8, 0) != 8)
		return NULL;
	if (profile_is_profile(head, 8))
		return "a profil profile";
	if (memcmp(head, "gmon", 4) == 0)
		return "a gmon.out profile";
	if (pcsfile_is(head, 8))
		return "a pcsample profile";
	if (size >= MONOUT_FOOTER && pread(fd, tail, 8, size - 8) == 8
	    && memcmp(tail, MONOUT_MAGIC, 8) == 0)
		return "a mon.out profile";
	return NULL;
}

static int same_file(const struct stat *a, const char *path)
{
	struct stat b;
	return path && stat(path, &b) == 0 && a->st_dev == b.st_dev && a->st_ino == b.st_ino;
}

/* The directory part of path into dir ("." for none). */
static void parent(const char *path, char *dir, size_t len)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		snprintf(dir, len, ".");
	else if (slash == path)
		snprintf(dir, len, "/");
	else
		snprintf(dir, len, "%.*s", (int)(slash - path), path);
}

/*
 * Is out to be made in a run directory (one of profiles only) that the
 * command reads files of?  Whatever is written there would be read with
 * the run next time: a page is a stranger that fails every report, a
 * merged or exported profile is counted twice.
 */
static int inside_run(const char *out, char *const *files, char *dir, size_t len)
{
	struct stat d;
	parent(out, dir, len);
	if (stat(dir, &d) != 0)
		return 0;
	for (char *const *f = files; f && *f; f++) {
		char in[PATH_MAX], why[256];
		struct stat st;
		parent(*f, in, sizeof in);
		/* An input that is there: an empty directory is a run too. */
		if (same_file(&d, in) && stat(*f, &st) == 0 && S_ISREG(st.st_mode))
			return run_kind(dir, why, sizeof why) == 1;
	}
	return 0;
}

int output_refused(const char *opt, const char *out, char *const *files, const char *exe,
		   const struct model *m)
{
	struct stat st, lst;
	if (!*out) {
		error_line("%s '': an empty file name", opt);
		return 1;
	}
	char dir[PATH_MAX];
	if (inside_run(out, files, dir, sizeof dir)) {
		error_line("%s '%s': in %s, a run this command reads, where it would be read with "
			   "the run's profiles; write it elsewhere", opt, out, dir);
		return 1;
	}
	if (lstat(out, &lst) != 0)
		return 0;	/* nothing there to lose; creating it says why not */
	if (stat(out, &st) != 0)
		st = lst;	/* a dangling symbolic link: only the link is replaced */
	if (S_ISDIR(st.st_mode)) {
		error_line("%s '%s': a directory; name a file to write", opt, out);
		return 1;
	}
	if (!S_ISREG(st.st_mode)) {
		error_line("%s '%s': not a regular file; it is not written over", opt, out);
		return 1;
	}
	for (char *const *f = files; f && *f; f++) {
		if (!same_file(&st, *f) && !same_file(&lst, *f))
			continue;
		if (strcmp(*f, out) == 0)
			error_line("%s '%s': a file this command reads; it is not written over",
				   opt, out);
		else
			error_line("%s '%s': the same file as %s, which this command reads; it is "
				   "not written over", opt, out, *f);
		return 1;
	}
	if (same_file(&st, RUN_LIST)) {
		error_line("%s '%s': the list of the last profil run; it is not written over", opt,
			   out);
		return 1;
	}
	if (same_file(&st, exe)) {
		error_line("%s '%s': the program named by --exe; it is not written over", opt, out);
		return 1;
	}
	for (size_t i = 0; m && i < m->nobjects; i++) {
		if (same_file(&st, m->objects[i].path)) {
			error_line("%s '%s': %s, an object the profile is of; it is not written "
				   "over", opt, out, m->objects[i].path);
			return 1;
		}
	}
	int fd = open(out, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		error_line("%s '%s': exists and cannot be read (%s), so it might be a profile; "
			   "it is not written over", opt, out, strerror(errno));
		return 1;
	}
	const char *kind = profile_kind(fd, st.st_size);
	close(fd);
	if (kind) {
		error_line("%s '%s': %s; no profile is written over (remove it first, or name "
			   "another file)", opt, out, kind);
		return 1;
	}
	return 0;
}
