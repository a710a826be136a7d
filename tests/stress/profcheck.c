/*
 * profcheck FILE... - for the stress tests run under profil run: each
 * profile file is complete, its statistics add up (taken = counted +
 * outside + saturated + lost), and the counters hold exactly what the
 * header says was counted.  `profil report` cannot be asked this: it
 * reads a running file's extra counts as counted, by design.
 *
 * Prints one line per file that is wrong, then "files N taken T counted
 * C segments S", and exits 1 if any file was wrong.
 */
#include <inttypes.h>
#include <stdio.h>

#include "../../src/format/profile.h"

int main(int argc, char **argv)
{
	int bad = 0;
	uint64_t taken = 0, counted = 0, segs = 0;
	for (int i = 1; i < argc; i++) {
		struct profile p;
		char why[512];
		if (profile_open(&p, argv[i], why, sizeof why) != 0) {
			printf("%s: %s\n", argv[i], why);
			bad = 1;
			continue;
		}
		const struct profile_header *h = p.header;
		if (h->state != PROFILE_COMPLETE) {
			printf("%s: state %u, not complete\n", argv[i], h->state);
			bad = 1;
		}
		if (h->taken != h->counted + h->outside + h->saturated + h->lost) {
			printf("%s: taken %" PRIu64 " != counted %" PRIu64 " + outside %" PRIu64
			       " + saturated %" PRIu64 " + lost %" PRIu64 "\n", argv[i], h->taken,
			       h->counted, h->outside, h->saturated, h->lost);
			bad = 1;
		}
		if (p.counted != h->counted) {
			printf("%s: the counters hold %" PRIu64 ", the header says %" PRIu64
			       " counted\n", argv[i], p.counted, h->counted);
			bad = 1;
		}
		taken += h->taken;
		counted += h->counted;
		segs += p.nsegs;
		profile_close(&p);
	}
	printf("files %d taken %" PRIu64 " counted %" PRIu64 " segments %" PRIu64 "\n",
	       argc - 1, taken, counted, segs);
	return bad;
}
