/*
 * loadmap_read.c - decoding a load map (see loadmap.h).  Every length is
 * checked against the end of the input before it is used.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loadmap.h"

void loadmap_free(struct loadmap_entry *e, uint64_t n)
{
	if (!e)
		return;
	for (uint64_t i = 0; i < n; i++)
		free(e[i].name);
	free(e);
}

struct loadmap_entry *loadmap_decode(const unsigned char **pp, const unsigned char *end,
				     uint64_t n, const char **why)
{
	const unsigned char *p = *pp;
	/* Each record takes at least 40 bytes: n cannot pass what is there. */
	if (n > (uint64_t)(end - p) / 40) {
		*why = "load map longer than the file";
		return NULL;
	}
	struct loadmap_entry *e = calloc(n ? n : 1, sizeof *e);
	if (!e) {
		*why = "out of memory";
		return NULL;
	}
	for (uint64_t i = 0; i < n; i++) {
		if (end - p < 40) {
			*why = "truncated load map";
			goto bad;
		}
		e[i].start = get64(p);
		e[i].end = get64(p + 8);
		e[i].bias = get64(p + 16);
		e[i].file_offset = get64(p + 24);
		uint32_t len = get32(p + 32);
		p += 40;
		size_t padded = ((size_t)len + 7) & ~(size_t)7;
		if (len >= LOADMAP_NAME_MAX || (size_t)(end - p) < padded) {
			*why = "bad path length in the load map";
			goto bad;
		}
		if (e[i].end <= e[i].start) {
			*why = "empty or reversed segment in the load map";
			goto bad;
		}
		e[i].name = malloc(len + 1);
		if (!e[i].name) {
			*why = "out of memory";
			goto bad;
		}
		memcpy(e[i].name, p, len);
		e[i].name[len] = '\0';
		p += padded;
	}
	*pp = p;
	return e;
bad:
	loadmap_free(e, n);
	return NULL;
}

const struct loadmap_entry *loadmap_find(const struct loadmap_entry *e, uint64_t n,
					 uint64_t pc)
{
	for (uint64_t i = 0; i < n; i++)
		if (pc >= e[i].start && pc < e[i].end)
			return &e[i];
	return NULL;
}

int file_slurp(const char *path, unsigned char **data, size_t *len, const char **why)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		*why = strerror(errno);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > (1 << 30)) {
		*why = S_ISREG(st.st_mode) ? "larger than 1 GiB" : "not a regular file";
		close(fd);
		return -1;
	}
	size_t size = (size_t)st.st_size, have = 0;
	unsigned char *buf = malloc(size ? size : 1);
	if (!buf) {
		*why = "out of memory";
		close(fd);
		return -1;
	}
	while (have < size) {
		ssize_t n = read(fd, buf + have, size - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
	}
	close(fd);
	*data = buf;
	*len = have;	/* a file that shrank is read as it is now */
	return 0;
}
