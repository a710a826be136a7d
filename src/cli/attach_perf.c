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
 * too (PERF_SAMPLE_REGS_USER): a sample taken in the kernel is charged
 * to the pc where the thread entered it, as a system count, which is
 * what libprofil does with a thread's system time.
 *
 * With stacks, a sample also carries the registers a walk starts from
 * and a copy of the top of the user stack (PERF_SAMPLE_STACK_USER, 8 KiB
 * as libprofil's perf backend copies), which attach_unwind.c walks.
 * Such a record is ~500 times an ip's: a ring holds 2 MiB (256 records)
 * while the rings of the run take less than RING_BUDGET, 64 KiB after
 * that (threads found later, in a process of hundreds), and smaller
 * ones where locked memory (perf_event_mlock_kb, then RLIMIT_MEMLOCK)
 * refuses; wakeups come at a quarter full, so that profil, woken late
 * on a busy machine, still finds room.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "attach.h"

#define RING_PAGES 16		/* data pages: ~100 ms at 10 kHz */
#define RING_BUDGET (UINT64_C(64) << 20)

static int event_open(const struct attach_config *c, pid_t tid, unsigned pages)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof attr);
	attr.size = sizeof attr;
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.sample_period = c->period_ns;
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
	if (c->stack_copy && attach_regs_count()) {
		attr.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		attr.sample_regs_user = attach_regs_mask();
		attr.sample_stack_user = c->stack_copy;
	} else if (!c->user_only && attach_regs_count()) {
		attr.sample_type |= PERF_SAMPLE_REGS_USER;
		attr.sample_regs_user = attach_regs_mask();
	}
	attr.disabled = 1;
	attr.exclude_kernel = c->user_only;
	attr.exclude_hv = 1;
	attr.mmap = 1;
	attr.mmap2 = 1;
	attr.comm = 1;
	attr.watermark = 1;
	attr.wakeup_watermark = pages * 4096 / (c->stack_copy ? 4 : 2);
	return (int)syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

int attach_event_probe(const struct attach_config *c, pid_t tid)
{
	return event_open(c, tid, RING_PAGES);
}

int attach_event_open(struct attach_config *c, struct attach_thread *t)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	static const unsigned plain[] = { RING_PAGES, 4, 1, 0 };
	static const unsigned stacked[] = { 512, 128, 32, 16, 8, 0 };
	const unsigned *sizes = c->stack_copy ? stacked : plain;
	/* Past the budget, the smallest ring that holds a few records. */
	if (c->stack_copy && c->ring_bytes >= RING_BUDGET)
		sizes += 3;
	for (; *sizes; sizes++) {
		int fd = event_open(c, t->tid, *sizes);
		if (fd < 0)
			return -1;
		size_t size = (*sizes + 1) * page;
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
		t->data_size = (uint64_t)*sizes * page;
		if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
			int err = errno;
			munmap(map, size);
			close(fd);
			t->fd = -1;
			errno = err;
			return -1;
		}
		c->ring_bytes += size;
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
	/* ip, pid and tid; the user registers (abi, then those asked for,
	   unless abi is NONE); the stack (size, bytes, then dyn_size). */
	uint64_t ip, abi = PERF_SAMPLE_REGS_ABI_NONE, regs[8] = { 0 };
	uint64_t stack_size = 0, dyn = 0;
	const unsigned char *stack = NULL;
	size_t at = 16;
	int stacks = c->stack_copy && attach_regs_count();
	if (size < at)
		return;
	memcpy(&ip, r, 8);
	if (stacks || (!c->user_only && attach_regs_count())) {
		size_t n = attach_regs_count() * 8;
		if (size - at < 8)
			return;
		memcpy(&abi, r + at, 8);
		at += 8;
		if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
			if (size - at < n)
				return;
			memcpy(regs, r + at, n);
			at += n;
		}
	}
	if (stacks) {
		if (size - at < 8)
			return;
		memcpy(&stack_size, r + at, 8);
		at += 8;
		if (stack_size) {
			if (stack_size > c->stack_copy || size - at < stack_size + 8)
				return;
			stack = r + at;
			memcpy(&dyn, r + at + stack_size, 8);
			if (dyn > stack_size)
				dyn = 0;
		}
	}
	int system = (misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
	if (system) {
		if (c->user_only || abi == PERF_SAMPLE_REGS_ABI_NONE)
			return;	/* a kernel thread: no user pc */
		ip = regs[attach_regs_pc()];
	}
	if (attach_count(t, ip, system) && stacks)
		attach_stack(t, ip, system, abi, regs, stack, stack_size, dyn);
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
	attach_map_add(c, t->proc, addr, len, pgoff, name);
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
	unsigned char *rec = c->rec;
	while (tail < head) {
		struct perf_event_header h;
		if (head - tail < sizeof h)
			break;
		ring_copy(t, tail, &h, sizeof h);
		if (h.size < sizeof h || h.size > head - tail) {
			/* A ring that makes no sense: what is left, as
			   samples of the smallest size, is lost. */
			t->lost_corrupt += (head - tail) / 24;
			tail = head;
			break;
		}
		size_t body = h.size - sizeof h;
		if (body > c->rec_size)
			body = c->rec_size;
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
			t->lost_ring += f1;
			break;
		case PERF_RECORD_THROTTLE:	/* time, ... */
			t->throttled_at = f0 ? f0 : 1;
			break;
		case PERF_RECORD_UNTHROTTLE:
			/* The samples the throttled span would have held. */
			if (t->throttled_at && f0 > t->throttled_at)
				t->lost_throttled += (f0 - t->throttled_at) / c->period_ns;
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
