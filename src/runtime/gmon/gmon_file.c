/*
 * gmon_file.c - naming and writing the profile file of a -pg program.
 *
 * gmon_file_write() is async-signal-safe: it runs in crash handlers.  It
 * uses only system calls on a directory descriptor opened at start, and
 * static buffers that the caller's one-writer rule protects.
 *
 * Safety rules (SPEC section 6): the file is written under a temporary
 * name, created with O_EXCL | O_NOFOLLOW and mode 0600, and renamed into
 * place, so no torn file is ever seen under the final name.  The first
 * placement uses RENAME_NOREPLACE (or link(2)), which neither follows nor
 * replaces a symbolic link or a file planted at the name; a later one
 * replaces the file only if it is still the one made before (same device
 * and inode).  The directory is held open from the start, so a chdir or
 * chroot later does not move the file; near RLIMIT_NOFILE (fds.c) it is
 * opened again by its path, checked by device and inode, for each write.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/env.h"
#include "core/fds.h"
#include "gmon/gmon_file.h"
#include "files/outname.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE 1
#endif

enum naming { NAME_GMON, NAME_PREFIX, NAME_TEMPLATE };

static struct {
	int dirfd;			/* the start directory, or PROFDIR */
	dev_t dir_dev;
	ino_t dir_ino;
	char dir_path[PATH_MAX];	/* to reopen it if the program closed ours */
	int by_path;			/* dir_path not held: names start with it */
	enum naming naming;
	char pattern[PATH_MAX];		/* GMON_OUT_PREFIX or PROFIL_OUT */
	char prog[64];
	/* The file made so far in this process. */
	int placed;
	unsigned suffix;		/* 0, or the N of a name taken */
	dev_t dev;
	ino_t ino;
	int reported;
	char name[PATH_MAX];		/* the current final name */
	char tmp[PATH_MAX + 32];
} f = { .dirfd = -1 };

/* Small string building without stdio (async-signal-safe). */
struct str {
	char *p;
	size_t len, cap;
	int overflow;
};

static void add(struct str *s, const char *t)
{
	for (; *t; t++) {
		if (s->len + 1 >= s->cap) {
			s->overflow = 1;
			break;
		}
		s->p[s->len++] = *t;
	}
	s->p[s->len] = '\0';
}

static void add_num(struct str *s, unsigned long v)
{
	char d[24];
	int i = sizeof d - 1;
	d[i] = '\0';
	do
		d[--i] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	add(s, d + i);
}

/* "libprofil: " and the parts, NULL-ended, in one line. */
static void say(const char *part, ...)
{
	char line[2 * PATH_MAX + 200];
	struct str s = { line, 0, sizeof line, 0 };
	add(&s, "libprofil: ");
	va_list ap;
	va_start(ap, part);
	for (; part; part = va_arg(ap, const char *))
		add(&s, part);
	va_end(ap);
	add(&s, "; profile not written\n");
	if (s.overflow)
		line[s.len - 1] = '\n';
	ssize_t r = write(STDERR_FILENO, line, s.len);
	(void)r;
}

/* Once per process: the file (in the directory, if it is a name there)
   and why. */
static void report(const char *name, int err)
{
	if (f.reported)
		return;
	f.reported = 1;
	const char *why = strerrordesc_np(err);
	int inside = name[0] != '/' && f.dir_path[0] && name != f.dir_path;
	say(inside ? f.dir_path : "", inside ? "/" : "", name, ": ", why ? why : "error",
	    (const char *)NULL);
}

static int hold_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	/* Out of the way of programs that reuse low descriptors. */
	int high = fcntl(fd, F_DUPFD_CLOEXEC, 200);
	if (high >= 0) {
		close(fd);
		fd = high;
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		close(fd);
		return -1;
	}
	if (f.dirfd >= 0)
		close(f.dirfd);
	f.dir_dev = st.st_dev;
	f.dir_ino = st.st_ino;
	/* Near RLIMIT_NOFILE the program's descriptors come first (fds.c):
	   the directory is then opened by its path for each write. */
	f.dirfd = fds_keep(fd);
	return 0;
}

int gmon_file_setup(void)
{
	const char *name = program_invocation_short_name;
	size_t n = 0;
	for (; name && name[n] && n < sizeof f.prog - 1; n++)
		f.prog[n] = name[n] == '/' ? '_' : name[n];
	f.prog[n] = '\0';
	if (n == 0)
		strcpy(f.prog, "program");

	/* secure_getenv: nothing chooses a path in a set-ID program. */
	const char *dir = secure_getenv("PROFDIR");
	const char *prefix = secure_getenv("GMON_OUT_PREFIX");
	const char *out = secure_getenv("PROFIL_OUT");
	if (dir && *dir == '\0')
		return -1;	/* OpenBSD: PROFDIR set and empty means no file */

	f.naming = NAME_GMON;
	if (out && *out && strlen(out) < sizeof f.pattern) {
		f.naming = NAME_TEMPLATE;
		strcpy(f.pattern, out);
	} else if (prefix && *prefix && strlen(prefix) < sizeof f.pattern) {
		f.naming = NAME_PREFIX;
		strcpy(f.pattern, prefix);
	}
	if (dir) {
		char *real = realpath(dir, NULL);
		if (real && strlen(real) < sizeof f.dir_path && hold_dir(real) == 0) {
			strcpy(f.dir_path, real);
			free(real);
			return 0;
		}
		free(real);
		env_complain("PROFDIR", dir, "not a directory that can be opened",
			     "the current directory");
	}
	if (!getcwd(f.dir_path, sizeof f.dir_path))
		f.dir_path[0] = '\0';
	if (hold_dir(".") != 0)
		f.dirfd = AT_FDCWD;	/* unreadable cwd: at least try */
	return 0;
}

void gmon_file_after_fork(void)
{
	f.placed = 0;
	f.suffix = 0;
	f.reported = 0;
	f.name[0] = '\0';
}

const char *gmon_file_name(void)
{
	return f.name;
}

/*
 * The directory descriptor, reopened if the program closed or reused
 * ours.  Near RLIMIT_NOFILE (fds.c) it is not held, and the file is
 * written by its full path (AT_FDCWD, by_path): the directory checked by
 * device and inode first, and one descriptor at a time.
 */
static int directory(void)
{
	struct stat st;
	f.by_path = 0;
	if (f.dirfd == AT_FDCWD)
		return AT_FDCWD;
	if (f.dirfd >= 0 && fstat(f.dirfd, &st) == 0 && st.st_dev == f.dir_dev
	    && st.st_ino == f.dir_ino)
		return f.dirfd;
	int fd = open(f.dir_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || st.st_dev != f.dir_dev || st.st_ino != f.dir_ino) {
		close(fd);
		errno = ENOENT;
		return -1;
	}
	int high = fcntl(fd, F_DUPFD_CLOEXEC, 200);
	if (high >= 0) {
		close(fd);
		fd = high;
	}
	if (fds_may_keep(fd)) {
		f.dirfd = fd;
		return fd;
	}
	close(fd);
	f.by_path = 1;
	return AT_FDCWD;
}

/* The final name for this process, with suffix N (0: none). */
static int make_name(unsigned suffix)
{
	struct str s = { f.name, 0, sizeof f.name, 0 };
	unsigned long pid = (unsigned long)getpid();
	if (f.by_path && (f.naming == NAME_GMON || f.pattern[0] != '/')) {
		add(&s, f.dir_path);
		add(&s, "/");
	}
	switch (f.naming) {
	case NAME_GMON:
		add(&s, "gmon.");
		add(&s, f.prog);
		add(&s, ".");
		add_num(&s, pid);
		if (suffix) {
			add(&s, ".");
			add_num(&s, suffix);
		}
		add(&s, ".out");
		break;
	case NAME_PREFIX:
		add(&s, f.pattern);
		add(&s, ".");
		add_num(&s, pid);
		break;
	case NAME_TEMPLATE:
		if (outname_expand(f.pattern, f.prog, pid, f.name, sizeof f.name) != 0)
			s.overflow = 1;
		s.len = strlen(f.name);
		break;
	}
	if (suffix && f.naming != NAME_GMON) {
		add(&s, ".");
		add_num(&s, suffix);
	}
	if (s.overflow) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

static int rename_noreplace(int dir, const char *from, const char *to)
{
	long r = syscall(SYS_renameat2, dir, from, dir, to, RENAME_NOREPLACE);
	if (r == 0 || (errno != ENOSYS && errno != EINVAL))
		return (int)r;
	/* No renameat2 here: link(2) does not replace either. */
	if (linkat(dir, from, dir, to, 0) != 0)
		return -1;
	unlinkat(dir, from, 0);
	return 0;
}

/* Put the written temporary file in place; 0 or -1 with errno. */
static int place(int dir)
{
	if (f.placed) {
		struct stat st;
		if (fstatat(dir, f.name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			if (st.st_dev != f.dev || st.st_ino != f.ino) {
				errno = EEXIST;	/* not ours any more: leave it */
				return -1;
			}
			return renameat(dir, f.tmp, dir, f.name);
		}
		if (errno != ENOENT)
			return -1;
		/* Removed since: make it again, without replacing. */
	}
	for (;;) {
		if (make_name(f.suffix) != 0)
			return -1;
		if (rename_noreplace(dir, f.tmp, f.name) == 0)
			return 0;
		/* Taken (a file from an earlier process with this pid, a
		   program that exec'd itself, a link planted there): the
		   next name. */
		if (errno != EEXIST || f.suffix >= 1000)
			return -1;
		f.suffix++;
	}
}

/* Write the file in the directory dir. */
static int write_in(int dir, void (*emit)(struct gmon_out *out, void *arg), void *arg)
{
	static struct gmon_out out;	/* one writer at a time: the caller's rule */
	if (make_name(f.suffix) != 0) {
		report(f.pattern, errno);
		return -1;
	}
	struct str t = { f.tmp, 0, sizeof f.tmp, 0 };
	add(&t, f.name);
	add(&t, ".tmp.");
	add_num(&t, (unsigned long)syscall(SYS_gettid));
	int fd = openat(dir, f.tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST) {
		/* Left by a process killed while writing, with our pid and
		   tid: unlink removes a link itself, never its target. */
		unlinkat(dir, f.tmp, 0);
		fd = openat(dir, f.tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	}
	if (fd < 0) {
		report(f.name, errno);
		return -1;
	}
	gmon_out_init(&out, fd);
	gmon_put_header(&out);
	emit(&out, arg);
	struct stat st;
	int r = gmon_out_flush(&out);
	if (r == 0)
		r = fstat(fd, &st);
	int err = errno;
	if (close(fd) != 0 && r == 0) {
		r = -1;
		err = errno;
	}
	if (r == 0) {
		r = place(dir);
		err = errno;
	}
	if (r != 0) {
		unlinkat(dir, f.tmp, 0);
		report(f.name, err);
		return -1;
	}
	f.placed = 1;
	f.dev = st.st_dev;
	f.ino = st.st_ino;
	return 0;
}

/*
 * The companion beside the file just placed: the same temporary name
 * and rename, so it is whole or absent.  It replaces an older companion
 * of this file (ours: the name is the placed file's plus a suffix).
 */
int gmon_file_write_beside(const char *suffix, const char *text, size_t len)
{
	if (!f.placed)
		return -1;
	int dir = directory();
	if (dir == -1 || make_name(f.suffix) != 0)
		return -1;
	char name[PATH_MAX + 16];
	struct str n = { name, 0, sizeof name, 0 };
	add(&n, f.name);
	add(&n, suffix);
	struct str t = { f.tmp, 0, sizeof f.tmp, 0 };
	add(&t, name);
	add(&t, ".tmp.");
	add_num(&t, (unsigned long)syscall(SYS_gettid));
	if (n.overflow || t.overflow)
		return -1;
	unlinkat(dir, f.tmp, 0);	/* left by a process killed while writing */
	int fd = openat(dir, f.tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	size_t done = 0;
	while (done < len) {
		ssize_t w = write(fd, text + done, len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		done += (size_t)w;
	}
	int r = close(fd) == 0 && done == len ? 0 : -1;
	if (r == 0)
		r = renameat(dir, f.tmp, dir, name);
	if (r != 0)
		unlinkat(dir, f.tmp, 0);
	return r;
}

int gmon_file_write(void (*emit)(struct gmon_out *out, void *arg), void *arg)
{
	int dir = directory();
	if (dir == -1) {
		report(f.dir_path, errno);
		return -1;
	}
	return write_in(dir, emit, arg);
}
