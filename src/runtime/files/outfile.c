/*
 * outfile.c - a file under its final name only once it is whole.
 *
 * The temporary name is the final one with ".PID.tmp" added, created
 * with O_EXCL and O_NOFOLLOW; link(2) then gives it its name, failing
 * rather than replacing a file (or a symbolic link) that is there.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "files/outfile.h"

int outfile_write(int dirfd, const char *name, const void *data, size_t len)
{
	char tmp[4096];
	int n = snprintf(tmp, sizeof tmp, "%s.%ld.tmp", name, (long)getpid());
	if (n < 0 || (size_t)n >= sizeof tmp) {
		errno = ENAMETOOLONG;
		return -1;
	}
	int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST) {
		/* Left by a process of the same pid that died mid-write. */
		unlinkat(dirfd, tmp, 0);
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	}
	if (fd < 0)
		return -1;
	const char *p = data;
	size_t left = len;
	while (left > 0) {
		ssize_t w = write(fd, p, left);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			goto fail;
		}
		p += w;
		left -= (size_t)w;
	}
	if (close(fd) != 0) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (linkat(dirfd, tmp, dirfd, name, 0) != 0)
		goto fail;
	unlinkat(dirfd, tmp, 0);
	return 0;
fail:;
	int saved = errno;
	if (fd >= 0)
		close(fd);
	unlinkat(dirfd, tmp, 0);
	errno = saved;
	return -1;
}
