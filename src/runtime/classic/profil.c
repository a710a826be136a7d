/*
 * profil.c - the classic call.
 *
 * This file must not see glibc's declaration of profil in <unistd.h>:
 * it marks the buffer nonnull, which would let the compiler delete the
 * NULL check that turns profiling off.
 */
#include <errno.h>
#include <stdint.h>

#include "../../../include/profil.h"
#include "../../common/bins.h"
#include "core/memcheck.h"
#include "core/sampler.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT int profil(unsigned short *buf, size_t bufsiz, size_t offset,
		  unsigned int scale)
{
	if (scale > BINS_SCALE_ONE) {
		errno = EINVAL;
		return -1;
	}
	if (buf == NULL || bufsiz < sizeof *buf || scale <= 1) {
		sampler_stop();
		return 0;
	}
	size_t ncounters = bufsiz / sizeof *buf;
	if (!memory_writable(buf, ncounters * sizeof *buf)) {
		errno = EFAULT;
		return -1;
	}
	struct sink_set *set = sinks_new(1);
	if (!set)
		return -1;
	set->regions[0] = (struct region){
		.offset = offset,
		.ncounters = ncounters,
		.scale = scale,
		.width = sizeof *buf,
		.base = buf,
	};
	return sampler_start(set);
}
