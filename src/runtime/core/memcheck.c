/*
 * memcheck.c - checking a buffer against /proc/self/maps.
 *
 * profil() must answer EFAULT for a buffer that is not writable memory
 * before it starts anything.  Probing by writing would race with the
 * program; the mapping list says it without touching the buffer.
 * Read with read(2) into a fixed buffer: no stdio, no allocation.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "core/memcheck.h"

static const char *parse_hex(const char *p, const char *end, uint64_t *v)
{
	uint64_t x = 0;
	int digits = 0;
	for (; p < end; p++, digits++) {
		int d;
		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else
			break;
		x = x << 4 | (uint64_t)d;
	}
	*v = x;
	return digits ? p : NULL;
}

/*
 * One line "start-end perms ...": if the mapping is writable and covers
 * *next, move *next to its end.  Mappings come in address order, so one
 * pass suffices.
 */
static void consider(const char *line, const char *end, uint64_t *next)
{
	uint64_t start, stop;
	const char *p = parse_hex(line, end, &start);
	if (!p || p >= end || *p != '-')
		return;
	p = parse_hex(p + 1, end, &stop);
	if (!p || end - p < 4 || p[0] != ' ')
		return;
	if (p[2] == 'w' && start <= *next && *next < stop)
		*next = stop;
}

bool memory_writable(const void *ptr, size_t len)
{
	uint64_t next = (uintptr_t)ptr;
	uint64_t want = next + len;
	if (len == 0)
		return true;
	if (want < next)
		return false;	/* wraps around the address space */
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	char buf[8192];
	size_t have = 0;
	for (;;) {
		ssize_t n = read(fd, buf + have, sizeof buf - have);
		if (n <= 0)
			break;
		have += (size_t)n;
		char *line = buf, *nl;
		while ((nl = memchr(line, '\n', have - (size_t)(line - buf))) != NULL) {
			consider(line, nl, &next);
			line = nl + 1;
		}
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
		if (have == sizeof buf)
			have = 0;	/* a line longer than the buffer: skip it */
		if (next >= want)
			break;
	}
	close(fd);
	return next >= want;
}
