/*
 * gmon.c - fuzz target: the gmon.out reader (src/format/gmon_read.c).
 *
 * What it reads must write back (gmon_write) and read again into the
 * same profile: histograms, arcs of non-zero count, basic blocks.
 */
#include <string.h>

#include "../../src/format/gmon.h"
#include "support/fuzz.h"

static void same(const struct gmon_profile *a, const struct gmon_profile *b)
{
	FUZZ_CHECK(a->nhist == b->nhist);
	for (size_t i = 0; i < a->nhist; i++) {
		const struct gmon_hist *x = &a->hist[i], *y = &b->hist[i];
		FUZZ_CHECK(x->low_pc == y->low_pc && x->high_pc == y->high_pc);
		FUZZ_CHECK(x->nbins == y->nbins && x->rate == y->rate);
		FUZZ_CHECK(strncmp(x->dimen, y->dimen, sizeof x->dimen) == 0);
		FUZZ_CHECK(x->dimen_abbrev == y->dimen_abbrev);
		FUZZ_CHECK(memcmp(x->counts, y->counts, x->nbins * sizeof *x->counts) == 0);
	}
	size_t k = 0;	/* an arc counted 0 times is not written */
	for (size_t i = 0; i < a->narcs; i++) {
		if (!a->arcs[i].count)
			continue;
		FUZZ_CHECK(k < b->narcs);
		FUZZ_CHECK(memcmp(&a->arcs[i], &b->arcs[k], sizeof a->arcs[i]) == 0);
		k++;
	}
	FUZZ_CHECK(k == b->narcs);
	FUZZ_CHECK(a->nbb == b->nbb);
	FUZZ_CHECK(a->nbb == 0 || memcmp(a->bb, b->bb, a->nbb * sizeof *a->bb) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gmon_profile p, q;
	char err[256];
	if (gmon_read_buffer(data, size, &p, err, sizeof err) != 0) {
		FUZZ_CHECK(p.nhist == 0 && p.narcs == 0 && p.nbb == 0 && err[0]);
		return 0;
	}
	for (size_t i = 1; i < p.narcs; i++)	/* sorted, unique */
		FUZZ_CHECK(p.arcs[i - 1].from_pc < p.arcs[i].from_pc
			   || (p.arcs[i - 1].from_pc == p.arcs[i].from_pc
			       && p.arcs[i - 1].self_pc < p.arcs[i].self_pc));
	int fd = memfd_create("gmon", MFD_CLOEXEC);
	FUZZ_CHECK(fd >= 0);
	FUZZ_CHECK(gmon_write(fd, &p) == 0);
	off_t len = lseek(fd, 0, SEEK_END);
	FUZZ_CHECK(len > 0);
	void *back = mmap(NULL, (size_t)len, PROT_READ, MAP_PRIVATE, fd, 0);
	FUZZ_CHECK(back != MAP_FAILED);
	FUZZ_CHECK(gmon_read_buffer(back, (size_t)len, &q, err, sizeof err) == 0);
	same(&p, &q);
	munmap(back, (size_t)len);
	close(fd);
	gmon_free(&p);
	gmon_free(&q);
	return 0;
}
