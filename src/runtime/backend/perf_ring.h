/*
 * perf_ring.h - reading the records of a perf_event mmap ring.
 *
 * The kernel writes records at data_head; the reader consumes from
 * data_tail and hands the space back by storing data_tail.  Only the
 * record types the perf backend asks for are understood: samples of
 * PERF_SAMPLE_IP alone, PERF_RECORD_LOST, and the throttle pair.
 */
#ifndef PROFIL_PERF_RING_H
#define PROFIL_PERF_RING_H

#include <stddef.h>
#include <stdint.h>

struct perf_ring {
	void *meta;		/* the struct perf_event_mmap_page */
	unsigned char *data;	/* data_size bytes after it */
	uint64_t data_size;	/* a power of two */
	uint64_t throttled_at;	/* time of an open THROTTLE record, or 0 */
};

/* What one drain found. */
struct ring_drained {
	uint64_t samples;	/* records handed to the callback */
	uint64_t lost;		/* samples the kernel reports it dropped (a
				   full ring, a throttle, a corrupt ring) */
};

typedef void ring_sample_fn(void *arg, uint64_t ip);

/*
 * Consume every record present, calling on_sample for each sample.
 * period_ns turns a throttled span of time into the samples it cost.
 * A record whose header makes no sense ends the drain: the rest of what
 * is present is counted as lost, so nothing goes missing unaccounted.
 */
void ring_drain(struct perf_ring *ring, uint64_t period_ns,
		ring_sample_fn *on_sample, void *arg, struct ring_drained *out);

#endif
