/*
 * monitor.c - Solaris monitor(3C): a histogram of [lowpc, highpc) in the
 * program's buffer, after a header and call-count cells, written to
 * mon.out (or $PROFDIR/PID.PROGNAME) when monitor(NULL, ...) stops it
 * or the process exits.
 *
 * The histogram is one profil-style sink; its scale is the finest that
 * fits the buffer, from bins_scale_for_range(), which the reader of the
 * file calls too.  The directory is opened when profiling starts, so a
 * later chdir does not move the file (SPEC section 6).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "../../../include/profil.h"
#include "../../common/bins.h"
#include "../../format/monout.h"
#include "core/fds.h"
#include "core/memcheck.h"
#include "files/outfile.h"
#include "core/sampler.h"

#define EXPORT __attribute__((visibility("default")))

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	int on;			/* a buffer is being filled */
	unsigned short *buffer;
	size_t bytes;		/* of the whole buffer */
	uint64_t nhist;
	uint32_t scale;
	int dirfd;		/* where the file goes, or -1: */
	char dir_path[PATH_MAX];	/* then this, opened to write (fds.c) */
	int named_by_pid;	/* PROFDIR: PID.PROGNAME, else mon.out */
} mon = { .dirfd = -1 };

/* PROFDIR, unless the program runs set-user-ID or set-group-ID. */
static const char *profdir(void)
{
	return getauxval(AT_SECURE) ? NULL : getenv("PROFDIR");
}

static void put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* Stop sampling into the buffer and write the file.  Under lock. */
static int finish(void)
{
	if (!mon.on)
		return 0;
	sampler_stop_owner(OWNER_MONITOR);
	mon.on = 0;
	struct bytes b = { 0 };
	int r = monout_encode(&b, mon.buffer, mon.bytes, mon.nhist, mon.scale,
			      sampler_hz(), sampler_period_ns());
	if (r != 0) {
		errno = ENOMEM;
	} else {
		char name[300];
		if (mon.named_by_pid)
			snprintf(name, sizeof name, "%ld.%s", (long)getpid(),
				 program_invocation_short_name);
		else
			snprintf(name, sizeof name, "mon.out");
		char path[PATH_MAX + 300];	/* the directory not held: by path */
		if (mon.dirfd < 0)
			snprintf(path, sizeof path, "%s/%s", mon.dir_path, name);
		r = mon.dirfd >= 0 ? outfile_write(mon.dirfd, name, b.data, b.len)
			: outfile_write(AT_FDCWD, path, b.data, b.len);
	}
	int saved = errno;
	bytes_free(&b);
	if (mon.dirfd >= 0)
		close(mon.dirfd);
	mon.dirfd = -1;
	errno = saved;
	return r;
}

static void at_exit(void)
{
	pthread_mutex_lock(&lock);
	if (mon.on && finish() != 0)
		fprintf(stderr, "libprofil: mon.out not written: %s\n", strerror(errno));
	pthread_mutex_unlock(&lock);
}

static int start(uintptr_t low, uintptr_t high, unsigned short *buffer, size_t bufsize,
		 size_t nfunc)
{
	const char *dir = profdir();
	if (dir && *dir == '\0')
		return 0;	/* PROFDIR set and empty: no profiling */
	if (high <= low || bufsize > SIZE_MAX / 2 || nfunc > SIZE_MAX / MONOUT_CNT
	    || bufsize * 2 < MONOUT_HDR + nfunc * MONOUT_CNT + 2) {
		errno = EINVAL;
		return -1;
	}
	size_t bytes = bufsize * 2;
	if (!buffer || (uintptr_t)buffer % 8 != 0) {
		errno = buffer ? EINVAL : EFAULT;
		return -1;
	}
	if (!memory_writable(buffer, bytes)) {
		errno = EFAULT;
		return -1;
	}
	uint64_t nhist = (bytes - MONOUT_HDR - nfunc * MONOUT_CNT) / 2;
	uint32_t scale = bins_scale_for_range(low, high, nhist);
	if (scale < 2) {
		errno = EINVAL;	/* not even one counter per 64 KiB */
		return -1;
	}
	int dirfd = open(dir ? dir : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return -1;
	struct sink_set *set = sinks_new(1);
	if (!set) {
		close(dirfd);
		return -1;
	}
	/* Solaris's header, call-count cells nothing fills here, and a
	   histogram from zero: the whole buffer is monitor's. */
	unsigned char *hdr = (unsigned char *)buffer;
	memset(hdr, 0, bytes);
	put64(hdr, low);
	put64(hdr + 8, high);
	put64(hdr + 16, nfunc);
	set->owner = OWNER_MONITOR;
	set->regions[0] = (struct region){
		.offset = low,
		.ncounters = nhist,
		.scale = scale,
		.width = 2,
		.base = hdr + MONOUT_HDR + nfunc * MONOUT_CNT,
		.kind = REGION_BINS,
	};
	if (sampler_start(set) != 0) {
		int saved = errno;
		close(dirfd);
		errno = saved;
		return -1;
	}
	if (mon.dirfd >= 0)
		close(mon.dirfd);	/* a buffer replaced before it was written */
	mon.dir_path[0] = '\0';
	if (!fds_may_keep(dirfd)) {	/* the program's descriptors come first */
		if (!realpath(dir ? dir : ".", mon.dir_path))
			mon.dir_path[0] = '\0';
		close(dirfd);
		dirfd = -1;
	}
	mon.on = 1;
	mon.buffer = buffer;
	mon.bytes = bytes;
	mon.nhist = nhist;
	mon.scale = scale;
	mon.dirfd = dirfd;
	mon.named_by_pid = dir != NULL;
	static int registered;
	if (!registered && atexit(at_exit) == 0)
		registered = 1;
	return 0;
}

EXPORT int monitor(int (*lowpc)(void), int (*highpc)(void), unsigned short *buffer,
		   size_t bufsize, size_t nfunc)
{
	pthread_mutex_lock(&lock);
	int r = lowpc == NULL ? finish()
		: start((uintptr_t)lowpc, (uintptr_t)highpc, buffer, bufsize, nfunc);
	pthread_mutex_unlock(&lock);
	return r;
}

static void after_fork_child(void)
{
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
	lock = fresh;
}

__attribute__((constructor)) static void monitor_init(void)
{
	pthread_atfork(NULL, NULL, after_fork_child);
}
