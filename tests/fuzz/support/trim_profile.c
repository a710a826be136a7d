/*
 * trim_profile.c IN OUT [MAX [PATH]] - a real profile cut down to a seed
 * for the fuzz corpus: the header and the segments (with their system
 * counts) of at most MAX counters (1024), the header's sums made to
 * agree; with PATH, the segments name that object instead, without a
 * build ID (/proc/self/exe: the fuzz target's own symbols).  Real profiles hold libc's counters, megabytes; a seed should
 * be a few pages.  A stack table (version 4) is kept, cut to its first
 * STACKS stacks of at most DEPTH pcs, all of thread entry 0.  Used by
 * tests/fuzz/seeds.sh.
 */
#include <fcntl.h>
#include <string.h>

#include "../../../src/format/profile.h"
#include "fuzz.h"

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: trim_profile IN OUT [MAX [PATH]]\n");
		return 2;
	}
	uint64_t max = argc > 3 ? strtoull(argv[3], NULL, 10) : 1024;
	struct profile p;
	char why[512];
	if (profile_open(&p, argv[1], why, sizeof why) != 0) {
		fprintf(stderr, "trim_profile: %s: %s\n", argv[1], why);
		return 1;
	}
	static char page[PROFILE_PAGE];
	memcpy(page, p.header, sizeof *p.header);
	struct profile_header *h = (struct profile_header *)page;
	int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		perror(argv[2]);
		return 1;
	}
	uint64_t at = PROFILE_PAGE, counted = 0, system = 0;
	uint32_t n = 0;
	h->ext_at = 0;
	if (p.ext && p.nstacks) {	/* a page of slots, a page of pcs */
		enum { STACKS = 16, DEPTH = 32 };
		static struct profile_ext ext;
		static struct profile_stack slots[PROFILE_PAGE / sizeof(struct profile_stack)];
		static uint64_t pcs[PROFILE_PAGE / sizeof(uint64_t)];
		memcpy(&ext, p.ext, sizeof ext);
		ext.stack_slots = sizeof slots / sizeof *slots;
		ext.stacks_at = at + PROFILE_PAGE;
		ext.frames_at = ext.stacks_at + sizeof slots;
		ext.frames_cap = sizeof pcs / sizeof *pcs;
		ext.size = PROFILE_PAGE + sizeof slots + sizeof pcs;
		uint32_t used = 0, kept = 0;
		for (uint64_t k = 0; k < p.nstacks && kept < STACKS; k++) {
			const uint64_t *in = profile_stack_pcs(&p, &p.stacks[k]);
			if (!in)
				continue;
			struct profile_stack *s = &slots[kept++];
			*s = p.stacks[k];
			s->entry = 0;
			s->depth = s->depth < DEPTH ? s->depth : DEPTH;
			s->frames = used;
			memcpy(pcs + used, in, s->depth * sizeof *pcs);
			used += s->depth;
		}
		ext.frames_used = used;
		FUZZ_CHECK(pwrite(fd, &ext, sizeof ext, (off_t)at) == (ssize_t)sizeof ext);
		FUZZ_CHECK(pwrite(fd, slots, sizeof slots, (off_t)ext.stacks_at) == (ssize_t)sizeof slots);
		FUZZ_CHECK(pwrite(fd, pcs, sizeof pcs, (off_t)ext.frames_at) == (ssize_t)sizeof pcs);
		h->ext_at = at;
		at += ext.size;
	}
	for (size_t i = 0; i < p.nsegs; i++) {
		const struct profile_seg_view *v = &p.segs[i];
		if (v->head->ncounters > max)
			continue;
		const void *parts[2] = { v->head, v->system ? (const char *)v->system - PROFILE_PAGE : NULL };
		for (int k = 0; k < 2 && parts[k]; k++) {
			const struct profile_segment *s = parts[k];
			FUZZ_CHECK(pwrite(fd, s, s->size, (off_t)at) == (ssize_t)s->size);
			if (argc > 4) {
				static struct profile_segment head;
				memcpy(&head, s, sizeof head);
				snprintf(head.path, sizeof head.path, "%s", argv[4]);
				head.build_id_len = 0;
				FUZZ_CHECK(pwrite(fd, &head, sizeof head, (off_t)at) == (ssize_t)sizeof head);
			}
			at += s->size;
			n++;
		}
		for (uint64_t k = 0; k < v->head->ncounters; k++) {
			counted += profile_count(v, k);
			system += profile_system(v, k);
		}
	}
	/* The thread table names segments by index: not kept. */
	h->thread_entries = 0;
	h->threads_at = h->threads_size = h->thread_pcs = h->unattributed = 0;
	h->outside_at = h->outside_pcs = 0;	/* dropped too: segments follow the header */
	h->nsegments = n;
	h->end = at;
	h->counted = counted;
	h->taken = h->counted + h->outside + h->saturated + h->lost;
	h->system = system < h->system ? system : h->system;
	FUZZ_CHECK(pwrite(fd, page, sizeof page, 0) == (ssize_t)sizeof page);
	close(fd);
	profile_close(&p);
	return 0;
}
