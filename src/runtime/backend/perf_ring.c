/*
 * perf_ring.c - reading the records of a perf_event mmap ring.
 *
 * Runs in the perf backend's drain thread, never in a signal handler.
 * The ring is shared with the kernel: data_head is read with acquire
 * order before the records it covers, and data_tail is stored with
 * release order after they have been read, as perf_event_open(2) says.
 */
#include <linux/perf_event.h>
#include <string.h>

#include "backend/perf_ring.h"

/* The smallest sane record: a header and one 8-byte field. */
#define MIN_RECORD (sizeof(struct perf_event_header) + 8)

/* Copy n bytes at offset pos of the ring, which may wrap. */
static void ring_copy(const struct perf_ring *ring, uint64_t pos, void *to, size_t n)
{
	uint64_t mask = ring->data_size - 1;
	size_t first = ring->data_size - (pos & mask);
	if (first > n)
		first = n;
	memcpy(to, ring->data + (pos & mask), first);
	memcpy((char *)to + first, ring->data, n - first);
}

void ring_drain(struct perf_ring *ring, uint64_t period_ns,
		ring_sample_fn *on_sample, void *arg, struct ring_drained *out)
{
	struct perf_event_mmap_page *meta = ring->meta;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail;
	out->samples = out->lost = 0;
	while (tail < head) {
		struct perf_event_header h;
		uint64_t left = head - tail;
		if (left < sizeof h)
			goto corrupt;
		ring_copy(ring, tail, &h, sizeof h);
		if (h.size < MIN_RECORD || h.size > left || h.size % 8)
			goto corrupt;
		uint64_t field[2] = { 0, 0 };	/* the first two after the header */
		ring_copy(ring, tail + sizeof h, field,
			  h.size - sizeof h < sizeof field ? h.size - sizeof h : sizeof field);
		switch (h.type) {
		case PERF_RECORD_SAMPLE:
			on_sample(arg, field[0]);
			out->samples++;
			break;
		case PERF_RECORD_LOST:	/* u64 id, u64 lost */
			out->lost += field[1];
			break;
		case PERF_RECORD_THROTTLE:	/* u64 time, ... */
			ring->throttled_at = field[0] ? field[0] : 1;
			break;
		case PERF_RECORD_UNTHROTTLE:
			/* The samples the throttled span would have held. */
			if (ring->throttled_at && field[0] > ring->throttled_at && period_ns)
				out->lost += (field[0] - ring->throttled_at) / period_ns;
			ring->throttled_at = 0;
			break;
		default:
			break;
		}
		tail += h.size;
	}
	goto done;
corrupt:
	/* Samples are the smallest records: at most this many were here. */
	out->lost += (head - tail) / MIN_RECORD;
	tail = head;
done:
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}
