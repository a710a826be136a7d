/*
 * monout.c - fuzz target: the mon.out reader (src/format/monout_read.c).
 *
 * A mon.out it accepts has a histogram whose scale its range gives, and
 * a load map of sound segments.
 */
#include "../../src/common/bins.h"
#include "../../src/format/monout.h"
#include "support/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct monout m;
	const char *why = NULL;
	if (monout_parse(data, size, &m, &why) != 0) {
		FUZZ_CHECK(why && *why && m.cnt == NULL && m.hist == NULL && m.objects == NULL);
		return 0;
	}
	FUZZ_CHECK(m.nhist > 0 && m.highpc > m.lowpc);
	FUZZ_CHECK(m.scale == bins_scale_for_range(m.lowpc, m.highpc, m.nhist));
	FUZZ_CHECK(MONOUT_HDR + m.nfunc * MONOUT_CNT + m.nhist * 2 + MONOUT_FOOTER <= size);
	for (uint64_t i = 0; i < m.nobjects; i++) {
		FUZZ_CHECK(m.objects[i].start < m.objects[i].end && m.objects[i].name);
		FUZZ_CHECK(loadmap_find(m.objects, m.nobjects, m.objects[i].start) != NULL);
	}
	monout_free(&m);
	return 0;
}
