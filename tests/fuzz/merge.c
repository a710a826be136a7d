/*
 * merge.c - fuzz target: profil merge (src/cli/merge.c, merge_gmon.c) of
 * the input as a file (a profile, or a gmon.out), through the command's
 * own entry point.
 *
 * A file merge accepts is one its reader accepts, and the merged file
 * reads back with the same samples: a complete profile with the same
 * counts, or a gmon.out with the same histograms and calls.
 */
#include <limits.h>
#include <string.h>

#include "../../src/cli/cli.h"
#include "../../src/format/gmon.h"
#include "../../src/format/profile.h"
#include "support/fuzz.h"

static void same_gmon(const struct gmon_profile *a, const struct gmon_profile *b)
{
	FUZZ_CHECK(a->nhist == b->nhist);
	for (size_t i = 0; i < a->nhist; i++) {
		FUZZ_CHECK(a->hist[i].nbins == b->hist[i].nbins);
		FUZZ_CHECK(memcmp(a->hist[i].counts, b->hist[i].counts,
				  a->hist[i].nbins * sizeof *a->hist[i].counts) == 0);
	}
	uint64_t calls_a = 0, calls_b = 0;
	for (size_t i = 0; i < a->narcs; i++)
		calls_a += a->arcs[i].count;
	for (size_t i = 0; i < b->narcs; i++)
		calls_b += b->arcs[i].count;
	FUZZ_CHECK(calls_a == calls_b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], out[PATH_MAX], why[512];
	int fd = fuzz_file(data, size, path, sizeof path);
	snprintf(out, sizeof out, "%s/merged", fuzz_dir());
	char *argv[] = { "merge", "-o", out, path, NULL };
	int is_gmon = size >= 4 && memcmp(data, GMON_MAGIC, 4) == 0;
	struct profile in, merged;
	struct gmon_profile gin, gout;
	int readable = is_gmon ? gmon_read_buffer(data, size, &gin, why, sizeof why) == 0
			       : profile_open(&in, path, why, sizeof why) == 0;
	int status = cmd_merge(4, argv);
	FUZZ_CHECK(status == (readable ? 0 : 1));
	if (readable && is_gmon) {
		FUZZ_CHECK(gmon_read_file(out, &gout, why, sizeof why) == 0);
		same_gmon(&gin, &gout);
		gmon_free(&gin);
		gmon_free(&gout);
	} else if (readable) {
		FUZZ_CHECK(profile_open(&merged, out, why, sizeof why) == 0);
		FUZZ_CHECK(merged.header->state == PROFILE_COMPLETE);
		FUZZ_CHECK(merged.counted == in.counted && merged.system == in.system);
		FUZZ_CHECK(merged.header->outside == in.header->outside);
		profile_close(&merged);
		profile_close(&in);
	}
	unlink(out);
	close(fd);
	return 0;
}
