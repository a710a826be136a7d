/*
 * profile.c - fuzz target: the profil profile-file reader
 * (src/format/profile.c), given the input as a file.
 *
 * A file it accepts holds what it says: every segment it hands out lies
 * inside the file, with counters that add up to its sums, and so does
 * its thread table.
 */
#include "../../src/format/profile.h"
#include "support/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], why[512];
	int fd = fuzz_file(data, size, path, sizeof path);
	struct profile p;
	if (profile_open(&p, path, why, sizeof why) != 0) {
		FUZZ_CHECK(why[0] && p.map == NULL && p.segs == NULL);
		close(fd);
		return 0;
	}
	const char *lo = p.map, *hi = lo + p.map_size;
	uint64_t counted = 0, system = 0;
	for (size_t i = 0; i < p.nsegs; i++) {
		const struct profile_seg_view *v = &p.segs[i];
		const char *c = v->counters;
		uint64_t bytes = v->head->ncounters * v->head->width;
		FUZZ_CHECK((const char *)v->head >= lo && c >= lo && c <= hi);
		FUZZ_CHECK(bytes <= (uint64_t)(hi - c));
		FUZZ_CHECK(!(v->head->flags & PROFILE_SEG_SYSTEM));
		if (v->system) {
			const char *s = v->system;
			FUZZ_CHECK(s >= lo && s <= hi && bytes <= (uint64_t)(hi - s));
		}
		for (uint64_t k = 0; k < v->head->ncounters; k++) {
			counted += profile_count(v, k);
			system += profile_system(v, k);
		}
	}
	FUZZ_CHECK(counted == p.counted && system == p.system);
	/* The thread table, if any, lies inside the file and adds up. */
	if (p.nthreads) {
		const char *t = (const char *)p.threads, *end = (const char *)(p.pcs + p.npcs);
		FUZZ_CHECK(t >= lo && (const char *)p.pcs >= t && end >= t && end <= hi);
		uint64_t held = p.header->unattributed;
		for (uint32_t i = 0; i < p.nthreads; i++)
			held += p.threads[i].samples;
		FUZZ_CHECK(p.header->state == PROFILE_COMPLETE ? held == counted : held <= counted);
	}
	FUZZ_CHECK(p.header->state == PROFILE_COMPLETE ? counted == p.header->counted
						      : counted >= p.header->counted);
	profile_close(&p);
	close(fd);
	return 0;
}
