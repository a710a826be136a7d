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

#include "core/follow.h"
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
	follow_init();
}

/* A call made before exec_init (from another library's constructor). */
#define REAL(name) (real.name ? real.name : (exec_init(), real.name))

/*
 * Under profil run, a program that will run unprofiled is named first,
 * and envp becomes one without libprofil where the loader cannot load it
 * (core/follow.c); the buffers are the wrapper's own, on its stack, as a
 * vfork child needs (an environment of more than 4096 entries is passed
 * as it is).
 */
#define FOLLOW(file, search, envp)						\
	size_t fcount_ = follow_env_count(envp);				\
	if (fcount_ > 4096)	/* not that much of the stack: passed as it is */ \
		fcount_ = 0;							\
	char *fenv_[fcount_ + 1];						\
	char fpre_[4096];							\
	char *const *fenvp_ = follow_exec(file, search, envp, fenv_, fcount_, fpre_, \
					  sizeof fpre_)

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
	FOLLOW(path, 0, envp);
	AROUND_EXEC(REAL(execve)(path, argv, fenvp_));
}

EXPORT int execv(const char *path, char *const argv[])
{
	FOLLOW(path, 0, environ);
	AROUND_EXEC(REAL(execve)(path, argv, fenvp_));
}

EXPORT int execvp(const char *file, char *const argv[])
{
	FOLLOW(file, 1, environ);
	if (fenvp_ != environ)
		AROUND_EXEC(REAL(execvpe)(file, argv, fenvp_));
	AROUND_EXEC(REAL(execvp)(file, argv));
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	FOLLOW(file, 1, envp);
	AROUND_EXEC(REAL(execvpe)(file, argv, fenvp_));
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
