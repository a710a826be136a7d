/*
 * fds.c - the descriptors libprofil holds stay out of the program's way.
 *
 * A profiled program near its RLIMIT_NOFILE must still open what it
 * opens without the profiler.  So a descriptor that libprofil keeps for
 * a session (a thread's perf event, the drain thread's eventfd,
 * /proc/self/task) is given up when it lies in the top quarter of the
 * soft limit, and libprofil degrades instead: a thread falls back to a
 * CPU-time timer, auto takes the timer backend, /proc/self/task is
 * opened for each listing.  At a limit of 4 (the least a dynamically
 * linked program runs with: three standard streams and one for the
 * loader) libprofil keeps no descriptor at all.
 *
 * Not called from signal handlers.
 */
#include <errno.h>
#include <sys/resource.h>
#include <unistd.h>

#include "fds.h"

int fds_keep(int fd)
{
	struct rlimit lim;
	if (fd < 0 || getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY)
		return fd;
	if ((rlim_t)fd < lim.rlim_cur - lim.rlim_cur / 4)
		return fd;
	close(fd);
	errno = EMFILE;
	return -1;
}
