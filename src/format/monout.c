/*
 * monout.c - writing mon.out (see monout.h, mon.out(5)).
 * Runs in the profiled process, libc only; it allocates.
 */
#include "monout.h"

int monout_encode(struct bytes *b, const void *buffer, size_t bytes, uint64_t nhist,
		  uint32_t scale, uint32_t hz, uint64_t period_ns)
{
	bytes_put(b, buffer, bytes);
	size_t map_start = b->len;
	uint64_t nobjects = loadmap_build(b);
	uint64_t trailer = b->len - map_start + MONOUT_FOOTER;
	bytes_put64(b, nobjects);
	bytes_put64(b, trailer);
	bytes_put64(b, nhist);
	bytes_put64(b, period_ns);
	bytes_put32(b, scale);
	bytes_put32(b, hz);
	bytes_put32(b, MONOUT_VERSION);
	bytes_put32(b, 0);
	bytes_put(b, MONOUT_MAGIC, 8);
	return b->failed ? -1 : 0;
}
