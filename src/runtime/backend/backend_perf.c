/*
 * backend_perf.c - sampling with perf_event software clock events.
 *
 * Each thread gets a PERF_COUNT_SW_TASK_CLOCK event of its own (pid =
 * its tid, any CPU), user-only (exclude_kernel, which perf_event_paranoid
 * 2 allows for a process's own threads), that writes the user pc
 * (PERF_SAMPLE_IP) into an mmap ring after every period of the thread's
 * CPU time.  The kernel's high-resolution timer takes the sample: no
 * signal is sent, nothing runs in the thread, and the rate is not bound
 * to the scheduler tick.
 *
 * One drain thread of libprofil's own (not sampled) waits in poll() on
 * every ring, woken when a ring is half full and at least every 50 ms,
 * and hands the records to sampler_take_batch(): counts are at most ~50 ms
 * behind (SPEC: 100 ms), and flush() brings them up to date when a
 * session stops or replaces its buffers.  The drain thread also calls
 * sampler_rescan() every 100 ms, which arms threads made without
 * pthread_create (raw clone) and forgets those that ended unseen; an
 * event whose thread has exited polls as POLLHUP.
 *
 * Limits: each ring costs a descriptor and locked memory
 * (perf_event_mlock_kb, then RLIMIT_MEMLOCK).  A thread whose ring
 * cannot be mapped gets a smaller one (8, 2, then 1 data page); a
 * thread that cannot have an event at all gets a CPU-time timer from
 * backend_timer instead, counted in threads_fallback.
 *
 * Samples the kernel drops (PERF_RECORD_LOST) or does not take while it
 * throttles the event are counted as lost.  Kernel time is invisible to
 * a user-only event, so each thread also gets a slow CPU-time timer from
 * backend_timer (timer_arm_system) that charges the thread's system time
 * to the pc where it finds the thread; where that timer cannot be had,
 * the sampler reports PROFIL_STATS_USER_ONLY.
 *
 * Nothing here runs in a signal handler.  The hooks run under the
 * sampler's lock; ring_lock guards the ring table against the drain
 * thread, and is always taken after the sampler's lock, never before.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../../../include/profil.h"
#include "backend/backend.h"
#include "core/fds.h"
#include "backend/perf_ring.h"
#include "core/sampler.h"
#include "core/stats.h"

#define RING_PAGES 8		/* data pages: 2048 samples, 100 ms at 20 kHz */
#define POLL_MS 50
#define RESCAN_NS 100000000

struct ring {
	int fd;			/* -1: a free entry */
	pid_t tid;		/* the thread it samples */
	int dead;		/* its thread has exited (POLLHUP) */
	uint64_t serial;	/* tells a reused entry from the one polled */
	uint64_t got;		/* samples of the ring the sampler took */
	int reckon;		/* owed samples can be reckoned (one period) */
	uint64_t cpu0;		/* the thread's CPU time when armed */
	int has_system_timer;
	struct thread_slot system_timer;	/* charges its kernel time */
	size_t map_size;
	struct perf_ring r;
};

static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ring *rings;	/* by slot->handle; under ring_lock */
static size_t nrings;
static uint64_t next_serial;

static unsigned session;	/* generation of the open session */
static unsigned session_hz;
static _Atomic uint64_t period_ns;
static int timer_opened;	/* for system time, and threads that fell back */
static int system_blind;	/* a thread has no system-time timer */
static int sees_system;		/* the session gives threads such timers;
				   kept after close, for the final figures */
static size_t page_size;

static pthread_t drainer;
static pid_t drainer_owner;	/* the process that made it; 0: none */
static atomic_int drainer_tid;
static atomic_int stopping;
static int wake_fd = -1;

static int event_open(pid_t tid, unsigned pages, int disabled)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof attr);
	attr.size = sizeof attr;
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.sample_period = atomic_load(&period_ns);
	attr.sample_type = PERF_SAMPLE_IP;
	attr.disabled = disabled;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	attr.watermark = 1;
	attr.wakeup_watermark = (uint32_t)(pages * page_size / 2);
	return fds_keep((int)syscall(SYS_perf_event_open, &attr, tid, -1, -1,
				     PERF_FLAG_FD_CLOEXEC));
}

static void wake_drainer(void)
{
	uint64_t one = 1;
	if (wake_fd >= 0 && write(wake_fd, &one, sizeof one) < 0) {
		/* a full counter wakes it as well */
	}
}

static void stop_ring(void *arg)
{
	struct ring *ring = arg;
	ioctl(ring->fd, PERF_EVENT_IOC_DISABLE, 0);
}

/* Records handed to the sampler in batches; under ring_lock. */
static uintptr_t batch[256];
static size_t nbatch;

static void take_batch(struct ring *ring)
{
	uint64_t taken = sampler_take_batch(session, ring->tid, batch, nbatch, stop_ring, ring);
	ring->got += taken;
	if (ring->has_system_timer)
		timer_system_user(&ring->system_timer, taken);
	nbatch = 0;
}

static void take(void *arg, uint64_t ip)
{
	batch[nbatch++] = (uintptr_t)ip;
	if (nbatch == sizeof batch / sizeof batch[0])
		take_batch(arg);
}

/* Under ring_lock. */
static void drain_one(struct ring *ring)
{
	struct ring_drained d;
	ring_drain(&ring->r, atomic_load(&period_ns), take, ring, &d);
	take_batch(ring);
	if (d.lost && sampler_lost(session, d.lost)) {
		ring->got += d.lost;
		if (ring->has_system_timer)
			timer_system_user(&ring->system_timer, d.lost);
	}
}

static void drain_all(void)
{
	for (size_t i = 0; i < nrings; i++)
		if (rings[i].fd >= 0)
			drain_one(&rings[i]);
}

/* The CPU clock of thread tid, as glibc's pthread_getcpuclockid makes it. */
static clockid_t thread_clock(pid_t tid)
{
	return (clockid_t)((~(unsigned)tid << 3) | 6u);
}

static uint64_t thread_cpu_ns(pid_t tid)
{
	struct timespec ts;
	if (clock_gettime(thread_clock(tid), &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The periods the event counted and no record stands for: the kernel's
 * timer fired more than a period late and skipped some (a virtual
 * machine under load), the tail since the last record, and time in the
 * kernel, which a user-only event never samples, less the system periods
 * the thread's system-time timer charged (system).  The sampler takes them
 * as lost, so that taken stands for the thread's CPU time, as under the
 * timer backend.
 */
static uint64_t owed(struct ring *ring, pid_t tid, uint64_t system)
{
	uint64_t count;
	if (!ring->reckon || read(ring->fd, &count, sizeof count) != sizeof count)
		return 0;
	/* In a virtual machine the task clock also runs while the host has
	   the processor (steal), which the thread's CPU clock leaves out:
	   no more is owed than the CPU time since arming. */
	uint64_t cpu = thread_cpu_ns(tid);
	if (cpu) {
		cpu = cpu > ring->cpu0 ? cpu - ring->cpu0 : 0;
		if (cpu < count)
			count = cpu;
	}
	uint64_t due = count / atomic_load(&period_ns), got = ring->got + system;
	return due > got ? due - got : 0;
}

static void release(struct ring *ring)
{
	munmap(ring->r.meta, ring->map_size);
	close(ring->fd);
	ring->fd = -1;
}

static void *drain_loop(void *unused)
{
	(void)unused;
	prctl(PR_SET_NAME, "profil-drain");	/* as top -H and ps -L show it */
	atomic_store(&drainer_tid, (int)gettid());
	struct pollfd *pfd = NULL;
	size_t *which = NULL, cap = 0;
	uint64_t *serials = NULL;
	struct timespec last, now;
	clock_gettime(CLOCK_MONOTONIC, &last);
	while (!atomic_load(&stopping)) {
		size_t n = 0;
		pthread_mutex_lock(&ring_lock);
		if (nrings + 1 > cap) {
			size_t c = nrings + 16;
			struct pollfd *p = realloc(pfd, c * sizeof *p);
			size_t *w = p ? realloc(which, c * sizeof *w) : NULL;
			uint64_t *s = w ? realloc(serials, c * sizeof *s) : NULL;
			pfd = p ? p : pfd;
			which = w ? w : which;
			serials = s ? s : serials;
			if (s)
				cap = c;
		}
		if (cap) {
			pfd[n++] = (struct pollfd){ .fd = wake_fd, .events = POLLIN };
			for (size_t i = 0; i < nrings && n < cap; i++) {
				if (rings[i].fd < 0 || rings[i].dead)
					continue;
				pfd[n] = (struct pollfd){ .fd = rings[i].fd, .events = POLLIN };
				which[n] = i;
				serials[n++] = rings[i].serial;
			}
		}
		pthread_mutex_unlock(&ring_lock);
		if (n)
			poll(pfd, n, POLL_MS);
		else	/* no memory for the poll set: drain on the clock */
			nanosleep(&(struct timespec){ 0, POLL_MS * 1000000L }, NULL);
		uint64_t count;
		if (n && (pfd[0].revents & POLLIN) && read(wake_fd, &count, sizeof count) < 0) {
			/* already reset */
		}
		pthread_mutex_lock(&ring_lock);
		for (size_t k = 1; k < n; k++) {
			struct ring *ring = &rings[which[k]];
			if ((pfd[k].revents & POLLHUP) && ring->fd >= 0
			    && ring->serial == serials[k])
				ring->dead = 1;
		}
		drain_all();
		pthread_mutex_unlock(&ring_lock);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - last.tv_sec) * 1000000000L + now.tv_nsec - last.tv_nsec
		    >= RESCAN_NS) {
			last = now;
			sampler_rescan();
		}
	}
	free(pfd);
	free(which);
	free(serials);
	return NULL;
}

static int perf_open(unsigned hz, unsigned generation)
{
	page_size = (size_t)sysconf(_SC_PAGESIZE);
	session = generation;
	session_hz = hz;
	atomic_store(&period_ns, 1000000000u / hz);
	/* Is it allowed here?  (perf_event_paranoid, seccomp, no kernel
	   support all refuse the first event.) */
	int fd = event_open(0, RING_PAGES, 1);
	if (fd < 0)
		return -errno;
	close(fd);
	wake_fd = fds_keep(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
	if (wake_fd < 0)
		return -errno;
	atomic_store(&stopping, 0);
	atomic_store(&drainer_tid, 0);
	/* The drain thread takes no signal of the program's; faults in a
	   counter still reach fault.c. */
	sigset_t all, old;
	sigfillset(&all);
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGBUS);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int r = threads_create_unsampled(&drainer, drain_loop, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0) {
		close(wake_fd);
		wake_fd = -1;
		return -r;
	}
	drainer_owner = getpid();
	system_blind = 0;
	if (sampler_system_time() && !timer_opened && backend_timer.open(hz, generation) == 0)
		timer_opened = 1;
	sees_system = timer_opened && sampler_system_time();
	/* arm() must know its tid before the first thread is armed. */
	while (atomic_load(&drainer_tid) == 0)
		sched_yield();
	return 0;
}

/* No event or ring for this thread: a timer instead. */
static int arm_fallback(struct thread_slot *slot, pid_t tid)
{
	if (!timer_opened) {
		int r = backend_timer.open(session_hz, session);
		if (r != 0)
			return r;
		timer_opened = 1;
	}
	int r = backend_timer.arm(slot, tid);
	if (r == 0) {
		slot->fallback = 1;
		atomic_fetch_add(&stats.threads_fallback, 1);
	}
	return r;
}

/* A free entry of the table, or -1.  Under ring_lock. */
static long free_entry(void)
{
	for (size_t i = 0; i < nrings; i++)
		if (rings[i].fd < 0)
			return (long)i;
	size_t n = nrings ? nrings * 2 : 16;
	struct ring *p = realloc(rings, n * sizeof *p);
	if (!p)
		return -1;
	for (size_t i = nrings; i < n; i++)
		p[i].fd = -1;
	rings = p;
	long i = (long)nrings;
	nrings = n;
	return i;
}

static int perf_arm(struct thread_slot *slot, pid_t tid)
{
	if (tid == atomic_load(&drainer_tid))
		return 1;
	static const unsigned sizes[] = { RING_PAGES, 2, 1 };
	int fd = -1, err = 0;
	void *map = MAP_FAILED;
	size_t map_size = 0;
	unsigned pages = 0;
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		pages = sizes[k];
		fd = event_open(tid, pages, 1);
		if (fd < 0) {
			err = errno;
			break;
		}
		map_size = (pages + 1) * page_size;
		map = mmap(NULL, map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (map != MAP_FAILED)
			break;
		err = errno;
		close(fd);
		fd = -1;
		if (err != EPERM && err != ENOMEM)	/* not a lack of locked memory */
			break;
	}
	if (fd < 0)
		return err == ESRCH ? -ESRCH : arm_fallback(slot, tid);
	pthread_mutex_lock(&ring_lock);
	long i = free_entry();
	if (i >= 0) {
		struct ring *ring = &rings[i];
		ring->fd = fd;
		ring->tid = tid;
		ring->dead = 0;
		ring->serial = ++next_serial;
		ring->got = 0;
		ring->reckon = 1;
		ring->cpu0 = thread_cpu_ns(tid);
		ring->map_size = map_size;
		ring->r.meta = map;
		ring->r.data = (unsigned char *)map + page_size;
		ring->r.data_size = (uint64_t)pages * page_size;
		ring->r.throttled_at = 0;
	}
	pthread_mutex_unlock(&ring_lock);
	if (i < 0) {
		munmap(map, map_size);
		close(fd);
		return arm_fallback(slot, tid);
	}
	struct thread_slot system_timer = { 0 };
	int has_system_timer = timer_opened && sampler_system_time()
			       && timer_arm_system(&system_timer, tid) == 0;
	if (!has_system_timer)
		system_blind = 1;
	pthread_mutex_lock(&ring_lock);
	rings[i].has_system_timer = has_system_timer;
	rings[i].system_timer = system_timer;
	pthread_mutex_unlock(&ring_lock);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	slot->tid = tid;
	slot->handle = (int)i;
	slot->tally = 0;
	slot->base_ns = 0;
	slot->fallback = 0;
	wake_drainer();
	return 0;
}

/* An event polls as POLLHUP once its thread has exited. */
static int perf_alive(struct thread_slot *slot)
{
	if (slot->fallback)
		return backend_timer.alive(slot);
	pthread_mutex_lock(&ring_lock);
	struct pollfd p = { .fd = rings[slot->handle].fd, .events = 0 };
	int dead = rings[slot->handle].dead;
	pthread_mutex_unlock(&ring_lock);
	if (!dead && poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLNVAL | POLLERR)))
		dead = 1;
	return !dead;
}

static int perf_set_hz(struct thread_slot *slot, unsigned hz)
{
	if (!slot) {
		session_hz = hz;
		atomic_store(&period_ns, 1000000000u / hz);
		return timer_opened ? backend_timer.set_hz(NULL, hz) : 0;
	}
	if (slot->fallback)
		return backend_timer.set_hz(slot, hz);
	uint64_t period = atomic_load(&period_ns);
	rings[slot->handle].reckon = 0;	/* periods of two lengths: no reckoning */
	return ioctl(rings[slot->handle].fd, PERF_EVENT_IOC_PERIOD, &period) ? -errno : 0;
}

/* What the ring holds is counted before it goes. */
static uint64_t perf_disarm(struct thread_slot *slot)
{
	if (slot->fallback)
		return backend_timer.disarm(slot);
	pthread_mutex_lock(&ring_lock);
	struct ring *ring = &rings[slot->handle];
	ioctl(ring->fd, PERF_EVENT_IOC_DISABLE, 0);
	drain_one(ring);
	uint64_t system = 0;
	if (ring->has_system_timer) {
		backend_timer.disarm(&ring->system_timer);
		system = timer_system_charged(&ring->system_timer);
	}
	ring->has_system_timer = 0;
	uint64_t n = owed(ring, slot->tid, system);
	release(ring);
	pthread_mutex_unlock(&ring_lock);
	slot->handle = -1;
	return n;
}

static void perf_flush(void)
{
	pthread_mutex_lock(&ring_lock);
	drain_all();
	pthread_mutex_unlock(&ring_lock);
}

/* The drain thread is not in the child, and ring_lock may have been
   held by it at the fork. */
static void perf_child_reset(void)
{
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
	ring_lock = fresh;
	nbatch = 0;
}

/* The parent's events and rings: the rings are not mapped in the child
   (the kernel does not copy them), the descriptors are. */
static void perf_forget(struct thread_slot *slot)
{
	if (slot->fallback) {
		backend_timer.forget(slot);
		return;
	}
	/* Timers are not inherited across fork: the child has none. */
	rings[slot->handle].has_system_timer = 0;
	close(rings[slot->handle].fd);
	rings[slot->handle].fd = -1;
	slot->handle = -1;
}

static void perf_close(void)
{
	if (drainer_owner == getpid()) {
		atomic_store(&stopping, 1);
		wake_drainer();
		pthread_join(drainer, NULL);
	}
	drainer_owner = 0;
	atomic_store(&drainer_tid, 0);
	if (wake_fd >= 0)
		close(wake_fd);
	wake_fd = -1;
	if (timer_opened)
		backend_timer.close();
	timer_opened = 0;
}

static int perf_user_only(void)
{
	return !sees_system || system_blind;
}

const struct backend backend_perf = {
	.name = "perf",
	.id = PROFIL_BACKEND_PERF,
	.user_only = perf_user_only,
	.open = perf_open,
	.arm = perf_arm,
	.alive = perf_alive,
	.set_hz = perf_set_hz,
	.disarm = perf_disarm,
	.flush = perf_flush,
	.child_reset = perf_child_reset,
	.forget = perf_forget,
	.close = perf_close,
};
