/*
 * pcsample.c - Solaris pcsample(2): every sample's raw pc, in order,
 * into the caller's array until it is full.
 *
 * The array is one REGION_PCS sink (sink.c stores into it).  Its slot
 * index lives here, not in the sink set, because the count must be read
 * after the set is gone: pcsample returns the number stored by the
 * previous call.  Two indexes alternate, so that starting a new array
 * never resets the one whose count is still to be read; once
 * sampler_start() has replaced the set, no handler touches the old one.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>

#include "../../../include/profil.h"
#include "../../format/pcsfile.h"
#include "core/memcheck.h"
#include "files/outfile.h"
#include "core/sampler.h"

#define EXPORT __attribute__((visibility("default")))

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint64_t next[2];	/* slots claimed, per array */
static uint64_t size[2];		/* slots in the array */
static int turn = -1;			/* which index the last call used */

static long stored(int t)
{
	uint64_t n = atomic_load(&next[t]);
	return (long)(n < size[t] ? n : size[t]);
}

EXPORT long pcsample(uintptr_t samples[], long nsamples)
{
	if (nsamples < 0) {
		errno = EINVAL;
		return -1;
	}
	if (nsamples > 0
	    && (samples == NULL || (unsigned long)nsamples > SIZE_MAX / sizeof *samples
		|| !memory_writable(samples, (size_t)nsamples * sizeof *samples))) {
		errno = EFAULT;
		return -1;
	}
	pthread_mutex_lock(&lock);
	int prev = turn;
	if (nsamples == 0) {
		sampler_stop_owner(OWNER_PCSAMPLE);
		turn = -1;
	} else {
		int t = prev == 0;
		struct sink_set *set = sinks_new(1);
		if (!set) {
			pthread_mutex_unlock(&lock);
			return -1;
		}
		atomic_store(&next[t], 0);
		size[t] = (uint64_t)nsamples;
		set->owner = OWNER_PCSAMPLE;
		set->regions[0] = (struct region){
			.ncounters = (uint64_t)nsamples,
			.width = sizeof *samples,
			.base = samples,
			.kind = REGION_PCS,
			.next = &next[t],
		};
		if (sampler_start(set) != 0) {
			pthread_mutex_unlock(&lock);
			return -1;
		}
		turn = t;
	}
	long n = prev < 0 ? 0 : stored(prev);
	pthread_mutex_unlock(&lock);
	return n;
}

static void after_fork_child(void)
{
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
	lock = fresh;
}

__attribute__((constructor)) static void pcsample_init(void)
{
	pthread_atfork(NULL, NULL, after_fork_child);
}

EXPORT int profil_pcsample_save(const char *path, const uintptr_t samples[],
				long nsamples)
{
	if (path == NULL || *path == '\0' || nsamples < 0) {
		errno = path == NULL ? EFAULT : EINVAL;
		return -1;
	}
	if (nsamples > 0 && samples == NULL) {
		errno = EFAULT;
		return -1;
	}
	struct bytes b = { 0 };
	uint64_t period = sampler_period_ns();
	if (pcsfile_encode(&b, samples, (uint64_t)nsamples, sampler_hz(), period,
			   (uint64_t)getpid()) != 0) {
		bytes_free(&b);
		errno = ENOMEM;
		return -1;
	}
	int r = outfile_write(AT_FDCWD, path, b.data, b.len);
	int saved = errno;
	bytes_free(&b);
	errno = saved;
	return r;
}
