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

#include "core/sampler.h"

#define EXPORT __attribute__((visibility("default")))

typedef int execve_fn(const char *, char *const[], char *const[]);
typedef int execvp_fn(const char *, char *const[]);
typedef int execvpe_fn(const char *, char *const[], char *const[]);
typedef int fexecve_fn(int, char *const[], char *const[]);
typedef int execveat_fn(int, const char *, char *const[], char *const[], int);

/*
 * The real calls, found once at load time: dlsym may take locks and
 * allocate, which a vfork child (sharing its parent's memory) must not.
 */
static struct {
	execve_fn *execve;
	execvp_fn *execvp;
	execvpe_fn *execvpe;
	fexecve_fn *fexecve;
	execveat_fn *execveat;
} real;

void exec_init(void)
{
	real.execve = (execve_fn *)dlsym(RTLD_NEXT, "execve");
	real.execvp = (execvp_fn *)dlsym(RTLD_NEXT, "execvp");
	real.execvpe = (execvpe_fn *)dlsym(RTLD_NEXT, "execvpe");
	real.fexecve = (fexecve_fn *)dlsym(RTLD_NEXT, "fexecve");
	real.execveat = (execveat_fn *)dlsym(RTLD_NEXT, "execveat");
}

/* A call made before exec_init (from another library's constructor). */
#define REAL(name) (real.name ? real.name : (exec_init(), real.name))

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
	AROUND_EXEC(REAL(execve)(path, argv, envp));
}

EXPORT int execv(const char *path, char *const argv[])
{
	AROUND_EXEC(REAL(execve)(path, argv, environ));
}

EXPORT int execvp(const char *file, char *const argv[])
{
	AROUND_EXEC(REAL(execvp)(file, argv));
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	AROUND_EXEC(REAL(execvpe)(file, argv, envp));
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	AROUND_EXEC(REAL(fexecve)(fd, argv, envp));
}

EXPORT int execveat(int dirfd, const char *path, char *const argv[],
		    char *const envp[], int flags)
{
	if (!REAL(execveat)) {
		errno = ENOSYS;
		return -1;
	}
	AROUND_EXEC(real.execveat(dirfd, path, argv, envp, flags));
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
