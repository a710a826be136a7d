/*
 * seccomp.c - living with the program's seccomp mode.
 *
 * A filter may kill or trap on perf_event_open (systemd's
 * SystemCallFilter= kills by default), and a filter cannot be read back
 * without privileges: under one (seccomp_state), perf_event_open is
 * first tried in a child process of our own (seccomp_perf_refused), made
 * with a raw clone so that no fork handler runs and no SIGCHLD is sent.
 * A child killed by the filter means EPERM; otherwise its errno is the
 * answer, and only then does the process itself try.
 *
 * Strict mode kills a thread at any system call but read, write, _exit
 * and sigreturn: prctl is interposed so that, from the moment a thread
 * enters it, our handlers make none in that thread (sinks/sigown.h).
 * The program's threads in strict mode are still sampled; their system
 * time is not told apart.  seccomp(2) itself has no libc wrapper, so a
 * thread that enters strict mode with syscall(SYS_seccomp) is not seen.
 *
 * A filter the program adds later is seen by its count (seccomp_filters):
 * the perf backend opens a thread's event only at its first sample, and
 * opens none once the count has grown since the backend was opened.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <sys/wait.h>
#include <stdarg.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/seccomp.h"
#include "sinks/sigown.h"

#define EXPORT __attribute__((visibility("default")))

/* The number after "name:" in text, or -1. */
static int status_field(const char *text, const char *name)
{
	const char *line = strstr(text, name);
	if (!line)
		return -1;
	line += strlen(name);
	while (*line == ' ' || *line == '\t')
		line++;
	if (*line < '0' || *line > '9')
		return -1;
	int n = 0;
	while (*line >= '0' && *line <= '9' && n < 1000000)
		n = n * 10 + (*line++ - '0');
	return n;
}

/* The calling thread's /proc/thread-self/status into buf: its length,
   or -1. */
static long thread_status(char *buf, size_t size)
{
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/thread-self/status",
			      O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	long n = syscall(SYS_read, fd, buf, size - 1);
	syscall(SYS_close, fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return n;
}

int seccomp_state(int *filters)
{
	char buf[4096];
	*filters = -1;
	if (thread_status(buf, sizeof buf) < 0)
		return -1;
	int mode = status_field(buf, "\nSeccomp:");
	*filters = status_field(buf, "\nSeccomp_filters:");
	if (*filters < 0 && mode >= 0)
		*filters = mode != 0;	/* before Linux 5.9: 1 for any */
	return mode;
}

int seccomp_filters(void)
{
	int filters;
	seccomp_state(&filters);
	return filters;
}

/* The kernel's layout of an action, to reset one without libc. */
struct kaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	unsigned long mask;
};

int seccomp_perf_refused(void)
{
	long pid = syscall(SYS_clone, 0 /* no exit signal */, NULL, NULL, NULL, NULL);
	if (pid < 0)
		return errno;
	if (pid == 0) {
		/* A trapping filter's SIGSYS kills the child, not a handler
		   of the program's copied into it. */
		struct kaction dfl = { SIG_DFL, 0, NULL, 0 };
		syscall(SYS_rt_sigaction, SIGSYS, &dfl, NULL, sizeof dfl.mask);
		struct perf_event_attr attr;
		memset(&attr, 0, sizeof attr);
		attr.size = sizeof attr;
		attr.type = PERF_TYPE_SOFTWARE;
		attr.config = PERF_COUNT_SW_TASK_CLOCK;
		attr.disabled = 1;
		attr.exclude_kernel = 1;
		attr.exclude_hv = 1;
		long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
		syscall(SYS_exit_group, fd >= 0 ? 0 : errno & 0xff);
	}
	int status;
	long r;
	do
		r = syscall(SYS_wait4, pid, &status, __WALL, NULL);
	while (r < 0 && errno == EINTR);
	if (r != pid)
		return EPERM;
	return WIFEXITED(status) ? WEXITSTATUS(status) : EPERM;
}

EXPORT int prctl(int option, ...)
{
	va_list ap;
	va_start(ap, option);
	unsigned long a2 = va_arg(ap, unsigned long), a3 = va_arg(ap, unsigned long);
	unsigned long a4 = va_arg(ap, unsigned long), a5 = va_arg(ap, unsigned long);
	va_end(ap);
	int strict = option == PR_SET_SECCOMP && a2 == SECCOMP_MODE_STRICT;
	if (strict)	/* before: a sample may come as soon as it is on */
		sigown_strict(1);
	long r = syscall(SYS_prctl, option, a2, a3, a4, a5);
	if (strict && r != 0)
		sigown_strict(0);
	return (int)r;
}
