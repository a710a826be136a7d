/*
 * pcsample.c - fuzz target: the pcsample-file reader
 * (src/format/pcsfile_read.c).
 *
 * A file it accepts is exactly its header, load map and samples.
 */
#include <string.h>

#include "../../src/format/pcsfile.h"
#include "support/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pcs_file f;
	const char *why = NULL;
	if (pcsfile_parse(data, size, &f, &why) != 0) {
		FUZZ_CHECK(why && *why && f.samples == NULL && f.objects == NULL);
		return 0;
	}
	FUZZ_CHECK(f.version == PCSFILE_VERSION);
	uint64_t map = 0;
	for (uint64_t i = 0; i < f.nobjects; i++) {
		FUZZ_CHECK(f.objects[i].start < f.objects[i].end && f.objects[i].name);
		map += 40 + ((strlen(f.objects[i].name) + 7) & ~(size_t)7);
	}
	/* A name may hold a NUL byte of its own: the map takes at least this. */
	FUZZ_CHECK(PCSFILE_HEADER + map + f.nsamples * 8 <= size);
	FUZZ_CHECK((size - PCSFILE_HEADER) % 8 == 0);
	for (uint64_t i = 0; i < f.nsamples; i++)
		FUZZ_CHECK(f.samples[i] == get64(data + size - 8 * (f.nsamples - i)));
	pcsfile_free(&f);
	return 0;
}
