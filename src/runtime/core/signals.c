/*
 * signals.c - the program's signal calls, interposed.
 *
 * For a signal libprofil owns (sinks/sigown.h: the sampling signal,
 * SIGSEGV and SIGBUS), sigaction and the signal() family read and write
 * the program's recorded action and leave the kernel's, ours, alone: a
 * program that resets every signal to the default, or installs a
 * catch-all handler, keeps its action for everything that is not ours,
 * and is never killed or called by a sample.  The sampling signal is
 * also kept out of every mask the program sets and every set it waits
 * for (sigwait and friends, signalfd): it is sent to a running thread
 * and must be handled there, not left pending for the program.
 *
 * Every other call goes through to libc unchanged.  All of these are
 * async-signal-safe where libc's are (no lock, no allocation; the real
 * functions are found at load time).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>

#include "sinks/sigown.h"

#define EXPORT __attribute__((visibility("default")))

typedef sighandler_t signal_fn(int, sighandler_t);
typedef int mask_fn(int, const sigset_t *, sigset_t *);
typedef int sigwait_fn(const sigset_t *, int *);
typedef int sigwaitinfo_fn(const sigset_t *, siginfo_t *);
typedef int sigtimedwait_fn(const sigset_t *, siginfo_t *, const struct timespec *);
typedef int signalfd_fn(int, const sigset_t *, int);

static struct {
	signal_fn *signal, *sysv_signal;
	mask_fn *sigprocmask, *pthread_sigmask;
	sigwait_fn *sigwait;
	sigwaitinfo_fn *sigwaitinfo;
	sigtimedwait_fn *sigtimedwait;
	signalfd_fn *signalfd;
} real;

__attribute__((constructor)) static void signals_init(void)
{
	real.signal = (signal_fn *)dlsym(RTLD_NEXT, "signal");
	real.sysv_signal = (signal_fn *)dlsym(RTLD_NEXT, "sysv_signal");
	real.sigprocmask = (mask_fn *)dlsym(RTLD_NEXT, "sigprocmask");
	real.pthread_sigmask = (mask_fn *)dlsym(RTLD_NEXT, "pthread_sigmask");
	real.sigwait = (sigwait_fn *)dlsym(RTLD_NEXT, "sigwait");
	real.sigwaitinfo = (sigwaitinfo_fn *)dlsym(RTLD_NEXT, "sigwaitinfo");
	real.sigtimedwait = (sigtimedwait_fn *)dlsym(RTLD_NEXT, "sigtimedwait");
	real.signalfd = (signalfd_fn *)dlsym(RTLD_NEXT, "signalfd");
}

/* A call made before our constructor (from another library's). */
#define REAL(name) (real.name ? real.name : (signals_init(), real.name))

EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (!sigown_owned(sig))
		return sigown_real_sigaction(sig, act, old);
	if (old)
		sigown_program_get(sig, old);
	if (act)
		sigown_program_set(sig, act);
	return 0;
}

/* signal() and friends on an owned signal, through the record. */
static sighandler_t recorded(int sig, sighandler_t handler, int flags, int self_blocked)
{
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	if (self_blocked)
		sigaddset(&sa.sa_mask, sig);
	sigown_program_get(sig, &old);
	sigown_program_set(sig, &sa);
	return old.sa_handler;
}

/* BSD semantics, as glibc's signal(). */
EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	if (sigown_owned(sig))
		return recorded(sig, handler, SA_RESTART, 1);
	signal_fn *f = REAL(signal);
	if (!f) {
		errno = ENOSYS;
		return SIG_ERR;
	}
	return f(sig, handler);
}

EXPORT sighandler_t bsd_signal(int sig, sighandler_t handler)
{
	return signal(sig, handler);
}

/* System V semantics: reset on delivery, not blocked meanwhile. */
EXPORT sighandler_t sysv_signal(int sig, sighandler_t handler)
{
	if (sigown_owned(sig))
		return recorded(sig, handler, SA_RESETHAND | SA_NODEFER, 0);
	signal_fn *f = REAL(sysv_signal);
	if (!f) {
		errno = ENOSYS;
		return SIG_ERR;
	}
	return f(sig, handler);
}

/* What glibc's headers call signal() in strict ISO or X/Open modes. */
EXPORT sighandler_t __sysv_signal(int sig, sighandler_t handler)
{
	return sysv_signal(sig, handler);
}

/* set, or a copy of it without the signals the program may not block. */
static const sigset_t *allowed(const sigset_t *set, sigset_t *copy)
{
	if (!set)
		return NULL;
	*copy = *set;
	return sigown_strip(copy) ? copy : set;
}

EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	sigset_t copy;
	mask_fn *f = REAL(sigprocmask);
	if (!f) {
		errno = ENOSYS;
		return -1;
	}
	return f(how, how == SIG_UNBLOCK ? set : allowed(set, &copy), old);
}

EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	sigset_t copy;
	mask_fn *f = REAL(pthread_sigmask);
	if (!f)
		return ENOSYS;
	return f(how, how == SIG_UNBLOCK ? set : allowed(set, &copy), old);
}

EXPORT int sigwait(const sigset_t *set, int *sig)
{
	sigset_t copy;
	sigwait_fn *f = REAL(sigwait);
	return f ? f(allowed(set, &copy), sig) : ENOSYS;
}

EXPORT int sigwaitinfo(const sigset_t *set, siginfo_t *info)
{
	sigset_t copy;
	sigwaitinfo_fn *f = REAL(sigwaitinfo);
	if (!f) {
		errno = ENOSYS;
		return -1;
	}
	return f(allowed(set, &copy), info);
}

EXPORT int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *timeout)
{
	sigset_t copy;
	sigtimedwait_fn *f = REAL(sigtimedwait);
	if (!f) {
		errno = ENOSYS;
		return -1;
	}
	return f(allowed(set, &copy), info, timeout);
}

EXPORT int signalfd(int fd, const sigset_t *mask, int flags)
{
	sigset_t copy;
	signalfd_fn *f = REAL(signalfd);
	if (!f) {
		errno = ENOSYS;
		return -1;
	}
	return f(fd, allowed(mask, &copy), flags);
}
