/*
 * merge_gmon.c - profil merge of gmon.out files, as gprof -s sums them:
 * histograms of the same range add counter by counter, call arcs of the
 * same call site and callee add their counts.  The files must be of one
 * program: a histogram over another range, or at another rate, is an
 * error naming the file.  The sum is a gmon.out (src/format/gmon.h),
 * written whole or not at all.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../format/gmon.h"
#include "cli.h"

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Add in's histograms to sum's; -1 after one line if they do not match. */
static int add_hists(struct gmon_profile *sum, struct gmon_profile *in, const char *path)
{
	if (!sum->hist) {	/* the first file's are taken over */
		sum->hist = in->hist;
		sum->nhist = in->nhist;
		in->hist = NULL;
		in->nhist = 0;
		return 0;
	}
	if (in->nhist != sum->nhist) {
		error_line("%s: %zu histograms, the first file %zu: not a profile of the same program",
			   path, in->nhist, sum->nhist);
		return -1;
	}
	for (size_t i = 0; i < in->nhist; i++) {
		const struct gmon_hist *h = &in->hist[i];
		struct gmon_hist *s = NULL;
		for (size_t j = 0; j < sum->nhist && !s; j++)
			if (sum->hist[j].low_pc == h->low_pc && sum->hist[j].high_pc == h->high_pc
			    && sum->hist[j].nbins == h->nbins)
				s = &sum->hist[j];
		if (!s) {
			error_line("%s: a histogram over [%#llx, %#llx) in %llu bins that the first "
				   "file does not have: not a profile of the same program", path,
				   (unsigned long long)h->low_pc, (unsigned long long)h->high_pc,
				   (unsigned long long)h->nbins);
			return -1;
		}
		if (s->rate != h->rate) {
			error_line("%s: sampled at %u Hz, the first file at %u Hz", path, h->rate,
				   s->rate);
			return -1;
		}
		for (uint64_t k = 0; k < h->nbins; k++)
			s->counts[k] = sat_add(s->counts[k], h->counts[k]);
	}
	return 0;
}

int merge_gmon(char **files, const char *out)
{
	struct gmon_profile sum;
	memset(&sum, 0, sizeof sum);
	size_t cap = 0;
	int status = 0;
	for (char **f = files; *f && !status; f++) {
		struct gmon_profile in;
		char why[1024];
		if (!gmon_is_file(*f)) {
			error_line("%s: not a gmon.out file: gmon.out files are merged only with "
				   "each other", *f);
			status = 1;
			break;
		}
		if (gmon_read_file(*f, &in, why, sizeof why) != 0) {
			error_line("%s", why);
			status = 1;
			break;
		}
		if (add_hists(&sum, &in, *f) != 0)
			status = 1;
		if (!status && in.narcs) {
			if (sum.narcs + in.narcs > cap) {
				cap = 2 * (sum.narcs + in.narcs);
				sum.arcs = xrealloc(sum.arcs, cap * sizeof *sum.arcs);
			}
			memcpy(sum.arcs + sum.narcs, in.arcs, in.narcs * sizeof *in.arcs);
			sum.narcs += in.narcs;
		}
		gmon_free(&in);
	}
	if (!status && sum.narcs) {	/* one arc per call site and callee */
		qsort(sum.arcs, sum.narcs, sizeof *sum.arcs, gmon_arc_order);
		size_t k = 0;
		for (size_t j = 1; j < sum.narcs; j++) {
			if (gmon_arc_order(&sum.arcs[k], &sum.arcs[j]) == 0)
				sum.arcs[k].count = sat_add(sum.arcs[k].count, sum.arcs[j].count);
			else
				sum.arcs[++k] = sum.arcs[j];
		}
		sum.narcs = k + 1;
	}
	if (!status) {
		char tmp[PATH_MAX + 32];
		int fd = temp_open(out, tmp, sizeof tmp, 0600);
		if (fd < 0) {
			status = 1;
		} else {
			int ok = gmon_write(fd, &sum) == 0;
			if (!ok)
				error_line("%s: %s", out, strerror(errno));
			if (temp_finish(fd, tmp, out, ok) != 0)
				status = 1;
		}
	}
	gmon_free(&sum);
	return status;
}
