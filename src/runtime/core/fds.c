/*
 * fds.c - the descriptors libprofil holds stay out of the program's way.
 *
 * A profiled program near its RLIMIT_NOFILE must still open what it
 * opens without the profiler.  So a descriptor that libprofil keeps for
 * a session (a thread's perf event, the directory of a gmon.out or
 * mon.out) is given up when it lies in the top quarter of the soft
 * limit, and libprofil degrades instead: a thread falls back to a
 * CPU-time timer, auto takes the timer backend, a directory is opened
 * again by its path for each listing or write.
 *
 * Nor does a kept descriptor sit at the low numbers that daemons close
 * (closefrom) and shells and supervisors dup2 onto (3, 4, 5...): it is
 * moved to half the numbers the program has below the top quarter, at
 * most 512, with F_DUPFD_CLOEXEC; under a limit so low that this half
 * starts below 16 (RLIMIT_NOFILE 21 or less), the program may need every
 * number, and libprofil keeps none.  Whoever keeps one still checks
 * that it is the same file before each use: a program may close it.
 *
 * Async-signal-safe (the gmon writer runs in crash handlers, rescans in
 * sampling handlers): getrlimit, fcntl and close, through syscall() for
 * close, which is then no cancellation point.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/fds.h"

#define HIGH_MAX 512
#define HIGH_MIN 16

/* The first number left to the program; 0 if there is no limit. */
static long fds_top(void)
{
	struct rlimit lim;
	if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY)
		return 0;
	return (long)(lim.rlim_cur - lim.rlim_cur / 4);
}

int fds_may_keep(int fd)
{
	long top = fds_top();
	return fd < 0 || top == 0 || fd < top;
}

int fds_keep(int fd)
{
	if (fd < 0)
		return fd;
	long top = fds_top();
	long base = top ? top / 2 : HIGH_MAX;
	if (base > HIGH_MAX)
		base = HIGH_MAX;
	if (base < HIGH_MIN) {	/* every number is the program's */
		syscall(SYS_close, fd);
		errno = EMFILE;
		return -1;
	}
	if (fd < base) {
		long high = syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, base);
		syscall(SYS_close, fd);
		if (high < 0) {
			errno = EMFILE;
			return -1;
		}
		fd = (int)high;
	}
	if (top == 0 || fd < top)
		return fd;
	syscall(SYS_close, fd);
	errno = EMFILE;
	return -1;
}
