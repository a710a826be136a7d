/*
 * pcsfile.c - writing a pcsample file (see pcsfile.h, pcsample(5)).
 * Runs in the profiled process, libc only; it allocates.
 */
#include <string.h>

#include "pcsfile.h"

int pcsfile_encode(struct bytes *b, const uintptr_t *samples, uint64_t n,
		   uint32_t hz, uint64_t period_ns, uint64_t pid)
{
	struct bytes map = { 0 };
	uint64_t nobjects = loadmap_build(&map);
	bytes_put(b, PCSFILE_MAGIC, 8);
	bytes_put32(b, PCSFILE_VERSION);
	bytes_put32(b, hz);
	bytes_put64(b, n);
	bytes_put64(b, nobjects);
	bytes_put64(b, pid);
	bytes_put64(b, period_ns);
	if (map.len)
		bytes_put(b, map.data, map.len);
	for (uint64_t i = 0; i < n; i++)
		bytes_put64(b, samples[i]);
	int failed = b->failed || map.failed;
	bytes_free(&map);
	return failed ? -1 : 0;
}
