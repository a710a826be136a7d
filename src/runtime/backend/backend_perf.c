/*
 * backend_perf.c - sampling with perf_event software clock events.
 *
 * Each thread gets a PERF_COUNT_SW_TASK_CLOCK event of its own (pid =
 * its tid, any CPU), user-only (exclude_kernel, which perf_event_paranoid
 * 2 allows for a process's own threads), that writes the user pc
 * (PERF_SAMPLE_IP) into an mmap ring after every period of the thread's
 * CPU time.  The kernel's high-resolution timer takes the sample: no
 * signal is sent per sample, and the rate is not bound to the tick.
 *
 * A thread gets its event at its first sample, not when it is armed:
 * an event and ring cost a process ~0.1 ms, more than a shell's fork
 * child runs before its exec.  Until then a sampling timer from
 * backend_timer (timer_arm_promoting) samples it; that timer's first
 * signal, in the thread, calls promote(), which opens the event into the
 * entry reserved at arm (pending) and deletes the timer.
 *
 * No thread of ours (SPEC section 2): each ring is drained by its own
 * thread.  Every sampled thread also has a slow CPU-time timer from
 * backend_timer (timer_arm_system, every 10 ms of the thread's CPU time
 * while it uses system time, 40 ms while it does not, sooner for a small
 * ring), whose signal handler, in that thread, first hands this backend
 * the ring to drain (drain_hook), then charges the thread's system time,
 * which a user-only event never sees.  So counts are at most ~40 ms of a
 * thread's CPU time behind, and a thread that does not run has nothing
 * new to drain.  Fewer signals lose fewer samples: the event's timer
 * takes none when it fires while the thread is in the kernel, and a
 * signal's delivery is such a moment.  flush() drains every ring
 * when a session stops or replaces its buffers, disarm() a ring before
 * it goes (thread end, stop, exec), flush_now() at _exit.  O_ASYNC with
 * F_SETOWN_EX would signal every sample (it ignores wakeup_watermark),
 * and costs ~1.5x the ring.
 *
 * A ring is drained, and a pending entry promoted, by whichever thread
 * first claims its busy word (the claimant's tid, by compare-and-swap).
 * A handler that finds it taken leaves the ring to the claimant, and so
 * does flush; disarm waits for a claimant that is another thread (a
 * handler, which never blocks), never for its own thread, whose frame it
 * may have interrupted.  The ring table is one mapping that never moves,
 * read by handlers without a lock; entries are made and released only
 * under the sampler's lock, and filled by a promotion under the claim.
 *
 * Our descriptors are ours: each event is moved high (fds.c) and,
 * before any use after arming (ioctl, read, poll, close), checked to be
 * the same event by its id (PERF_EVENT_IOC_ID on the same anonymous
 * inode).  A program that closed it (closefrom) and reused the number
 * keeps its file: we only unmap the ring, which releases the event.
 *
 * Limits: each ring costs a descriptor and locked memory
 * (perf_event_mlock_kb, then RLIMIT_MEMLOCK).  A thread whose ring
 * cannot be mapped gets a smaller one (8, 2, then 1 data page); a
 * thread that cannot have an event at all gets a CPU-time timer from
 * backend_timer instead, counted in threads_fallback.
 *
 * Samples the kernel drops (PERF_RECORD_LOST) or does not take while it
 * throttles the event are counted as lost, each under its cause; so are
 * the periods a thread's event counted and no record stands for (owed()),
 * split into kernel time no system-time signal charged and periods the
 * kernel's timer skipped by the thread's system time.
 *
 * Stacks (SPEC section 10): when the sampler wants them as a thread is
 * armed, its event also records the user registers the walk starts from
 * (PERF_SAMPLE_REGS_USER) and a copy of the top of the user stack
 * (PERF_SAMPLE_STACK_USER, 8 KiB or PROFIL_STACK_COPY), and the drain
 * walks each copy (unwind_walk's copy mode: nothing outside the copy is
 * read, so no read can fault).  A walk that runs past a full copy stops
 * as PROFILE_STOP_COPY.  Such records are ~500 times an ip's 16 bytes:
 * the rings are sized in records, and a thread whose ring does not fit
 * the locked-memory budget falls back to a timer, which walks the stack
 * in its handler.  The walk's pcs and a copy that wraps around the end
 * of the ring go to the ring's scratch buffer, never to the drainer's
 * stack (a handler's, maybe small); only the ring's claimant uses it.
 *
 * drain_hook, promote, flush_now and what they call are async-signal-safe and
 * lock-free: system calls through syscall() (no cancellation point), no
 * allocation.  The other hooks run under the sampler's lock, possibly in
 * a handler's rescan (sampler_tick): they too allocate nothing.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../../../include/profil.h"
#include "backend/backend.h"
#include "core/fds.h"
#include "core/seccomp.h"
#include "backend/perf_ring.h"
#include "core/env.h"
#include "core/sampler.h"
#include "core/stats.h"
#include "unwind/unwind.h"
#include "../../common/rates.h"
#include "../../format/profile.h"
#include "sinks/statemem.h"

#define RING_PAGES 8		/* data pages: 2048 samples, 100 ms at 20 kHz */
#define MAX_RINGS (1u << 15)	/* more threads at once fall back to timers */
#define RECORD_BYTES 16		/* a sample: header and ip */
#define STACK_PAGES_MAX 512	/* 2 MiB: past it, a timer */

/*
 * The user registers a walk starts from, by their bit in
 * sample_regs_user (asm/perf_regs.h); a record has them in bit order.
 */
#if defined(__x86_64__)
#define REGS_ABI PERF_SAMPLE_REGS_ABI_64
#define REGS_MASK ((1ull << 6) | (1ull << 7) | (1ull << 8))	/* bp, sp, ip */
#define NREGS 3
#elif defined(__aarch64__)
#define REGS_ABI PERF_SAMPLE_REGS_ABI_64
#define REGS_MASK ((1ull << 29) | (1ull << 30) | (1ull << 31) | (1ull << 32))	/* x29, lr, sp, pc */
#define NREGS 4
#else
#define REGS_MASK 0ull	/* no walk: stacks of the sampled pc alone */
#define NREGS 0
#endif

struct ring {
	_Atomic int live;	/* mapped, and drained by whoever claims it */
	_Atomic int pending;	/* the thread is on sample_timer: no event
				   yet (perf_arm); its claimant may open it */
	_Atomic int gone;	/* being disarmed: open nothing more */
	_Atomic int hold;	/* not to be promoted: its timer is being
				   armed, or no event could be had */
	struct thread_slot sample_timer;
	_Atomic pid_t busy;	/* the thread draining it, or 0 */
	int fd;			/* -1: a free entry */
	pid_t tid;		/* the thread it samples */
	uint64_t id;		/* PERF_EVENT_IOC_ID: the event is still ours */
	uint64_t got;		/* samples of the ring the sampler took */
	uint64_t full_seen;	/* samples PERF_RECORD_LOST said were dropped */
	int lost_format;	/* read() gives the event's lost samples too */
	int reckon;		/* owed samples can be reckoned (one period) */
	uint64_t cpu0;		/* the thread's CPU time when armed */
	uint64_t sys0;		/* its system time then, or UINT64_MAX */
	uint64_t record_bytes;	/* of a sample, for the drain interval */
	uintptr_t *pcs;		/* scratch: a walk's pcs, then the copy
				   buffer (r.scratch); NULL without stacks */
	size_t scratch_size;
	int has_system_timer;
	struct thread_slot system_timer;	/* drains it, charges kernel time */
	size_t map_size;
	struct perf_ring r;
};

static struct ring *rings;	/* MAX_RINGS entries, mapped once */
static size_t nrings;		/* entries ever used in this session */

static unsigned session;	/* generation of the open session */
static unsigned session_hz;
static _Atomic uint64_t period_ns;
static int timer_opened;	/* drain timers, and threads that fell back */
static int system_blind;	/* a thread has no system-time timer */
static int sees_system;		/* the session gives threads such timers;
				   kept after close, for the final figures */
static size_t page_size;
static unsigned stack_copy;	/* bytes of stack a sample copies, when
				   stacks are on; 0: the kernel refused */
static dev_t anon_dev;		/* the anonymous inode events live on */
static ino_t anon_ino;

static long sys_close(int fd)
{
	return syscall(SYS_close, fd);
}

static pid_t sys_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* A sample's bytes in the ring: header, ip, and with stacks abi,
   registers, size, the copy and dyn_size. */
static uint64_t record_bytes(int stacks)
{
	return stacks ? RECORD_BYTES + 8 + NREGS * 8 + 8 + stack_copy + 8 : RECORD_BYTES;
}

/* Does the kernel count an event's lost samples for read()
   (PERF_FORMAT_LOST, Linux 6.0)?  Cleared at its first EINVAL. */
static int format_lost = 1;

static int event_open(pid_t tid, unsigned pages, int disabled, int stacks)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof attr);
	attr.size = sizeof attr;
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.sample_period = atomic_load(&period_ns);
	attr.sample_type = PERF_SAMPLE_IP;
	if (stacks) {
		attr.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		attr.sample_regs_user = REGS_MASK;
		attr.sample_stack_user = stack_copy;
	}
	attr.disabled = disabled;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	/* Nobody polls: wake no one before the ring is full. */
	attr.watermark = 1;
	attr.wakeup_watermark = (uint32_t)(pages * page_size);
	/* A full ring's drops are said by a PERF_RECORD_LOST only once the
	   kernel next writes into it: those of a ring full when its thread
	   ends, only by the event's own count. */
	attr.read_format = format_lost ? PERF_FORMAT_LOST : 0;
	long fd = syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && errno == EINVAL && attr.read_format) {
		format_lost = 0;
		attr.read_format = 0;
		fd = syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	}
	return fds_keep((int)fd);
}

/* Is the ring's descriptor still its event (not closed, not reused)? */
static int ours(const struct ring *ring)
{
	struct stat st;
	uint64_t id;
	return ring->fd >= 0 && syscall(SYS_fstat, ring->fd, &st) == 0
	       && st.st_dev == anon_dev && st.st_ino == anon_ino
	       && syscall(SYS_ioctl, ring->fd, PERF_EVENT_IOC_ID, &id) == 0 && id == ring->id;
}

static void stop_ring(void *arg)
{
	struct ring *ring = arg;
	if (ours(ring))
		syscall(SYS_ioctl, ring->fd, PERF_EVENT_IOC_DISABLE, 0);
}

/* Records handed to the sampler in small batches, on the drainer's
   stack (a handler's: kept small for small stacks). */
enum { BATCH = 32 };
struct batch {
	struct ring *ring;
	size_t n;
	uint64_t stacked;	/* samples with stacks taken since the last batch */
	uint64_t room;		/* records the thread's CPU time has room for */
	uintptr_t pcs[BATCH];
};

static void take_batch(struct batch *b)
{
	struct ring *ring = b->ring;
	uint64_t taken = b->n ? sampler_take_batch(session, ring->tid, b->pcs, b->n, stop_ring, ring)
			      : 0;
	taken += b->stacked;
	ring->got += taken;
	if (ring->has_system_timer)
		timer_system_user(&ring->system_timer, taken);
	b->n = 0;
	b->stacked = 0;
}

/* The registers a walk starts from; -1 if the record has none. */
static int regs_of(const struct ring_sample *s, struct unwind_regs *regs)
{
#if NREGS
	if (s->abi != REGS_ABI)
		return -1;
	regs->ip = (uintptr_t)s->ip;	/* the flat profile's pc */
#if defined(__x86_64__)
	regs->bp = (uintptr_t)s->regs[0];
	regs->sp = (uintptr_t)s->regs[1];
	regs->lr = 0;
#else
	regs->bp = (uintptr_t)s->regs[0];	/* x29 */
	regs->lr = (uintptr_t)s->regs[1];	/* x30: a leaf's return address */
	regs->sp = (uintptr_t)s->regs[2];
#endif
	return 0;
#else
	(void)s;
	(void)regs;
	return -1;
#endif
}

static unsigned profile_stop_of(enum unwind_stop why, int cut)
{
	switch (why) {
	case UNWIND_COMPLETE:
		return PROFILE_STOP_COMPLETE;
	case UNWIND_NO_OBJECT:
		return PROFILE_STOP_NO_OBJECT;
	case UNWIND_BAD_READ:
		/* Every read is in the copy: one past a copy the kernel cut
		   is a stack that went on; past a shorter one, the end of
		   the mapped stack was reached (garbage registers). */
		return cut ? PROFILE_STOP_COPY : PROFILE_STOP_BAD_READ;
	case UNWIND_DEPTH:
		return PROFILE_STOP_DEPTH;
	case UNWIND_CFA_NOT_INCREASING:
		return PROFILE_STOP_NOT_INCREASING;
	default:
		return PROFILE_STOP_NO_CFI;
	}
}

/*
 * Walk the sample's copy of the stack.  A sample without registers or
 * copy (a kernel thread's, or a copy the ring could not hold) is its pc
 * alone, stopped as COPY: there was no copy to walk.
 */
static void take_stack(struct batch *b, const struct ring_sample *s, unsigned depth)
{
	struct ring *ring = b->ring;
	uintptr_t *pcs = ring->pcs;
	unsigned n = 1, stop = PROFILE_STOP_COPY;
	struct unwind_regs regs;
	pcs[0] = (uintptr_t)s->ip;
	if (s->stack && regs_of(s, &regs) == 0) {
		struct unwind_mem mem = { .lo = regs.sp, .hi = regs.sp + s->stack_size,
					  .copy = s->stack };
		enum unwind_stop why;
		int got = unwind_walk(&regs, &mem, pcs,
				      depth < UNWIND_MAX_DEPTH ? (int)depth : UNWIND_MAX_DEPTH, &why);
		if (got > 0) {
			n = (unsigned)got;
			stop = profile_stop_of(why, s->stack_cut);
		}
	}
	if (sampler_take_stack(session, ring->tid, pcs, n, stop, 1, 0, NULL, stop_ring, ring)
	    == TAKE_OK)
		b->stacked++;
}

static void take(void *arg, const struct ring_sample *s)
{
	struct batch *b = arg;
	unsigned depth;
	if (b->room == 0)	/* the host's time: see cpu_room */
		return;
	b->room--;
	if (b->ring->pcs && (depth = sampler_stack_depth()) > 0) {
		take_stack(b, s, depth);
		return;
	}
	b->pcs[b->n++] = (uintptr_t)s->ip;
	if (b->n == BATCH)
		take_batch(b);
}

static uint64_t thread_cpu_ns(pid_t tid);

/*
 * The records the thread's CPU time since arming has room for, after
 * those taken and the system periods charged.  In a virtual machine the
 * task clock also runs while the host has the processor (steal, a few %
 * on a busy host), which the thread's CPU clock leaves out: records past
 * the room stand for the host's time and are not taken, so that taken
 * stands for the thread's CPU time, as under the timer backend.  They
 * are the last of a drain, which comes at a moment of the thread's CPU
 * time that has nothing to do with its code.  No bound if the clock
 * cannot be read (a thread that has ended).
 */
static uint64_t cpu_room(const struct ring *ring)
{
	uint64_t cpu = thread_cpu_ns(ring->tid);
	if (!cpu)
		return UINT64_MAX;
	uint64_t periods = (cpu > ring->cpu0 ? cpu - ring->cpu0 : 0) / atomic_load(&period_ns);
	uint64_t used = ring->got
			+ (ring->has_system_timer ? timer_system_charged(&ring->system_timer) : 0);
	return periods > used ? periods - used : 0;
}

/* By the ring's claimant. */
static void drain_one(struct ring *ring)
{
	struct ring_drained d;
	struct batch b = { .ring = ring, .n = 0, .stacked = 0, .room = cpu_room(ring) };
	ring_drain(&ring->r, atomic_load(&period_ns), take, &b, &d);
	take_batch(&b);
	ring->full_seen += d.lost_full;
	int counted = sampler_lost(session, PROFILE_LOST_RING, d.lost_full);
	counted |= sampler_lost(session, PROFILE_LOST_THROTTLE, d.lost_throttled);
	counted |= sampler_lost(session, PROFILE_LOST_CORRUPT, d.lost_corrupt);
	if (d.lost && counted) {
		ring->got += d.lost;
		if (ring->has_system_timer)
			timer_system_user(&ring->system_timer, d.lost);
	}
}

/*
 * Claim the ring; with wait, until its claimant (another thread) lets go.
 * Returns 0 if the calling thread already holds it: a frame this one
 * interrupted, never to be waited for.
 */
static int claim(struct ring *ring, int wait)
{
	pid_t me = sys_gettid();
	for (;;) {
		pid_t holder = 0;
		if (atomic_compare_exchange_strong(&ring->busy, &holder, me))
			return 1;
		if (!wait || holder == me)
			return 0;
		sched_yield();
	}
}

static void let_go(struct ring *ring)
{
	atomic_store(&ring->busy, 0);
}

/* Drain the ring if it is live; with wait, whoever else holds it first. */
static void drain_claimed(struct ring *ring, int wait)
{
	if (!atomic_load(&ring->live) || !claim(ring, wait))
		return;
	if (atomic_load(&ring->live))
		drain_one(ring);
	let_go(ring);
}

/* From a drain timer's signal, in the ring's own thread. */
static void drain_hook(unsigned generation, long cookie)
{
	if (generation != session || !rings || cookie < 0 || (size_t)cookie >= MAX_RINGS)
		return;
	drain_claimed(&rings[cookie], 0);
}

/*
 * A ring another thread is draining is left to it: its records go to
 * the sinks in force, and a flush before a replacement of the sinks is
 * followed by sinks_replace(), which waits for that drain's read side.
 * Waiting for the claim instead spins, in sched_yield, for as long as
 * the claimant is preempted on a loaded machine.
 */
static void drain_all(void)
{
	for (size_t i = 0; i < nrings; i++)
		drain_claimed(&rings[i], 0);
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

static long clock_ticks = 100;	/* sysconf(_SC_CLK_TCK), read at open */

/*
 * Thread tid's system time, or UINT64_MAX if it cannot be read: its own
 * getrusage for the calling thread (the usual case: a thread is armed
 * and disarmed by itself as it starts and ends), else its stat in /proc,
 * in clock ticks.  Only to tell causes of loss apart: no allocation.
 */
static uint64_t thread_system_ns(pid_t tid)
{
	if (tid == sys_gettid()) {
		struct rusage ru;
		if (syscall(SYS_getrusage, RUSAGE_THREAD, &ru) != 0)
			return UINT64_MAX;
		return (uint64_t)ru.ru_stime.tv_sec * 1000000000u
		       + (uint64_t)ru.ru_stime.tv_usec * 1000u;
	}
	char path[48] = "/proc/self/task/", digits[12], text[1024];
	size_t k = strlen(path), n = 0;
	unsigned v = (unsigned)tid;
	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < sizeof digits);
	while (n)
		path[k++] = digits[--n];
	strcpy(path + k, "/stat");
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return UINT64_MAX;
	long got = syscall(SYS_read, fd, text, sizeof text - 1);
	sys_close(fd);
	if (got <= 0)
		return UINT64_MAX;
	text[got] = '\0';
	const char *p = strrchr(text, ')');	/* the name may hold anything */
	/* After the name: state, then fields 4 to 14; stime is field 15. */
	for (int field = 2; p && field < 15; field++)
		p = strchr(p + 1, ' ');
	if (!p || p[1] < '0' || p[1] > '9')
		return UINT64_MAX;
	uint64_t ticks = 0;
	for (p++; *p >= '0' && *p <= '9'; p++)
		ticks = ticks * 10 + (uint64_t)(*p - '0');
	return ticks * (1000000000u / (uint64_t)clock_ticks);
}

/*
 * The periods the event counted and no record stands for: the kernel's
 * timer fired more than a period late and skipped some (a virtual
 * machine under load: late), and time in the kernel, which a user-only
 * event never samples, less the system periods the thread's system-time
 * timer charged (system): kernel time that was not charged (kernel, at
 * most the thread's system time since arming less what was charged;
 * late is the rest), after the drops of a full ring that no
 * PERF_RECORD_LOST said (the kernel writes one only once it next has room,
 * so a ring full at the end tells only the event's count of them,
 * PERF_FORMAT_LOST): ring full.  The sampler takes them as lost, so that taken
 * stands for the thread's CPU time, as under the timer backend.  The
 * tail since the last record is less than a period: the ring is drained
 * first.  Needs the event's descriptor, checked by the caller.
 */
static uint64_t owed(struct ring *ring, pid_t tid, uint64_t system, uint64_t *why)
{
	uint64_t value[2] = { 0, 0 };	/* the count, and with lost_format its
					   samples dropped from a full ring */
	long want = ring->lost_format ? (long)sizeof value : (long)sizeof value[0];
	if (!ring->reckon || syscall(SYS_read, ring->fd, value, (size_t)want) != want)
		return 0;
	uint64_t count = value[0];
	/* In a virtual machine the task clock also runs while the host has
	   the processor (steal), which the thread's CPU clock leaves out:
	   no more is owed than the CPU time since arming. */
	uint64_t cpu = thread_cpu_ns(tid);
	if (cpu) {
		cpu = cpu > ring->cpu0 ? cpu - ring->cpu0 : 0;
		if (cpu < count)
			count = cpu;
	}
	uint64_t period = atomic_load(&period_ns);
	uint64_t due = count / period, got = ring->got + system;
	uint64_t n = due > got ? due - got : 0;
	/* Drops of a full ring that no PERF_RECORD_LOST said. */
	uint64_t full = value[1] > ring->full_seen ? value[1] - ring->full_seen : 0;
	if (full > n)
		full = n;
	why[PROFILE_LOST_RING] += full;
	n -= full;
	uint64_t kernel = 0, sys = ring->sys0 != UINT64_MAX ? thread_system_ns(tid) : UINT64_MAX;
	if (sys != UINT64_MAX && sys > ring->sys0) {
		uint64_t periods = (sys - ring->sys0) / period;
		kernel = periods > system ? periods - system : 0;
		if (kernel > n)
			kernel = n;
	}
	why[PROFILE_LOST_KERNEL] += kernel;
	why[PROFILE_LOST_LATE] += n - kernel;
	return n + full;
}

static void scratch_free(struct ring *ring)
{
	if (ring->pcs)
		munmap(ring->pcs, ring->scratch_size);
	ring->pcs = NULL;
	ring->r.scratch = NULL;
}

/* Unmap and close; a descriptor the program took over is left to it. */
static void release(struct ring *ring, int mine)
{
	munmap(ring->r.meta, ring->map_size);
	scratch_free(ring);
	if (mine)
		sys_close(ring->fd);
	ring->fd = -1;
}

static int map_table(void)
{
	if (rings)
		return 0;
	void *p = statemem_map(MAX_RINGS * sizeof *rings, 1);
	if (p == MAP_FAILED)
		return -ENOMEM;
	rings = p;
	return 0;
}

static unsigned stack_pages(uint64_t records);

/* The ring a thread gets first: without stacks, RING_PAGES data pages;
   with them, 20 ms of samples and at least 24 (perf_arm says why). */
static unsigned first_pages(int stacks)
{
	if (!stacks)
		return RING_PAGES;
	uint64_t records = 20000000u / atomic_load(&period_ns);
	return stack_pages(records > 24 ? records : 24);
}

/*
 * ThreadSanitizer holds an asynchronous signal back until the thread
 * next enters its runtime at a point it deems safe: a loop of plain
 * computation might never see the signal that would give it its ring.
 * Its threads get their rings at once.
 */
static int signals_held;

/* The seccomp filters when the backend was opened: a thread is promoted
   only while there are no more.  A filter the program added since may
   kill the process at perf_event_open (systemd's kill by default). */
static int filters_at_open;

static int no_new_filter(void)
{
	if (filters_at_open < 0)	/* no /proc: nothing to compare */
		return 1;
	int filters = seccomp_filters();
	return filters >= 0 && filters <= filters_at_open;
}

/*
 * Whether ThreadSanitizer is in the process, found at load time: perf_open
 * may run in a signal handler (profil() called from one), and a dlsym
 * that finds nothing allocates its error message, which deadlocked with
 * the malloc the handler had interrupted.  -1 until known.
 */
static int tsan_loaded = -1;

static int tsan_present(void)
{
	return dlsym(RTLD_DEFAULT, "__tsan_init") != NULL;
}

__attribute__((constructor)) static void perf_load(void)
{
	if (tsan_loaded < 0)
		tsan_loaded = tsan_present();
}

/* A pid no process has: above the kernel's PID_MAX_LIMIT. */
#define NO_SUCH_PID 0x7fffffff

/*
 * Are events allowed here?  Asked of a thread that cannot exist: the
 * kernel checks the attributes, then perf_event_paranoid and the LSMs
 * (seccomp refuses at the call itself), and only then looks the thread
 * up: ESRCH means allowed, with nothing opened (an event costs a short
 * process ~20 us).  EINVAL with stacks: no user registers or stack
 * copies here.  A descriptor to keep must be had too (fds_keep), or the
 * timer backend does better.  0 or a negative errno.
 */
static int probe(int stacks)
{
	int fd = event_open(NO_SUCH_PID, first_pages(stacks), 1, stacks);
	if (fd < 0 && errno == EINVAL && stacks) {
		stack_copy = 0;	/* stacks of the sampled pc alone */
		fd = event_open(NO_SUCH_PID, first_pages(0), 1, 0);
	}
	if (fd >= 0)
		sys_close(fd);
	else if (errno != ESRCH)
		return -errno;
	fd = fds_keep((int)syscall(SYS_openat, AT_FDCWD, "/", O_PATH | O_DIRECTORY | O_CLOEXEC));
	if (fd < 0)
		return -errno;
	sys_close(fd);
	return 0;
}

/* The anonymous inode events live on (ours()), from the first one. */
static _Atomic int anon_known;

static int learn_anon(int fd)
{
	struct stat st;
	if (atomic_load(&anon_known))
		return 0;
	if (syscall(SYS_fstat, fd, &st) != 0)
		return -1;
	anon_dev = st.st_dev;
	anon_ino = st.st_ino;
	atomic_store(&anon_known, 1);
	return 0;
}

static void promote(unsigned generation, long cookie);

static int perf_open(unsigned hz, unsigned generation)
{
	page_size = (size_t)sysconf(_SC_PAGESIZE);
	long ticks = sysconf(_SC_CLK_TCK);
	clock_ticks = ticks > 0 && ticks <= 1000000000 ? ticks : 100;
	session = generation;
	session_hz = hz;
	atomic_store(&period_ns, 1000000000u / hz);
	/* A filter may kill at perf_event_open: under one, tried in a
	   child first. */
	if (seccomp_state(&filters_at_open) > 0) {
		int refused = seccomp_perf_refused();
		if (refused)
			return -refused;
	}
	/* Is it allowed here?  (perf_event_paranoid, seccomp, no kernel
	   support all refuse the first event.) */
	stack_copy = env_stack_copy();
	int r = probe(sampler_stack_depth() > 0);
	if (r != 0)
		return r;
	/* Before libprofil's constructors only from monstartup in a
	   library's _init, never in a handler. */
	perf_load();
	signals_held = tsan_loaded;
	r = map_table();
	if (r != 0)
		return r;
	nrings = 0;
	system_blind = 0;
	/* The timers that drain the rings; without a signal to spare they
	   are drained only when flushed, and a full ring loses samples
	   (counted lost). */
	if (!timer_opened && backend_timer.open(hz, generation) == 0)
		timer_opened = 1;
	sees_system = timer_opened && sampler_system_time();
	atomic_store(&stats.stack_copy, sampler_stack_depth() > 0 ? stack_copy : 0);
	timer_set_drain(drain_hook);
	timer_set_promote(promote);
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

/* A free entry of the table, or -1. */
static long free_entry(void)
{
	for (size_t i = 0; i < nrings; i++)
		if (rings[i].fd < 0 && !atomic_load(&rings[i].live)
		    && !atomic_load(&rings[i].pending))
			return (long)i;
	if (nrings == MAX_RINGS)
		return -1;
	rings[nrings].fd = -1;
	return (long)nrings++;
}

/* A drain timer's interval: share of the ring at the rate asked, at
   least a period, at most most_ns. */
static long drain_interval(uint64_t data_size, uint64_t record, unsigned share, long most_ns)
{
	uint64_t periods = data_size / record / share;
	uint64_t ns = (periods ? periods : 1) * atomic_load(&period_ns);
	return ns < (uint64_t)most_ns ? (long)ns : most_ns;
}

/* The data pages (a power of two) that hold records samples with stacks. */
static unsigned stack_pages(uint64_t records)
{
	uint64_t want = records * record_bytes(1);
	unsigned pages = 1;
	while ((uint64_t)pages * page_size < want && pages < STACK_PAGES_MAX)
		pages <<= 1;
	return pages;
}

/* The ring's scratch: a walk's pcs, then room for one copy. */
static int scratch_alloc(struct ring *ring)
{
	size_t size = UNWIND_MAX_DEPTH * sizeof(uintptr_t) + stack_copy;
	void *p = statemem_map(size, 0);
	if (p == MAP_FAILED)
		return -1;
	ring->pcs = p;
	ring->scratch_size = size;
	ring->r.scratch = (unsigned char *)p + UNWIND_MAX_DEPTH * sizeof(uintptr_t);
	return 0;
}

/*
 * Open thread tid's event and ring into entry i, with its drain timer,
 * and start it.  Under the sampler's lock (perf_arm), or in the thread's
 * own handler holding the entry's claim (promote).  Returns 0, -ESRCH
 * for a thread that is gone, or another negative errno: no ring here.
 */
static int open_ring(long i, pid_t tid)
{
	/* Without stacks, 2048 records, then smaller rings.  With them,
	   20 ms of samples and at least 24 (at 8 KiB and 1 kHz, 64 pages,
	   drained every 7 samples; the drain timer fires on the kernel's
	   tick, 4 ms, however soon it is asked), then 8; past the budget,
	   a timer. */
	int stacks = stack_copy && sampler_stack_depth() > 0;
	unsigned sizes[3] = { first_pages(stacks), 2, 1 };
	if (stacks) {
		sizes[1] = stack_pages(8);
		sizes[2] = sizes[1];
	}
	int fd = -1, err = 0;
	void *map = MAP_FAILED;
	size_t map_size = 0;
	unsigned pages = 0;
	uint64_t id = 0;
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		pages = sizes[k];
		fd = event_open(tid, pages, 1, stacks);
		if (fd < 0) {
			err = errno;
			break;
		}
		map_size = (pages + 1) * page_size;
		map = mmap(NULL, map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (map != MAP_FAILED)
			break;
		err = errno;
		sys_close(fd);
		fd = -1;
		if (err != EPERM && err != ENOMEM)	/* not a lack of locked memory */
			break;
	}
	if (fd < 0)
		return err == ESRCH ? -ESRCH : -(err ? err : EAGAIN);
	struct ring *ring = &rings[i];
	ring->pcs = NULL;
	ring->r.scratch = NULL;
	if (learn_anon(fd) != 0 || syscall(SYS_ioctl, fd, PERF_EVENT_IOC_ID, &id) != 0
	    || (stacks && scratch_alloc(ring) != 0)) {
		munmap(map, map_size);
		sys_close(fd);
		return -ENOMEM;
	}
	ring->record_bytes = record_bytes(stacks);
	ring->r.regs = stacks;
	ring->r.nregs = stacks ? NREGS : 0;
	ring->r.stack_bytes = stacks ? stack_copy : 0;
	ring->fd = fd;
	ring->tid = tid;
	ring->id = id;
	ring->got = 0;
	ring->full_seen = 0;
	ring->lost_format = format_lost;	/* only ever cleared */
	ring->reckon = 1;
	ring->cpu0 = thread_cpu_ns(tid);
	ring->sys0 = thread_system_ns(tid);
	ring->map_size = map_size;
	ring->r.meta = map;
	ring->r.data = (unsigned char *)map + page_size;
	ring->r.data_size = (uint64_t)pages * page_size;
	ring->r.throttled_at = 0;
	ring->has_system_timer = 0;
	memset(&ring->system_timer, 0, sizeof ring->system_timer);
	/* While the thread makes system calls, a quarter of the ring, at
	   most 10 ms (what the system-time charge wants); while it makes
	   none, half, at most 40 ms: the kernel's tick may fire the timer
	   up to a tick late. */
	if (timer_opened
	    && timer_arm_system(&ring->system_timer, tid, sampler_system_time(),
				drain_interval(ring->r.data_size, ring->record_bytes, 4, 10000000L),
				drain_interval(ring->r.data_size, ring->record_bytes, 2, 40000000L),
				i) == 0)
		ring->has_system_timer = 1;
	if (!ring->has_system_timer)
		system_blind = 1;
	atomic_store(&ring->live, 1);
	syscall(SYS_ioctl, fd, PERF_EVENT_IOC_ENABLE, 0);
	return 0;
}

/*
 * From a thread's sampling timer (timer_arm_promoting), in that thread,
 * after a sample: the thread has run a period or more, so it gets its
 * event and ring now, and the timer goes.  A thread that cannot have
 * them stays on its timer, counted in threads_fallback.
 */
static void promote(unsigned generation, long cookie)
{
	if (generation != session || !rings || cookie < 0 || (size_t)cookie >= MAX_RINGS)
		return;
	struct ring *ring = &rings[cookie];
	if (!atomic_load(&ring->pending) || atomic_load(&ring->gone) || atomic_load(&ring->hold)
	    || !claim(ring, 0))
		return;
	pid_t me = sys_gettid();
	if (atomic_load(&ring->pending) && !atomic_load(&ring->gone) && !atomic_load(&ring->hold)
	    && ring->tid == me) {
		uint64_t period = atomic_load(&period_ns);
		if (no_new_filter() && open_ring(cookie, me) == 0) {
			uint64_t why[PROFILE_LOST_COUNT] = { 0 };
			atomic_store(&ring->pending, 0);
			backend_timer.disarm(&ring->sample_timer, why);
			for (unsigned c = 0; c < PROFILE_LOST_COUNT; c++)
				if (why[c])
					sampler_lost(session, c, why[c]);
			/* The rate changed while the event was opened. */
			uint64_t now = atomic_load(&period_ns);
			if (now != period) {
				ring->reckon = 0;
				syscall(SYS_ioctl, ring->fd, PERF_EVENT_IOC_PERIOD, &now);
			}
		} else {
			atomic_store(&ring->hold, 1);
			atomic_fetch_add(&stats.threads_fallback, 1);
		}
	}
	let_go(ring);
}

/*
 * An event and a ring cost a process ~0.1 ms, more than many a short
 * process runs (a shell's fork child before its exec, /bin/true): a
 * thread starts on a sampling timer, and its first sample opens them
 * (promote).  Without a timer to start on, at once.
 */
static int perf_arm(struct thread_slot *slot, pid_t tid)
{
	long i = free_entry();
	if (i < 0)
		return arm_fallback(slot, tid);
	struct ring *ring = &rings[i];
	ring->tid = tid;
	/* Its timer may fire before sample_timer is filled in. */
	atomic_store(&ring->hold, 1);
	atomic_store(&ring->gone, 0);
	atomic_store(&ring->pending, 1);
	if (!timer_opened || signals_held
	    || timer_arm_promoting(&ring->sample_timer, tid, i) != 0) {
		atomic_store(&ring->pending, 0);
		if (!no_new_filter())
			return arm_fallback(slot, tid);
		int r = open_ring(i, tid);
		if (r == -ESRCH)
			return r;
		if (r != 0)
			return arm_fallback(slot, tid);
	}
	atomic_store(&ring->hold, 0);
	slot->tid = tid;
	slot->handle = (int)i;
	slot->tally = 0;
	slot->base_ns = 0;
	slot->fallback = 0;
	return 0;
}

/* An event polls as POLLHUP once its thread has exited; an event the
   program took from us is asked of the thread itself. */
static int perf_alive(struct thread_slot *slot)
{
	if (slot->fallback)
		return backend_timer.alive(slot);
	struct ring *ring = &rings[slot->handle];
	if (atomic_load(&ring->pending)) {
		/* Held while a promotion replaces the timer.  By our own
		   thread: a frame of it, which is alive. */
		if (!claim(ring, 1))
			return 1;
		int alive = atomic_load(&ring->pending) ? backend_timer.alive(&ring->sample_timer)
							: -1;
		let_go(ring);
		if (alive >= 0)
			return alive;
	}
	if (!ours(ring))
		return syscall(SYS_tgkill, getpid(), ring->tid, 0) == 0;
	struct pollfd p = { .fd = ring->fd, .events = 0 };
	struct timespec zero = { 0, 0 };
	return !(syscall(SYS_ppoll, &p, 1, &zero, NULL, 0) == 1
		 && (p.revents & (POLLHUP | POLLNVAL | POLLERR)));
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
	struct ring *ring = &rings[slot->handle];
	if (atomic_load(&ring->pending) && claim(ring, 1)) {
		/* A promotion after this opens its event at the new rate;
		   one that was under way set it as it finished. */
		int r = atomic_load(&ring->pending) ? backend_timer.set_hz(&ring->sample_timer, hz)
						    : 1;
		let_go(ring);
		if (r <= 0)
			return r;
	}
	uint64_t period = atomic_load(&period_ns);
	ring->reckon = 0;	/* periods of two lengths: no reckoning */
	if (!ours(ring))
		return -EBADF;
	return syscall(SYS_ioctl, ring->fd, PERF_EVENT_IOC_PERIOD, &period) ? -errno : 0;
}

/* What the ring holds is counted before it goes. */
static uint64_t perf_disarm(struct thread_slot *slot, uint64_t *why)
{
	if (slot->fallback)
		return backend_timer.disarm(slot, why);
	struct ring *ring = &rings[slot->handle];
	slot->handle = -1;
	/* A promotion that has not claimed the entry yet opens nothing; one
	   that has (another thread's handler) is waited for. */
	atomic_store(&ring->gone, 1);
	if (!claim(ring, 1)) {
		/* Our own thread is inside a drain or promotion of it (a
		   handler that interrupted it): leave the entry taken. */
		atomic_store(&ring->live, 0);
		return 0;
	}
	if (atomic_load(&ring->pending)) {
		uint64_t n = backend_timer.disarm(&ring->sample_timer, why);
		atomic_store(&ring->pending, 0);
		let_go(ring);
		return n;
	}
	int mine = ours(ring);
	if (mine)
		syscall(SYS_ioctl, ring->fd, PERF_EVENT_IOC_DISABLE, 0);
	uint64_t system = 0;
	if (ring->has_system_timer) {
		backend_timer.disarm(&ring->system_timer, why);
		system = timer_system_charged(&ring->system_timer);
	}
	drain_one(ring);
	ring->has_system_timer = 0;
	uint64_t n = mine ? owed(ring, ring->tid, system, why) : 0;
	atomic_store(&ring->live, 0);
	release(ring, mine);
	let_go(ring);
	return n;
}

static void perf_flush(void)
{
	drain_all();
}

/* The parent's events and rings: the rings are not mapped in the child
   (the kernel does not copy them), the descriptors are. */
static void perf_forget(struct thread_slot *slot)
{
	if (slot->fallback) {
		backend_timer.forget(slot);
		return;
	}
	struct ring *ring = &rings[slot->handle];
	if (atomic_load(&ring->pending)) {
		backend_timer.forget(&ring->sample_timer);
		atomic_store(&ring->pending, 0);
		atomic_store(&ring->busy, 0);
		slot->handle = -1;
		return;
	}
	/* Timers are not inherited across fork: the child has none.  The
	   scratch is the child's copy. */
	ring->has_system_timer = 0;
	scratch_free(ring);
	if (ours(ring))
		sys_close(ring->fd);
	ring->fd = -1;
	atomic_store(&ring->live, 0);
	atomic_store(&ring->busy, 0);	/* a parent's thread may have held it */
	slot->handle = -1;
}

static void perf_close(void)
{
	timer_set_drain(NULL);
	timer_set_promote(NULL);
	nrings = 0;
	if (timer_opened)
		backend_timer.close();
	timer_opened = 0;
}

/* The kernel's limit, and the rate above which our cost runs away
   (rates.h). */
static unsigned perf_max_hz(const char **why)
{
	static char text[80];
	/* rate_perf_max()'s limit, the kernel's file read once, not twice */
	unsigned k = rate_kernel_max();
	unsigned limit = k && k < RATE_PERF_DELIVERS ? k : RATE_PERF_DELIVERS;
	const char *lead = k && k <= limit ? "kernel.perf_event_max_sample_rate is "
					    : "its own cost runs away above ";
	char digits[12];
	size_t n = 0, at = strlen(lead);
	unsigned v = limit;
	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < sizeof digits);
	memcpy(text, lead, at);
	while (n)
		text[at++] = digits[--n];
	if (!(k && k <= limit))
		memcpy(text + at, " Hz", 3), at += 3;
	text[at] = '\0';
	*why = text;
	return limit;
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
	.max_hz = perf_max_hz,
	.flush = perf_flush,
	.flush_now = perf_flush,
	.forget = perf_forget,
	.close = perf_close,
};
