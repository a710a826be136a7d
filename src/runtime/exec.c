/*
 * exec.c - the exec family, interposed.
 *
 * A new program image must inherit nothing from profiling: POSIX timers
 * die with the old image, but a sample signal already queued would be
 * delivered to the new one, whose default action for it is to die (that
 * is how glibc's profil kills programs that exec).  Each call here tears
 * the session down first (timers deleted, pending signals discarded,
 * handler back to the default) and, if the exec fails, starts it again.
 *
 * glibc's execl, execvp and friends call execve internally, without
 * going through the symbol table, so each one is interposed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <unistd.h>

#include "sampler.h"

#define EXPORT __attribute__((visibility("default")))

typedef int execve_fn(const char *, char *const[], char *const[]);
typedef int execvp_fn(const char *, char *const[]);
typedef int execvpe_fn(const char *, char *const[], char *const[]);
typedef int fexecve_fn(int, char *const[], char *const[]);
typedef int execveat_fn(int, const char *, char *const[], char *const[], int);

static void *real(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

/* Run an exec call between the tear-down and the restart. */
#define AROUND_EXEC(call)					\
	do {							\
		sampler_before_exec();				\
		int r_ = (call);				\
		int errno_ = errno;				\
		sampler_after_exec_failed();			\
		errno = errno_;					\
		return r_;					\
	} while (0)

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	execve_fn *f = (execve_fn *)real("execve");
	AROUND_EXEC(f(path, argv, envp));
}

EXPORT int execv(const char *path, char *const argv[])
{
	execve_fn *f = (execve_fn *)real("execve");
	AROUND_EXEC(f(path, argv, environ));
}

EXPORT int execvp(const char *file, char *const argv[])
{
	execvp_fn *f = (execvp_fn *)real("execvp");
	AROUND_EXEC(f(file, argv));
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	execvpe_fn *f = (execvpe_fn *)real("execvpe");
	AROUND_EXEC(f(file, argv, envp));
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	fexecve_fn *f = (fexecve_fn *)real("fexecve");
	AROUND_EXEC(f(fd, argv, envp));
}

EXPORT int execveat(int dirfd, const char *path, char *const argv[],
		    char *const envp[], int flags)
{
	execveat_fn *f = (execveat_fn *)real("execveat");
	if (!f) {
		errno = ENOSYS;
		return -1;
	}
	AROUND_EXEC(f(dirfd, path, argv, envp, flags));
}

/* Collect execl-style arguments, up to the NULL, into an array. */
#define COLLECT_ARGS(first, ap, argv, envp_out)				\
	size_t n_ = 1;							\
	va_start(ap, first);						\
	while (va_arg(ap, char *) != NULL)				\
		n_++;							\
	va_end(ap);							\
	char *argv[n_ + 1];						\
	argv[0] = (char *)(first);					\
	va_start(ap, first);						\
	for (size_t i_ = 1; i_ <= n_; i_++)				\
		argv[i_] = va_arg(ap, char *);				\
	envp_out;							\
	va_end(ap)

EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	COLLECT_ARGS(arg, ap, argv, (void)0);
	return execv(path, argv);
}

EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	COLLECT_ARGS(arg, ap, argv, (void)0);
	return execvp(file, argv);
}

EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	char **envp;
	COLLECT_ARGS(arg, ap, argv, envp = va_arg(ap, char **));
	return execve(path, argv, envp);
}
