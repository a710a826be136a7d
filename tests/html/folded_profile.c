/*
 * folded_profile.c - a made-up profile with stacks, for the HTML page's
 * tests and bench/html.sh: `folded_profile EXE OUT < FOLDED` reads
 * folded stacks ("outer;...;inner COUNT", names of EXE's functions) and
 * writes OUT, a profil(5) version 4 file of one process with one
 * segment over EXE's text, each stack in its stack table with its
 * count, and each sample in the histogram at its innermost function,
 * so that the flat profile and the stacks agree exactly.  A frame's pc
 * is the middle of its function (so a return address's pc - 1 is in it
 * too).  EXE is taken as loaded at its link-time addresses (bias 0).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../src/format/profile.h"

struct fn {
	char *name;
	unsigned long long start, size;
};

static struct fn *fns;
static size_t nfns;

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct fn *)a)->name, ((const struct fn *)b)->name);
}

static const struct fn *find(const char *name)
{
	struct fn key = { (char *)name, 0, 0 };
	return bsearch(&key, fns, nfns, sizeof *fns, by_name);
}

static void *grow(void *p, size_t n, size_t each)
{
	if (n & (n - 1))
		return p;
	p = realloc(p, (n ? 2 * n : 1) * each);
	if (!p) {
		perror("folded_profile");
		exit(1);
	}
	return p;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: folded_profile EXE OUT < FOLDED\n");
		return 2;
	}
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "nm -S --defined-only '%s'", argv[1]);
	FILE *p = popen(cmd, "r");
	if (!p)
		return 1;
	char line[1 << 16];
	unsigned long long lo = ~0ull, hi = 0;
	while (fgets(line, sizeof line, p)) {
		unsigned long long a, s;
		char t, name[4096];
		if (sscanf(line, "%llx %llx %c %4095s", &a, &s, &t, name) != 4 || (t != 't' && t != 'T')
		    || s < 4)
			continue;
		fns = grow(fns, nfns, sizeof *fns);
		fns[nfns++] = (struct fn){ strdup(name), a, s };
		lo = a < lo ? a : lo;
		hi = a + s > hi ? a + s : hi;
	}
	pclose(p);
	if (!nfns) {
		fprintf(stderr, "folded_profile: no functions in %s\n", argv[1]);
		return 1;
	}
	qsort(fns, nfns, sizeof *fns, by_name);
	lo &= ~1ull;
	uint64_t ncounters = (hi - lo + 1) / 2;
	uint32_t *counts = calloc(ncounters, sizeof *counts);

	/* The stacks: pcs innermost first, each stack's in the pool. */
	uint64_t *pool = NULL, total = 0;
	size_t npool = 0, nstacks = 0;
	struct profile_stack *st = NULL;
	int lineno = 0;
	while (fgets(line, sizeof line, stdin)) {
		lineno++;
		char *sp = strrchr(line, ' ');
		if (!sp)
			continue;
		unsigned long long count = strtoull(sp + 1, NULL, 10);
		*sp = 0;
		uint64_t pcs[PROFILE_DEPTH_MAX];
		size_t depth = 0;
		for (char *save, *f = strtok_r(line, ";", &save); f; f = strtok_r(NULL, ";", &save)) {
			const struct fn *x = find(f);
			if (!x || depth == PROFILE_DEPTH_MAX) {
				fprintf(stderr, "folded_profile: line %d: %s\n", lineno,
					x ? "too deep" : f);
				return 1;
			}
			pcs[depth++] = x->start + x->size / 2;
		}
		if (!depth || !count)
			continue;
		st = grow(st, nstacks, sizeof *st);
		struct profile_stack *s = &st[nstacks++];
		memset(s, 0, sizeof *s);
		s->hash = 0;
		s->count = (uint32_t)count;
		s->frames = (uint32_t)npool;
		s->depth = (uint16_t)depth;
		s->ready = 1;
		for (size_t k = depth; k-- > 0;) {
			pool = grow(pool, npool, sizeof *pool);
			pool[npool++] = pcs[k];
			s->hash = (s->hash ^ pcs[k]) * 0x100000001b3ull + 1;
		}
		counts[(pcs[depth - 1] - lo) / 2] += (uint32_t)count;
		total += count;
	}
	uint64_t slots = 16;
	while (slots < 2 * nstacks)
		slots *= 2;
	struct profile_stack *table = calloc(slots, sizeof *table);
	for (size_t i = 0; i < nstacks; i++) {
		if (!st[i].hash)
			st[i].hash = 1;
		uint64_t k = st[i].hash & (slots - 1);
		while (table[k].hash)
			k = (k + 1) & (slots - 1);
		table[k] = st[i];
	}

	struct profile_header hd;
	struct profile_ext ext;
	struct profile_segment seg;
	memset(&hd, 0, sizeof hd);
	memset(&ext, 0, sizeof ext);
	memset(&seg, 0, sizeof seg);
	uint64_t at = PROFILE_PAGE;
	ext.stacks_at = at + PROFILE_PAGE;
	ext.stack_slots = slots;
	ext.frames_at = ext.stacks_at + profile_stacks_size(slots);
	ext.frames_cap = npool ? npool : 1;
	ext.frames_used = npool;
	ext.size = PROFILE_PAGE + profile_stacks_size(slots) + profile_frames_size(ext.frames_cap);
	ext.max_depth = 128;
	ext.stacks = total;
	ext.stop[PROFILE_STOP_COMPLETE] = total;
	memcpy(hd.magic, PROFILE_MAGIC, 8);
	hd.version = PROFILE_VERSION;
	hd.state = PROFILE_COMPLETE;
	hd.byte_order = 0x01020304;
	hd.nsegments = 1;
	hd.ext_at = at;
	seg.size = profile_segment_size(ncounters, 4);
	uint64_t seg_at = at + ext.size;
	hd.end = seg_at + seg.size;
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
	if (fd < 0 || ftruncate(fd, (off_t)hd.end) != 0
	    || pwrite(fd, &hd, sizeof hd, 0) != sizeof hd
	    || pwrite(fd, &ext, sizeof ext, (off_t)at) != sizeof ext
	    || pwrite(fd, table, slots * sizeof *table, (off_t)ext.stacks_at)
	       != (ssize_t)(slots * sizeof *table)
	    || pwrite(fd, pool, npool * 8, (off_t)ext.frames_at) != (ssize_t)(npool * 8)
	    || pwrite(fd, &seg, sizeof seg, (off_t)seg_at) != sizeof seg
	    || pwrite(fd, counts, ncounters * 4, (off_t)(seg_at + PROFILE_PAGE))
	       != (ssize_t)(ncounters * 4)
	    || close(fd) != 0) {
		perror(argv[2]);
		return 1;
	}
	printf("%zu stacks, %zu frames, %llu samples\n", nstacks, npool, (unsigned long long)total);
	return 0;
}
