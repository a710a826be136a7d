/*
 * perf_ring.c - reading the records of a perf_event mmap ring.
 *
 * Runs in signal handlers (the perf backend drains a thread's ring in
 * that thread's own drain timer): async-signal-safe and lock-free, no
 * allocation; a stack copy that wraps around the end of the ring goes to
 * the ring's scratch buffer, whose user is the ring's one claimant.
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

/*
 * The fields of a sample record of size bytes after its header at pos;
 * -1 if they do not fit the record or the format.
 */
static int parse_sample(const struct perf_ring *ring, uint64_t pos, uint64_t size,
			struct ring_sample *s)
{
	uint64_t off = 8;
	s->abi = 0;
	s->stack = NULL;
	s->stack_size = 0;
	s->stack_cut = 0;
	if (size < off)
		return -1;
	ring_copy(ring, pos, &s->ip, 8);
	if (ring->regs) {
		if (size - off < 8)
			return -1;
		ring_copy(ring, pos + off, &s->abi, 8);
		off += 8;
		/* No user registers (a kernel thread's sample): none follow. */
		if (s->abi != PERF_SAMPLE_REGS_ABI_NONE) {
			uint64_t n = (uint64_t)ring->nregs * 8;
			if (ring->nregs > RING_MAX_REGS || size - off < n)
				return -1;
			ring_copy(ring, pos + off, s->regs, n);
			off += n;
		}
	}
	if (ring->stack_bytes) {
		uint64_t want, got;
		if (size - off < 8)
			return -1;
		ring_copy(ring, pos + off, &want, 8);
		off += 8;
		if (want == 0)	/* no registers, no stack: no dyn_size either */
			return 0;
		if (want > ring->stack_bytes || want % 8 || size - off < want + 8)
			return -1;
		ring_copy(ring, pos + off + want, &got, 8);
		if (got > want)
			return -1;
		uint64_t at = (pos + off) & (ring->data_size - 1);
		if (at + got <= ring->data_size)
			s->stack = ring->data + at;
		else if (ring->scratch) {
			ring_copy(ring, pos + off, ring->scratch, got);
			s->stack = ring->scratch;
		} else
			return 0;
		s->stack_size = got;
		s->stack_cut = got == want;
	}
	return 0;
}

void ring_drain(struct perf_ring *ring, uint64_t period_ns,
		ring_sample_fn *on_sample, void *arg, struct ring_drained *out)
{
	struct perf_event_mmap_page *meta = ring->meta;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail;
	out->samples = out->lost = out->lost_full = out->lost_throttled = out->lost_corrupt = 0;
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
		struct ring_sample s;
		switch (h.type) {
		case PERF_RECORD_SAMPLE:
			if (parse_sample(ring, tail + sizeof h, h.size - sizeof h, &s) != 0)
				goto corrupt;
			on_sample(arg, &s);
			out->samples++;
			break;
		case PERF_RECORD_LOST:	/* u64 id, u64 lost */
			out->lost_full += field[1];
			break;
		case PERF_RECORD_THROTTLE:	/* u64 time, ... */
			ring->throttled_at = field[0] ? field[0] : 1;
			break;
		case PERF_RECORD_UNTHROTTLE:
			/* The samples the throttled span would have held. */
			if (ring->throttled_at && field[0] > ring->throttled_at && period_ns)
				out->lost_throttled += (field[0] - ring->throttled_at) / period_ns;
			ring->throttled_at = 0;
			break;
		default:
			break;
		}
		tail += h.size;
	}
	goto done;
corrupt:
	/* Samples are the smallest records (without registers, which a
	   kernel thread's lack): at most this many were here. */
	out->lost_corrupt = (head - tail) / (MIN_RECORD + (ring->regs ? 8 : 0)
					     + (ring->stack_bytes ? 8 : 0));
	tail = head;
done:
	out->lost = out->lost_full + out->lost_throttled + out->lost_corrupt;
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}
