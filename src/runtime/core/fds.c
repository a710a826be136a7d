/*
 * fds.c - the descriptors libprofil holds stay out of the program's way.
 *
 * A profiled program near its RLIMIT_NOFILE must still open what it
 * opens without the profiler.  So a descriptor that libprofil keeps for
 * a session (a thread's perf event, the drain thread's eventfd,
 * /proc/self/task, the directory of a gmon.out or mon.out) is given up
 * when it lies in the top quarter of the soft limit, and libprofil
 * degrades instead: a thread falls back to a CPU-time timer, auto takes
 * the timer backend, a directory is opened again by its path for each
 * listing or write.  At a limit of 4 (the least a dynamically
 * linked program runs with: three standard streams and one for the
 * loader) libprofil keeps no descriptor at all.
 *
 * Async-signal-safe (the gmon writer runs in crash handlers): getrlimit
 * and close are system calls.
 */
#include <errno.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/fds.h"

int fds_may_keep(int fd)
{
	struct rlimit lim;
	if (fd < 0 || getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY)
		return 1;
	return (rlim_t)fd < lim.rlim_cur - lim.rlim_cur / 4;
}

int fds_keep(int fd)
{
	if (fds_may_keep(fd))
		return fd;
	close(fd);
	errno = EMFILE;
	return -1;
}
