/*
 * run_dir.c - the directory of one profil run (run_dir.h), and the
 * files report, merge and export read when given none or a directory.
 *
 * Whatever is moved or removed here was first seen to be a run: a
 * directory the user made for something else, a symbolic link, or a
 * file that is not a profile is never renamed nor emptied.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../format/profile.h"
#include "cli.h"
#include "run_dir.h"

/* Is the regular file name (in dirfd) a profile?  *start: its start. */
static int is_profile_at(int dirfd, const char *name, uint64_t *start)
{
	struct profile_header h;
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	int ok = pread(fd, &h, sizeof h, 0) == (ssize_t)sizeof h && profile_is_profile(&h, sizeof h);
	close(fd);
	if (ok && start)
		*start = h.start_ns;
	return ok;
}

static int regular_at(int dirfd, const char *name)
{
	struct stat st;
	return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

int run_is_note(const char *name)
{
	size_t n = strlen(name), s = strlen(RUN_NOTE_SUFFIX);
	return n > s && !strcmp(name + n - s, RUN_NOTE_SUFFIX);
}

/* A profile's packed copy that a killed profil run left (profile_pack.c). */
static int is_pack_left(const char *name)
{
	size_t n = strlen(name);
	return name[0] == '.' && n > 6 && !strcmp(name + n - 5, ".pack");
}

/* A file of ours in a run: a profile, or a note of a process skipped. */
static int ours_at(int dirfd, const char *name)
{
	return regular_at(dirfd, name) && (run_is_note(name) || is_pack_left(name)
					   || is_profile_at(dirfd, name, NULL));
}

/* The unwind tables' directory of a run whose profil run was killed. */
static int is_cache_at(int dirfd, const char *name)
{
	struct stat st;
	return !strcmp(name, RUN_CACHE_DIR) && fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0
	       && S_ISDIR(st.st_mode);
}

void run_drop_cache(const char *dir)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return;
	int cfd = is_cache_at(dfd, RUN_CACHE_DIR)
		  ? openat(dfd, RUN_CACHE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
	DIR *d = cfd >= 0 ? fdopendir(cfd) : NULL;
	if (d) {
		struct dirent *e;
		while ((e = readdir(d)))
			if (regular_at(dirfd(d), e->d_name))
				unlinkat(dirfd(d), e->d_name, 0);
		closedir(d);
		unlinkat(dfd, RUN_CACHE_DIR, AT_REMOVEDIR);
	} else if (cfd >= 0) {
		close(cfd);
	}
	close(dfd);
}

int run_kind(const char *path, char *why, size_t size)
{
	struct stat st;
	if (lstat(path, &st) != 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(why, size, "%s", strerror(errno));
		return -1;
	}
	if (S_ISREG(st.st_mode)) {
		if (is_profile_at(AT_FDCWD, path, NULL))
			return 1;
		snprintf(why, size, "a file that is not a profile");
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, size, S_ISLNK(st.st_mode) ? "a symbolic link" : "not a directory");
		return -1;
	}
	DIR *d = opendir(path);
	if (!d) {
		snprintf(why, size, "%s", strerror(errno));
		return -1;
	}
	int kind = 1;
	struct dirent *e;
	while (kind == 1 && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (!ours_at(dirfd(d), e->d_name) && !is_cache_at(dirfd(d), e->d_name)) {
			snprintf(why, size, "a directory that holds %s, not a profile", e->d_name);
			kind = -1;
		}
	}
	closedir(d);
	return kind;
}

struct entry {
	uint64_t start;
	char *path;
};

static int by_start(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return strcmp(x->path, y->path);
}

static char **list(const char *dir, unsigned *n, int notes)
{
	DIR *d = opendir(dir);
	if (!d)
		return NULL;
	struct entry *v = NULL;
	size_t count = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		/* Hidden names are not the processes' (a rotation's leftovers). */
		if (e->d_name[0] == '.' || run_is_note(e->d_name) != notes
		    || !regular_at(dirfd(d), e->d_name))
			continue;
		uint64_t start = 0;
		is_profile_at(dirfd(d), e->d_name, &start);	/* a stranger: read and named */
		v = xrealloc(v, (count + 1) * sizeof *v);
		v[count].start = start;
		v[count].path = xmalloc(strlen(dir) + strlen(e->d_name) + 2);
		sprintf(v[count].path, "%s/%s", dir, e->d_name);
		count++;
	}
	closedir(d);
	if (count)	/* v is NULL then: qsort's base must not be */
		qsort(v, count, sizeof *v, by_start);
	char **files = xmalloc((count + 1) * sizeof *files);
	for (size_t i = 0; i < count; i++)
		files[i] = v[i].path;
	files[count] = NULL;
	free(v);
	*n = (unsigned)count;
	return files;
}

char **run_files(const char *dir, unsigned *n)
{
	return list(dir, n, 0);
}

char **run_notes(const char *dir, unsigned *n)
{
	return list(dir, n, 1);
}

/* Remove a run (seen to be one by run_kind): its files, then it. */
static void remove_run(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return;
	if (!S_ISDIR(st.st_mode)) {
		if (unlink(path) != 0)
			error_line("%s: cannot remove the older run: %s", path, strerror(errno));
		return;
	}
	run_drop_cache(path);
	DIR *d = opendir(path);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d)))
			if (ours_at(dirfd(d), e->d_name))
				unlinkat(dirfd(d), e->d_name, 0);
		closedir(d);
	}
	if (rmdir(path) != 0)
		error_line("%s: cannot remove the older run: %s", path, strerror(errno));
}

int rotate_begin(struct rotation *r, const char *name)
{
	char why[PATH_MAX + 64];
	memset(r, 0, sizeof *r);
	snprintf(r->name, sizeof r->name, "%s", name);
	snprintf(r->old, sizeof r->old, "%s.old", name);
	const char *slash = strrchr(name, '/');
	int dirlen = slash ? (int)(slash - name + 1) : 0;
	snprintf(r->aside, sizeof r->aside, "%.*s.%s.old.%d", dirlen, name, name + dirlen,
		 (int)getpid());
	int k = run_kind(r->name, why, sizeof why);
	if (k < 0) {
		error_line("%s: %s: not a profil run, left alone (choose another name with -o)",
			   r->name, why);
		return -1;
	}
	int ko = run_kind(r->old, why, sizeof why);
	if (ko < 0) {
		error_line("%s: %s: not a profil run, left alone (the previous run would be kept "
			   "there; choose another name with -o)", r->old, why);
		return -1;
	}
	if (ko > 0 && k > 0) {	/* no previous run: an older .old stays */
		if (rename(r->old, r->aside) != 0) {
			error_line("%s: cannot move it aside: %s", r->old, strerror(errno));
			return -1;
		}
		r->moved_old = 1;
	}
	if (k > 0) {
		if (rename(r->name, r->old) != 0) {
			error_line("%s: cannot keep it as %s: %s", r->name, r->old, strerror(errno));
			rotate_undo(r);
			return -1;
		}
		r->moved_name = 1;
	}
	if (mkdir(r->name, 0755) != 0) {
		error_line("%s: cannot make the run's directory: %s", r->name, strerror(errno));
		r->moved_name = -r->moved_name;	/* nothing of ours to remove */
		rotate_undo(r);
		return -1;
	}
	return 0;
}

void rotate_commit(struct rotation *r)
{
	if (r->moved_old)
		remove_run(r->aside);
}

void rotate_undo(struct rotation *r)
{
	unsigned n;
	char **notes = r->moved_name >= 0 ? run_notes(r->name, &n) : NULL;
	for (char **f = notes; f && *f; f++)
		unlink(*f);
	free_files(notes);
	if (r->moved_name >= 0 && rmdir(r->name) != 0 && errno != ENOENT) {
		error_line("%s: cannot remove the empty run: %s", r->name, strerror(errno));
		return;	/* something is in it: put nothing back over it */
	}
	if (r->moved_name && rename(r->old, r->name) != 0)
		error_line("%s: cannot put the previous run back: %s", r->name, strerror(errno));
	if (r->moved_old && rename(r->aside, r->old) != 0)
		error_line("%s: cannot put the older run back: %s", r->old, strerror(errno));
}

int run_point(const char *pointer, const char *dir)
{
	char tmp[PATH_MAX + 32];
	snprintf(tmp, sizeof tmp, "%s.%d", pointer, (int)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		error_line("%s: %s", tmp, strerror(errno));
		return -1;
	}
	size_t len = strlen(dir);
	int ok = write(fd, dir, len) == (ssize_t)len && write(fd, "\n", 1) == 1;
	int err = errno;
	if (close(fd) != 0 && ok) {
		ok = 0;
		err = errno;
	}
	if (ok && rename(tmp, pointer) == 0)
		return 0;
	if (ok)
		err = errno;
	unlink(tmp);
	error_line("%s: cannot point it at %s: %s", pointer, dir, strerror(err));
	return -1;
}

/* ---- What report, merge and export read. ---- */

static void add(char ***files, int *n, char *name)
{
	*files = xrealloc(*files, ((size_t)*n + 2) * sizeof **files);
	(*files)[(*n)++] = name;
	(*files)[*n] = NULL;
}

/* name, or the files of the run directory name.  0, or -1 after one line. */
static int add_input(char ***files, int *n, const char *name, const char *from)
{
	struct stat st;
	if (stat(name, &st) != 0 || !S_ISDIR(st.st_mode)) {
		add(files, n, xstrdup(name));	/* the reader says what is wrong */
		return 0;
	}
	unsigned count;
	char **in = run_files(name, &count);
	if (!in) {
		error_line("%s%s%s: %s", from ? from : "", from ? ": " : "", name, strerror(errno));
		return -1;
	}
	if (count == 0) {
		error_line("%s%s%s: a directory with no profile in it", from ? from : "",
			   from ? ": " : "", name);
		free(in);
		return -1;
	}
	for (unsigned i = 0; i < count; i++)
		add(files, n, in[i]);
	free(in);
	return 0;
}

/*
 * NAME.stats given with NAME (profil report gmon.*): the companion
 * libprofil writes beside a gmon.out, which the reader of NAME reads
 * itself; not a profile of its own.
 */
static void drop_companions(char **files, int *n)
{
	int kept = 0;
	for (int i = 0; i < *n; i++) {
		size_t len = strlen(files[i]);
		int companion = 0;
		for (int j = 0; j < *n && !companion && len > 6
				&& strcmp(files[i] + len - 6, ".stats") == 0; j++)
			companion = j != i && strlen(files[j]) == len - 6
				    && strncmp(files[j], files[i], len - 6) == 0;
		if (companion)
			free(files[i]);
		else
			files[kept++] = files[i];
	}
	files[kept] = NULL;
	*n = kept;
}

char **input_files(int argc, char **argv)
{
	char **files = xmalloc(sizeof *files);
	int n = 0;
	files[0] = NULL;
	for (int i = 0; i < argc; i++)
		if (add_input(&files, &n, argv[i], NULL) != 0)
			goto fail;
	drop_companions(files, &n);
	if (argc)
		return files;
	FILE *f = fopen(RUN_LIST, "r");
	if (!f) {
		struct stat st;
		if (stat(RUN_DIR_DEFAULT, &st) == 0 && S_ISDIR(st.st_mode))
			return add_input(&files, &n, RUN_DIR_DEFAULT, NULL) == 0 ? files
										      : (free_files(files), NULL);
		error_line("no file given, and no %s nor %s here from a profil run",
			   RUN_DIR_DEFAULT, RUN_LIST);
		free(files);
		return NULL;
	}
	/*
	 * Each line a run directory (what profil run writes) or a file (the
	 * lists of files profil run wrote before its runs had directories).
	 * Whole lines, however long: a name is never cut in two.
	 */
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	unsigned lineno = 0;
	int bad = 0;
	while (!bad && (len = getline(&line, &cap, f)) > 0) {
		lineno++;
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		if (!len)
			continue;
		if (strlen(line) != (size_t)len) {
			error_line("%s: line %u holds a NUL byte: not a file name", RUN_LIST, lineno);
			bad = 1;
		} else {
			bad = add_input(&files, &n, line, RUN_LIST) != 0;
		}
	}
	free(line);
	fclose(f);
	if (!bad && n > 0)
		return files;
	if (!bad)
		error_line("%s names no profile: the last profil run wrote none", RUN_LIST);
fail:
	free_files(files);
	return NULL;
}

void free_files(char **files)
{
	for (char **f = files; f && *f; f++)
		free(*f);
	free(files);
}
