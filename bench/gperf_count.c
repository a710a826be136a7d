/*
 * gperf_count.c - the number of samples in a gperftools CPU profile:
 * a header of 5 words (0, 3, 0, period, 0), then records of
 * (count, depth, pcs...), ending with (0, 1, 0).  Prints the sum of the
 * counts.
 */
#include <stdint.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	FILE *f = argc > 1 ? fopen(argv[1], "rb") : NULL;
	if (!f) {
		fprintf(stderr, "gperf_count: cannot open %s\n", argc > 1 ? argv[1] : "(none)");
		return 1;
	}
	uintptr_t header[5], rec[2], pc;
	if (fread(header, sizeof header, 1, f) != 1 || header[1] != 3) {
		fprintf(stderr, "gperf_count: %s: not a gperftools profile\n", argv[1]);
		return 1;
	}
	unsigned long long total = 0;
	while (fread(rec, sizeof rec, 1, f) == 1) {
		if (rec[0] == 0 && rec[1] == 1)
			break;
		total += rec[0];
		for (uintptr_t i = 0; i < rec[1]; i++)
			if (fread(&pc, sizeof pc, 1, f) != 1)
				break;
	}
	printf("%llu\n", total);
	fclose(f);
	return 0;
}
