/*
 * attach_perf.c - the perf events of profil run -p: one task-clock
 * event per thread of the target, opened from outside, and its ring.
 *
 * A per-thread event (cpu -1) cannot be inherited and still mapped, so
 * each thread has an event and a ring of its own, and attach.c watches
 * /proc/PID/task for threads made later.  Every event asks for
 * PERF_RECORD_MMAP2 as well (mmap2, not mmap_data): the kernel writes
 * the record into the ring of the thread that maps, so each ring must.
 *
 * When the kernel may be sampled, a sample carries the user registers
 * too (PERF_SAMPLE_REGS_USER, the pc alone): a sample taken in the
 * kernel is charged to the pc where the thread entered it, as a system
 * count, which is what libprofil does with a thread's system time.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <asm/perf_regs.h>
#define USER_PC_REG PERF_REG_X86_IP
#elif defined(__aarch64__)
#include <asm/perf_regs.h>
#define USER_PC_REG PERF_REG_ARM64_PC
#endif

#include "attach.h"

#define RING_PAGES 16		/* data pages: ~100 ms at 10 kHz */

int attach_event_probe(const struct attach_config *c, pid_t tid)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof attr);
	attr.size = sizeof attr;
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.sample_period = c->period_ns;
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
#ifdef USER_PC_REG
	if (!c->user_only) {
		attr.sample_type |= PERF_SAMPLE_REGS_USER;
		attr.sample_regs_user = UINT64_C(1) << USER_PC_REG;
	}
#endif
	attr.disabled = 1;
	attr.exclude_kernel = c->user_only;
	attr.exclude_hv = 1;
	attr.mmap = 1;
	attr.mmap2 = 1;
	attr.comm = 1;
	attr.watermark = 1;
	attr.wakeup_watermark = RING_PAGES * 4096 / 2;
	return (int)syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

int attach_event_open(const struct attach_config *c, struct attach_thread *t)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	static const unsigned sizes[] = { RING_PAGES, 4, 1 };
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		int fd = attach_event_probe(c, t->tid);
		if (fd < 0)
			return -1;
		size_t size = (sizes[k] + 1) * page;
		void *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (map == MAP_FAILED) {
			int err = errno;
			close(fd);
			errno = err;
			if (err != EPERM && err != ENOMEM)	/* not for want of locked memory */
				return -1;
			continue;
		}
		t->fd = fd;
		t->map = map;
		t->map_size = size;
		t->data_size = (uint64_t)sizes[k] * page;
		if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
			int err = errno;
			munmap(map, size);
			close(fd);
			t->fd = -1;
			errno = err;
			return -1;
		}
		return 0;
	}
	return -1;
}

/* n bytes at pos of the ring, which may wrap. */
static void ring_copy(const struct attach_thread *t, uint64_t pos, void *to, size_t n)
{
	const unsigned char *data = (const unsigned char *)t->map + (t->map_size - t->data_size);
	uint64_t mask = t->data_size - 1;
	size_t first = t->data_size - (pos & mask);
	if (first > n)
		first = n;
	memcpy(to, data + (pos & mask), first);
	memcpy((char *)to + first, data, n - first);
}

static void sample(const struct attach_config *c, struct attach_thread *t,
		   const unsigned char *r, size_t size, unsigned misc)
{
	/* ip, pid, tid; then, with the user registers, abi and the pc. */
	uint64_t ip;
	if (size < 16)
		return;
	memcpy(&ip, r, 8);
	int system = (misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
	if (system) {
		uint64_t abi = 0, pc = 0;
		if (c->user_only || size < 32)
			return;
		memcpy(&abi, r + 16, 8);
		if (abi == PERF_SAMPLE_REGS_ABI_NONE)
			return;	/* a kernel thread: no user pc */
		memcpy(&pc, r + 24, 8);
		ip = pc;
	}
	attach_count(t, ip, system);
}

static void mmap2(const struct attach_config *c, struct attach_thread *t,
		  const unsigned char *r, size_t size)
{
	/* pid, tid, addr, len, pgoff, maj, min, ino, ino_generation,
	   prot, flags, filename. */
	const size_t name_at = 4 + 4 + 8 + 8 + 8 + 4 + 4 + 8 + 8 + 4 + 4;
	if (size <= name_at)
		return;
	uint32_t pid;
	uint64_t addr, len, pgoff;
	memcpy(&pid, r, 4);
	memcpy(&addr, r + 8, 8);
	memcpy(&len, r + 16, 8);
	memcpy(&pgoff, r + 24, 8);
	if ((pid_t)pid != t->proc->pid)
		return;
	char name[PATH_MAX];
	size_t n = size - name_at < sizeof name - 1 ? size - name_at : sizeof name - 1;
	memcpy(name, r + name_at, n);
	name[n] = '\0';
	attach_map_add(t->proc, addr, len, pgoff, name, c->user_only);
}

static void comm(struct attach_thread *t, const unsigned char *r, size_t size, unsigned misc)
{
	if (size <= 8)
		return;
	uint32_t tid;
	memcpy(&tid, r + 4, 4);
	if ((pid_t)tid != t->tid)
		return;
	size_t n = size - 8 < sizeof t->comm - 1 ? size - 8 : sizeof t->comm - 1;
	memset(t->comm, 0, sizeof t->comm);
	memcpy(t->comm, r + 8, n);
	t->comm[strnlen(t->comm, sizeof t->comm)] = '\0';
	if (misc & PERF_RECORD_MISC_COMM_EXEC)
		attach_maps_exec(t->proc);
}

void attach_drain(const struct attach_config *c, struct attach_thread *t)
{
	if (t->fd < 0)
		return;
	struct perf_event_mmap_page *meta = t->map;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail;
	unsigned char rec[PATH_MAX + 256];
	while (tail < head) {
		struct perf_event_header h;
		if (head - tail < sizeof h)
			break;
		ring_copy(t, tail, &h, sizeof h);
		if (h.size < sizeof h || h.size > head - tail) {
			/* A ring that makes no sense: what is left, as
			   samples of the smallest size, is lost. */
			t->lost += (head - tail) / 24;
			tail = head;
			break;
		}
		size_t body = h.size - sizeof h;
		if (body > sizeof rec)
			body = sizeof rec;
		ring_copy(t, tail + sizeof h, rec, body);
		uint64_t f0 = 0, f1 = 0;
		memcpy(&f0, rec, body < 8 ? body : 8);
		if (body >= 16)
			memcpy(&f1, rec + 8, 8);
		switch (h.type) {
		case PERF_RECORD_SAMPLE:
			sample(c, t, rec, body, h.misc);
			break;
		case PERF_RECORD_MMAP2:
			mmap2(c, t, rec, body);
			break;
		case PERF_RECORD_COMM:
			comm(t, rec, body, h.misc);
			break;
		case PERF_RECORD_LOST:	/* id, lost */
			t->lost += f1;
			break;
		case PERF_RECORD_THROTTLE:	/* time, ... */
			t->throttled_at = f0 ? f0 : 1;
			break;
		case PERF_RECORD_UNTHROTTLE:
			/* The samples the throttled span would have held. */
			if (t->throttled_at && f0 > t->throttled_at)
				t->lost += (f0 - t->throttled_at) / c->period_ns;
			t->throttled_at = 0;
			break;
		default:
			break;
		}
		tail += h.size;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

void attach_event_close(const struct attach_config *c, struct attach_thread *t)
{
	if (t->fd < 0)
		return;
	ioctl(t->fd, PERF_EVENT_IOC_DISABLE, 0);
	attach_drain(c, t);
	uint64_t count;
	if (read(t->fd, &count, sizeof count) == (ssize_t)sizeof count)
		t->clock_ns = count;
	munmap(t->map, t->map_size);
	close(t->fd);
	t->fd = -1;
	t->map = NULL;
}
