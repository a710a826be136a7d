/*
 * loadmap.c - fuzz target: the load-map decoder (src/format/loadmap_read.c)
 * that pcsample files and mon.out share.  The first 8 bytes are the
 * number of records, the rest the records.
 */
#include <string.h>

#include "../../src/format/loadmap.h"
#include "support/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 8)
		return 0;
	uint64_t n = get64(data);
	const unsigned char *p = data + 8, *end = data + size;
	const char *why = NULL;
	struct loadmap_entry *e = loadmap_decode(&p, end, n, &why);
	if (!e) {
		FUZZ_CHECK(why && *why && p == data + 8);
		return 0;
	}
	FUZZ_CHECK(p >= data + 8 && p <= end && (uint64_t)(p - data - 8) >= n * 40);
	for (uint64_t i = 0; i < n; i++) {
		FUZZ_CHECK(e[i].start < e[i].end && strlen(e[i].name) < LOADMAP_NAME_MAX);
		const struct loadmap_entry *hit = loadmap_find(e, n, e[i].end - 1);
		FUZZ_CHECK(hit && e[i].end - 1 >= hit->start && e[i].end - 1 < hit->end);
	}
	loadmap_free(e, n);
	return 0;
}
