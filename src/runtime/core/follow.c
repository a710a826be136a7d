/*
 * follow.c - the processes of a profil run that libprofil cannot follow.
 *
 * Before an exec in the tree, the new image is read (preloadable.h): a
 * statically linked program, one of another ELF class or a set-ID one
 * will run without libprofil.  A note, PROGRAM.PID.skipped in the run's
 * directory (PROFIL_RUN_DIR), names it, and profil run names it in its
 * summary.  Where libprofil itself cannot be reached any more (after a
 * chroot), the loader would print "cannot be preloaded" into the
 * program's standard error: the exec passes an environment without
 * libprofil in LD_PRELOAD instead.  The run's directory cannot be
 * reached there by its path either: a process of the run that calls
 * chroot() first opens it (O_PATH, a descriptor high enough to stay out
 * of the program's way, fds.h), so that the note of what it runs after
 * can still be written there; a process that never calls chroot holds
 * no descriptor of ours for this.
 *
 * Async-signal-safe: the exec wrappers call this in vfork children,
 * which share their parent's memory.  System calls and the caller's
 * buffers only; the one static, our own path, is set before any exec.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "../../common/preloadable.h"
#include "core/fds.h"
#include "core/follow.h"

static char self[PATH_MAX];	/* libprofil.so as the loader opened it */
static int run_dirfd = -1;	/* the run's directory, opened at chroot */

#define EXPORT __attribute__((visibility("default")))

void follow_init(void)
{
	Dl_info info;
	if (dladdr((void *)follow_init, &info) && info.dli_fname
	    && strlen(info.dli_fname) < sizeof self)
		strcpy(self, info.dli_fname);
}

/* getenv without allocating, in the environment given. */
static const char *env_in(char *const envp[], const char *name)
{
	size_t len = strlen(name);
	for (char *const *e = envp; e && *e; e++)
		if (!strncmp(*e, name, len) && (*e)[len] == '=')
			return *e + len + 1;
	return NULL;
}

struct text {
	char *p;
	size_t len, size;
};

static void put(struct text *t, const char *s)
{
	while (*s && t->len + 1 < t->size)
		t->p[t->len++] = *s++;
	t->p[t->len] = '\0';
}

static void put_num(struct text *t, unsigned long v)
{
	char d[24];
	int i = sizeof d - 1;
	d[i] = '\0';
	do
		d[--i] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	put(t, d + i);
}

/* The file execvp would run: file itself with a slash, else along PATH. */
static const char *search_path(const char *file, char *buf, size_t size)
{
	if (strchr(file, '/'))
		return file;
	const char *path = getenv("PATH");
	for (const char *d = path && *path ? path : "/bin:/usr/bin"; d;) {
		size_t len = strcspn(d, ":");
		struct text t = { buf, 0, size };
		buf[0] = '\0';
		if (len + strlen(file) + 2 <= size) {
			memcpy(buf, d, len);
			t.len = len;
			if (len)
				put(&t, "/");
			put(&t, file);
			if (access(buf, X_OK) == 0)
				return buf;
		}
		d = d[len] ? d + len + 1 : NULL;
	}
	return NULL;
}

/* PROGRAM.PID.skipped in dir (or dirfd, if not -1), saying why path
   runs unprofiled. */
static void note(int dirfd, const char *dir, const char *path, const char *interp,
		 const char *why)
{
	char name[PATH_MAX], line[PATH_MAX + 512];
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	struct text n = { name, 0, sizeof name }, l = { line, 0, sizeof line };
	if (dirfd < 0) {
		put(&n, dir);
		put(&n, "/");
	}
	put(&n, base);
	put(&n, ".");
	put_num(&n, (unsigned long)getpid());
	put(&n, ".skipped");
	put(&l, path);
	if (interp[0]) {
		put(&l, ": a script run by ");
		put(&l, interp);
	}
	put(&l, ": ");
	put(&l, why);
	put(&l, "\n");
	if (n.len + 1 >= n.size)
		return;
	int fd = openat(dirfd < 0 ? AT_FDCWD : dirfd, name,
			O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	ssize_t w = write(fd, line, l.len);
	(void)w;
	close(fd);
}

/* envp without self in LD_PRELOAD, in env (count + 1) and pre (size). */
static char *const *without_self(char *const envp[], char **env, size_t count, char *pre,
				 size_t size)
{
	const char *old = env_in(envp, "LD_PRELOAD");
	if (!old || !self[0] || count == 0)
		return envp;
	struct text t = { pre, 0, size };
	put(&t, "LD_PRELOAD=");
	size_t head = t.len;
	for (const char *p = old; *p;) {
		size_t len = strcspn(p, ": ");
		if (len && (len != strlen(self) || strncmp(p, self, len))) {
			if (t.len > head)
				put(&t, ":");
			if (t.len + len + 1 < t.size) {
				memcpy(pre + t.len, p, len);
				t.len += len;
				pre[t.len] = '\0';
			}
		}
		p += len;
		p += strspn(p, ": ");
	}
	size_t n = 0;
	for (char *const *e = envp; *e && n < count; e++)
		env[n++] = strncmp(*e, "LD_PRELOAD=", 11) ? *e : t.len > head ? pre : NULL;
	/* an emptied LD_PRELOAD left out: the NULLs squeezed */
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (env[i])
			env[k++] = env[i];
	env[k] = NULL;
	return env;
}

size_t follow_env_count(char *const envp[])
{
	size_t n = 0;
	while (envp && envp[n])
		n++;
	return n;
}

char *const *follow_exec(const char *file, int search, char *const envp[], char **env,
			 size_t count, char *pre, size_t size)
{
	const char *run = getenv("PROFIL_RUN"), *dir = getenv("PROFIL_RUN_DIR");
	if (!file || !run || !*run || !dir || !*dir || getauxval(AT_SECURE))
		return envp;
	char buf[PATH_MAX], interp[256];
	const char *path = search ? search_path(file, buf, sizeof buf) : file;
	if (self[0] && access(self, R_OK) != 0) {
		/* After a chroot: named through the directory opened before. */
		if (path && run_dirfd >= 0)
			note(run_dirfd, dir, path, "",
			     "run after chroot(), where libprofil cannot be reached");
		return without_self(envp, env, count, pre, size);
	}
	if (!path)
		return envp;
	enum preloadable why = preloadable(path, interp, sizeof interp);
	if (why != PRELOADABLE)
		note(-1, dir, path, interp, preloadable_why(why));
	return envp;
}

/*
 * chroot(2), interposed: in a run, the run's directory is opened first,
 * for the notes of the programs this process execs once inside.
 */
typedef int chroot_fn(const char *);

EXPORT int chroot(const char *path)
{
	static chroot_fn *_Atomic real;
	if (!real)
		real = (chroot_fn *)dlsym(RTLD_NEXT, "chroot");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	const char *run = getenv("PROFIL_RUN"), *dir = getenv("PROFIL_RUN_DIR");
	int opened = -1;
	if (run_dirfd < 0 && run && *run && dir && *dir && !getauxval(AT_SECURE)) {
		int saved = errno;
		opened = fds_keep(open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC));
		errno = saved;
		run_dirfd = opened;
	}
	int r = real(path);
	if (r != 0 && opened >= 0) {	/* still where it was: no need */
		int saved = errno;
		close(opened);
		run_dirfd = -1;
		errno = saved;
	}
	return r;
}
