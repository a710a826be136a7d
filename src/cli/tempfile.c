/*
 * tempfile.c - an output file written under a temporary name beside it
 * and renamed into place only when whole, so that no half-written file
 * is ever left under the name asked for (merge, export).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

int temp_open(const char *out, char *tmp, size_t len, int mode)
{
	snprintf(tmp, len, "%s.tmp.%d", out, (int)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		error_line("%s: %s", tmp, strerror(errno));
	return fd;
}

int temp_finish(int fd, const char *tmp, const char *out, int ok)
{
	if (fd >= 0 && close(fd) != 0 && ok) {
		error_line("%s: %s", out, strerror(errno));
		ok = 0;
	}
	if (ok && rename(tmp, out) == 0)
		return 0;
	if (ok)
		error_line("%s: %s", out, strerror(errno));
	unlink(tmp);
	return -1;
}
