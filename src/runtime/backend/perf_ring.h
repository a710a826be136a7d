/*
 * perf_ring.h - reading the records of a perf_event mmap ring.
 *
 * The kernel writes records at data_head; the reader consumes from
 * data_tail and hands the space back by storing data_tail.  Only the
 * record types the perf backend asks for are understood: samples of
 * PERF_SAMPLE_IP, with PERF_SAMPLE_REGS_USER and PERF_SAMPLE_STACK_USER
 * if the ring's format says so, PERF_RECORD_LOST, and the throttle pair.
 */
#ifndef PROFIL_PERF_RING_H
#define PROFIL_PERF_RING_H

#include <stddef.h>
#include <stdint.h>

enum { RING_MAX_REGS = 8 };

struct perf_ring {
	void *meta;		/* the struct perf_event_mmap_page */
	unsigned char *data;	/* data_size bytes after it */
	uint64_t data_size;	/* a power of two */
	uint64_t throttled_at;	/* time of an open THROTTLE record, or 0 */
	/* The samples' format; all 0 for PERF_SAMPLE_IP alone. */
	unsigned nregs;		/* registers in sample_regs_user (with
				   REGS_USER; at most RING_MAX_REGS) */
	int regs;		/* PERF_SAMPLE_REGS_USER is in sample_type */
	uint64_t stack_bytes;	/* sample_stack_user (0: no STACK_USER) */
	unsigned char *scratch;	/* stack_bytes, for a copy that wraps
				   around the end of the ring */
};

/* One sample record, as far as the format has it. */
struct ring_sample {
	uint64_t ip;
	uint64_t abi;		/* PERF_SAMPLE_REGS_ABI_*: NONE (0) when the
				   record has no user registers and no stack */
	uint64_t regs[RING_MAX_REGS];	/* in the order of the mask's bits */
	const unsigned char *stack;	/* the bytes copied at the user sp, or NULL */
	uint64_t stack_size;	/* how many (dyn_size) */
	int stack_cut;		/* the copy is as long as the kernel would
				   make it: the stack may go on past it */
};

/* What one drain found. */
struct ring_drained {
	uint64_t samples;	/* records handed to the callback */
	uint64_t lost;		/* samples the kernel reports it dropped (a
				   full ring, a throttle, a corrupt ring) */
	uint64_t lost_full;	/* of lost: PERF_RECORD_LOST, a full ring */
	uint64_t lost_throttled; /* of lost: periods a throttle took */
	uint64_t lost_corrupt;	/* of lost: records that made no sense */
};

/* s and what it points to are good until the callback returns. */
typedef void ring_sample_fn(void *arg, const struct ring_sample *s);

/*
 * Consume every record present, calling on_sample for each sample.
 * period_ns turns a throttled span of time into the samples it cost.
 * A record whose header or fields make no sense ends the drain: the rest
 * of what is present is counted as lost, so nothing goes missing
 * unaccounted.
 */
void ring_drain(struct perf_ring *ring, uint64_t period_ns,
		ring_sample_fn *on_sample, void *arg, struct ring_drained *out);

#endif
