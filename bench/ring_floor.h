/*
 * ring_floor.h - the least a perf ring sampler can cost: the same event
 * libprofil's perf backend opens (user-only task clock, PERF_SAMPLE_IP,
 * an 8-page ring woken at half), drained by a thread that only counts
 * the records.  What libprofil costs above this is its own.
 */
#ifndef BENCH_RING_FLOOR_H
#define BENCH_RING_FLOOR_H

#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static struct {
	int fd;
	struct perf_event_mmap_page *meta;
	unsigned char *data;
	uint64_t size;
	atomic_int stop;
	pthread_t drainer;
	uint64_t records, samples, lost;
} floor_ring;

static void floor_drain(void)
{
	uint64_t head = __atomic_load_n(&floor_ring.meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = floor_ring.meta->data_tail;
	while (tail < head) {
		struct perf_event_header h;
		uint64_t at = tail & (floor_ring.size - 1);
		if (at + sizeof h <= floor_ring.size)	/* headers are 8-aligned */
			memcpy(&h, floor_ring.data + at, sizeof h);
		else
			break;
		if (h.size == 0)
			break;
		floor_ring.records++;
		if (h.type == PERF_RECORD_SAMPLE)
			floor_ring.samples++;
		else if (h.type == PERF_RECORD_LOST) {
			uint64_t lost[2];
			for (int i = 0; i < 16; i++)
				((unsigned char *)lost)[i] =
					floor_ring.data[(at + 8 + i) & (floor_ring.size - 1)];
			floor_ring.lost += lost[1];
		}
		tail += h.size;
	}
	__atomic_store_n(&floor_ring.meta->data_tail, head, __ATOMIC_RELEASE);
}

static void *floor_loop(void *unused)
{
	(void)unused;
	struct pollfd p = { .fd = floor_ring.fd, .events = POLLIN };
	while (!atomic_load(&floor_ring.stop)) {
		poll(&p, 1, 50);
		floor_drain();
	}
	return NULL;
}

static int ring_floor_start(unsigned hz)
{
	const unsigned pages = 8;
	long page = sysconf(_SC_PAGESIZE);
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof attr);
	attr.size = sizeof attr;
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.sample_period = 1000000000u / hz;
	attr.sample_type = PERF_SAMPLE_IP;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	attr.watermark = 1;
	attr.wakeup_watermark = pages * page / 2;
	floor_ring.fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (floor_ring.fd < 0)
		return -1;
	void *map = mmap(NULL, (pages + 1) * page, PROT_READ | PROT_WRITE, MAP_SHARED,
			 floor_ring.fd, 0);
	if (map == MAP_FAILED)
		return -1;
	floor_ring.meta = map;
	floor_ring.data = (unsigned char *)map + page;
	floor_ring.size = (uint64_t)pages * page;
	if (pthread_create(&floor_ring.drainer, NULL, floor_loop, NULL) != 0)
		return -1;
	return ioctl(floor_ring.fd, PERF_EVENT_IOC_ENABLE, 0);
}

/* Stop, drain what is left; the samples recorded. */
static uint64_t ring_floor_stop(void)
{
	ioctl(floor_ring.fd, PERF_EVENT_IOC_DISABLE, 0);
	atomic_store(&floor_ring.stop, 1);
	pthread_join(floor_ring.drainer, NULL);
	floor_drain();
	return floor_ring.samples;
}

#endif
