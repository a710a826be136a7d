/*
 * html_profile.c - a made-up profile for bench/html.sh: `html_profile EXE
 * OUT PER` reads the functions of EXE (nm -S: address and size of each
 * f_NNNNNN) and writes OUT, a profil(5) file of one segment over their
 * text with PER distinct addresses counted in each function, counts
 * falling off with the function's rank as in real profiles.  EXE must be
 * loaded at its link-time addresses' bias 0 (the file says so).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/format/profile.h"

struct fn {
	unsigned long long start, size;
};

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: html_profile EXE OUT PER\n");
		return 2;
	}
	int per = atoi(argv[3]);
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "nm -S --defined-only '%s'", argv[1]);
	FILE *p = popen(cmd, "r");
	if (!p)
		return 1;
	struct fn *v = NULL;
	size_t n = 0, cap = 0;
	char line[1024];
	unsigned long long lo = ~0ull, hi = 0;
	while (fgets(line, sizeof line, p)) {
		unsigned long long a, s;
		char t, name[512];
		if (sscanf(line, "%llx %llx %c %511s", &a, &s, &t, name) != 4 || strncmp(name, "f_", 2))
			continue;
		if (s < 2ull * per) {
			fprintf(stderr, "html_profile: %s is %llu bytes, too small for %d addresses\n",
				name, s, per);
			return 1;
		}
		if (n == cap && !(v = realloc(v, (cap = cap ? 2 * cap : 1024) * sizeof *v)))
			return 1;
		v[n++] = (struct fn){ a, s };
		lo = a < lo ? a : lo;
		hi = a + s > hi ? a + s : hi;
	}
	pclose(p);
	if (!n) {
		fprintf(stderr, "html_profile: no f_ functions in %s\n", argv[1]);
		return 1;
	}
	lo &= ~1ull;
	uint64_t ncounters = (hi - lo + 1) / 2;
	uint32_t *counts = calloc(ncounters, sizeof *counts);
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++) {
		/* function i (in address order, shuffled by a hash) gets a rank */
		uint64_t h = (i + 1) * 0x9e3779b97f4a7c15ull;
		double weight = 1e6 / (double)(1 + (h >> 40) % n);
		for (int j = 0; j < per; j++) {
			uint64_t off = (v[i].size / 2 / per) * j * 2;
			uint64_t c = 1 + (uint64_t)(weight * (j + 1) / per) % 5000;
			counts[(v[i].start + off - lo) / 2] += (uint32_t)c;
			total += c;
		}
	}
	struct profile_header hd;
	struct profile_segment seg;
	memset(&hd, 0, sizeof hd);
	memset(&seg, 0, sizeof seg);
	memcpy(hd.magic, PROFILE_MAGIC, 8);
	hd.version = PROFILE_VERSION;
	hd.state = PROFILE_COMPLETE;
	hd.byte_order = 0x01020304;
	hd.nsegments = 1;
	seg.size = profile_segment_size(ncounters, 4);
	hd.end = PROFILE_PAGE + seg.size;
	hd.pid = getpid();
	hd.hz = 1000;
	hd.backend = 1;
	hd.threads = 1;
	hd.start_ns = 1700000000000000000ull;
	hd.update_ns = hd.start_ns + total * 1000000ull;
	hd.taken = hd.counted = hd.observed = total;
	hd.cpu_ns = total * 1000000ull;
	snprintf(hd.command, sizeof hd.command, "%s", argv[1]);
	seg.start = lo;
	seg.ncounters = ncounters;
	seg.vaddr = lo;
	seg.length = hi - lo;
	seg.counted = total;
	seg.scale = 0x10000;
	seg.width = 4;
	seg.flags = PROFILE_SEG_MAIN;
	if (!realpath(argv[1], seg.path))
		return 1;
	int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	char page[PROFILE_PAGE] = { 0 };
	memcpy(page, &hd, sizeof hd);
	if (fd < 0 || write(fd, page, sizeof page) != sizeof page
	    || write(fd, &seg, sizeof seg) != sizeof seg
	    || write(fd, counts, ncounters * 4) != (ssize_t)(ncounters * 4)
	    || ftruncate(fd, (off_t)hd.end) != 0 || close(fd) != 0) {
		perror(argv[2]);
		return 1;
	}
	printf("%zu functions, %zu addresses, %llu samples\n", n, n * (size_t)per,
	       (unsigned long long)total);
	return 0;
}
