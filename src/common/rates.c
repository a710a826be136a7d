/*
 * rates.c - the fastest sampling rate each backend is given here.
 * Async-signal-safe: system calls through syscall(), no allocation.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rates.h"

unsigned rate_kernel_max(void)
{
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/sys/kernel/perf_event_max_sample_rate",
			      O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	char text[32];
	long n = syscall(SYS_read, fd, text, sizeof text - 1);
	syscall(SYS_close, fd);
	if (n <= 0)
		return 0;
	unsigned long v = 0;
	long i = 0;
	for (; i < n && text[i] >= '0' && text[i] <= '9'; i++) {
		v = v * 10 + (unsigned long)(text[i] - '0');
		if (v > 0xffffffffu)
			return 0;
	}
	return i > 0 && (i == n || text[i] == '\n') ? (unsigned)v : 0;
}

unsigned rate_perf_max(void)
{
	unsigned k = rate_kernel_max();
	return k && k < RATE_PERF_DELIVERS ? k : RATE_PERF_DELIVERS;
}
