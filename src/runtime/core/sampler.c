/*
 * sampler.c - the sampler core.
 *
 * One profiling session per process: a backend, the list of sampled
 * threads, the rate, and a generation number that tags the session's
 * samples.  Everything that changes the session runs under one mutex and
 * never in a signal handler.  sampler_take() is the exception: it is
 * the path every sample takes from a backend's signal handler or drain
 * loop into the sinks, and it is async-signal-safe and lock-free.
 *
 * Life cycle: a thread created through pthread_create, thrd_create or
 * glibc's clone is armed as it starts and disarmed as it exits
 * (threads.c); threads that exist when profiling starts are found in
 * /proc/self/task.  Threads made otherwise (a raw clone system call,
 * glibc's own SIGEV_THREAD threads) are found by rescans that the
 * program's own threads make from our signal handlers (sampler_tick,
 * at most every 100 ms, with trylock): there is no thread of ours
 * (SPEC section 2).  So the paths a rescan takes (arm_listed, arm_thread,
 * sweep_dead, the backends' arm, alive and disarm) allocate nothing and
 * make system calls through syscall(), which is no cancellation point.
 * After fork the child re-arms its only thread; before exec everything
 * is torn down so that the new image inherits no timer, signal or
 * descriptor.
 *
 * Cancellation: the program's calls into the sampler disable it while
 * they hold the lock (a deferred cancel acting inside would leave the
 * lock held for good).  fork: asynchronous signals are blocked in the
 * forking thread while it holds the lock, so that no handler of the
 * program (an execve) can wait on it there.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../../include/profil.h"
#include "backend/backend.h"
#include "core/env.h"
#include "sinks/fault.h"
#include "sinks/sigown.h"
#include "core/fds.h"
#include "core/sampler.h"
#include "core/stats.h"
#include "sinks/thread_table.h"
#include "../../format/profile.h"
#include "sinks/statemem.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Take the lock from a program's call: no cancellation while held. */
static int lock_call(void)
{
	int old;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	pthread_mutex_lock(&lock);
	return old;
}

static void unlock_call(int old)
{
	pthread_mutex_unlock(&lock);
	pthread_setcancelstate(old, NULL);
}

/* The sampled threads: touched only under lock. */
static struct thread_slot *slots;
static size_t nslots, capacity;

/* Under auto, the first that opens: perf where the kernel allows it. */
static const struct backend *const backends[] = {
	&backend_perf,
	&backend_timer,
};

static const struct backend *backend;	/* open while active */
static int wanted = PROFIL_BACKEND_AUTO;
static int used;			/* id of the backend last opened */
static const struct backend *used_backend;	/* the one last opened */
static int passed_over;		/* errno that made auto pass a backend over */
static unsigned hz = PROFIL_HZ_DEFAULT;	/* in force: hz_asked, or the
					   backend's limit if lower */
static unsigned hz_asked = PROFIL_HZ_DEFAULT;
static int system_time = 1;		/* PROFIL_SYSTEM_TIME */
static pid_t owner;			/* the process the session belongs to */
static int suspended;			/* torn down for an exec that may fail */

/* Read by signal handlers. */
static atomic_int active;
static atomic_int faulted;
static atomic_uint generation;
static atomic_uint_fast64_t period_ns = 1000000000u / PROFIL_HZ_DEFAULT;
static const struct sampler_hooks *_Atomic hooks;
static unsigned stacks_wanted = PROFIL_STACKS_DEFAULT;	/* under lock */
static atomic_uint stack_depth;	/* what backends walk: 0 off */

void sampler_set_preload_hooks(const struct sampler_hooks *h)
{
	atomic_store(&hooks, h);
}

#define HOOK(name) do {						\
		const struct sampler_hooks *h_ = atomic_load(&hooks);	\
		if (h_ && h_->name)					\
			h_->name();					\
	} while (0)

/*
 * Everything happens inside the sinks' read side: go_dark() waits for
 * it to drain, so a handler that saw this generation is gone before the
 * threads are disarmed and the next session creates anything.
 */
enum take_result sampler_take(unsigned gen, pid_t tid, uintptr_t pc, uint32_t weight,
			      _Atomic uint64_t *tally,
			      void (*stop_self)(void *arg), void *arg)
{
	return sampler_take_split(gen, tid, pc, weight, 0, tally, stop_self, arg);
}

/* Both, the flat sample (n 0: pc alone) and the stacked one. */
static enum take_result take(unsigned gen, pid_t tid, uintptr_t pc, const uintptr_t *pcs,
			     unsigned n, unsigned stop, uint32_t weight, uint32_t system,
			     _Atomic uint64_t *tally, void (*stop_self)(void *arg), void *arg)
{
	enum take_result result = TAKE_STALE;
	struct thread_ref who = THREAD_REF(tid, 1);
	unsigned token = sinks_enter();
	if (gen != atomic_load(&generation) || !atomic_load(&active))
		goto out;
	if (atomic_load(&faulted)) {
		result = TAKE_OFF;
		stop_self(arg);
		goto out;
	}
	int stored = 0;
	enum sink_result r = n ? sinks_count_stack(pcs, n, stop, weight, system, &who, &stored)
			       : sinks_count(pc, weight, &who);
	if (r == SINK_NONE)
		goto out;
	/* By the stack table's samples: a walk of a sample outside every
	   object (JIT code) is kept nowhere. */
	if (stored)
		stats_add(&stats.stack_stop[stop < 16 ? stop : PROFILE_STOP_NO_CFI], weight);
	stats_add(&stats.observed, 1);
	stats_add(&stats.cpu_ns, weight * atomic_load_explicit(&period_ns, memory_order_relaxed));
	if (tally)
		atomic_fetch_add_explicit(tally, weight, memory_order_relaxed);
	result = TAKE_OK;
	if (system && r == SINK_OK) {
		stats_add(&stats.system, system);
		sinks_count_system(pc, system, &who);
	}
	/* Not in seccomp's strict mode, where even the clock's rdtsc faults. */
	if (sigown_syscalls_ok())
		HOOK(sampled);
	if (r == SINK_FAULT) {
		atomic_store(&faulted, 1);
		result = TAKE_OFF;
		stop_self(arg);
	}
out:
	sinks_leave(token);
	return result;
}

enum take_result sampler_take_split(unsigned gen, pid_t tid, uintptr_t pc, uint32_t weight,
				    uint32_t system, _Atomic uint64_t *tally,
				    void (*stop_self)(void *arg), void *arg)
{
	return take(gen, tid, pc, NULL, 0, 0, weight, system, tally, stop_self, arg);
}

enum take_result sampler_take_stack(unsigned gen, pid_t tid, const uintptr_t *pcs, unsigned n,
				    unsigned stop, uint32_t weight, uint32_t system,
				    _Atomic uint64_t *tally, void (*stop_self)(void *arg), void *arg)
{
	return take(gen, tid, pcs[0], pcs, n, stop, weight, system, tally, stop_self, arg);
}

unsigned sampler_stack_depth(void)
{
	return atomic_load_explicit(&stack_depth, memory_order_relaxed);
}

/* Under lock, after the sinks changed or the depth asked for did. */
static void stack_depth_update(void)
{
	unsigned have = sinks_stack_depth();
	atomic_store(&stack_depth, have < stacks_wanted ? have : stacks_wanted);
}

int sampler_set_stacks(unsigned depth)
{
	if (depth > PROFIL_STACKS_MAX) {
		errno = EINVAL;
		return -1;
	}
	int cs = lock_call();
	stacks_wanted = depth;
	stack_depth_update();
	unlock_call(cs);
	return 0;
}

unsigned sampler_stacks_wanted(void)
{
	return stacks_wanted;
}

size_t sampler_take_batch(unsigned gen, pid_t tid, const uintptr_t *pcs, size_t n,
			  void (*stop_self)(void *arg), void *arg)
{
	size_t taken = 0;
	struct thread_ref who = THREAD_REF(tid, tid == (pid_t)syscall(SYS_gettid));
	unsigned token = sinks_enter();
	if (gen != atomic_load(&generation) || !atomic_load(&active))
		goto out;
	if (atomic_load(&faulted)) {
		stop_self(arg);
		goto out;
	}
	while (taken < n) {
		enum sink_result r = sinks_count(pcs[taken], 1, &who);
		if (r == SINK_NONE)
			break;
		taken++;
		if (r == SINK_FAULT) {
			atomic_store(&faulted, 1);
			stop_self(arg);
			break;
		}
	}
	stats_add(&stats.observed, taken);
	stats_add(&stats.cpu_ns, taken * atomic_load_explicit(&period_ns, memory_order_relaxed));
	if (taken)
		HOOK(sampled);
out:
	sinks_leave(token);
	return taken;
}

int sampler_lost(unsigned gen, unsigned cause, uint64_t n)
{
	int counted = 0;
	unsigned token = sinks_enter();
	if (gen == atomic_load(&generation) && atomic_load(&active)
	    && !atomic_load(&faulted)) {
		stats_lose(cause, n);
		stats_add(&stats.cpu_ns, n * atomic_load_explicit(&period_ns, memory_order_relaxed));
		counted = 1;
	}
	sinks_leave(token);
	return counted;
}

static pid_t current_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static struct thread_slot *find_slot(pid_t tid)
{
	for (size_t i = 0; i < nslots; i++)
		if (slots[i].tid == tid)
			return &slots[i];
	return NULL;
}

/*
 * Stop one thread's sampler.  The samples its CPU time called for that
 * never came are taken, and lost; after a fault, profiling was off and
 * nothing was owed.
 */
static void disarm_slot(struct thread_slot *slot)
{
	uint64_t why[PROFILE_LOST_COUNT] = { 0 };
	uint64_t owed = backend->disarm(slot, why);
	if (atomic_load(&faulted))
		return;
	uint64_t said = 0;
	for (unsigned i = 0; i < PROFILE_LOST_COUNT; i++) {
		stats_lose(i, why[i]);
		said += why[i];
	}
	if (owed > said)	/* what the backend gave no cause for */
		stats_lose(PROFILE_LOST_TAIL, owed - said);
	else
		owed = said;
	stats_add(&stats.cpu_ns, owed * atomic_load(&period_ns));
}

static void drop_slot(struct thread_slot *slot)
{
	disarm_slot(slot);
	*slot = slots[--nslots];
}

/* Release the slots of threads that exited without telling us. */
static void sweep_dead(void)
{
	for (size_t i = nslots; i-- > 0;)
		if (!backend->alive(&slots[i]))
			drop_slot(&slots[i]);
}

/* Give thread tid a sampler, unless it has one. */
static void arm_thread(pid_t tid)
{
	struct thread_slot *old = find_slot(tid);
	if (old && backend->alive(old))
		return;
	if (old)	/* a dead thread's slot, its tid reused */
		drop_slot(old);
	if (nslots == capacity)
		sweep_dead();
	if (nslots == capacity) {	/* no malloc: a handler's rescan may be here */
		size_t n = capacity ? capacity * 2 : 256;
		void *p = statemem_map(n * sizeof *slots, 0);
		if (p == MAP_FAILED) {
			atomic_fetch_add(&stats.threads_unsampled, 1);
			return;
		}
		if (slots) {
			memcpy(p, slots, capacity * sizeof *slots);
			munmap(slots, capacity * sizeof *slots);
		}
		slots = p;
		capacity = n;
	}
	slots[nslots].fallback = 0;
	int r = backend->arm(&slots[nslots], tid);
	if (r > 0)	/* the backend's own thread */
		return;
	if (r == 0) {
		nslots++;
		atomic_fetch_add(&stats.threads, 1);
	} else if (r != -ESRCH && r != -EINVAL) {
		/* ESRCH, EINVAL: the thread exited while we looked. */
		atomic_fetch_add(&stats.threads_unsampled, 1);
	}
}

/*
 * Threads that have ended through the key's destructor but may still be
 * listed in /proc/self/task for a moment (the rest of their exit runs
 * after it): a rescan must not give them a sampler again, which nothing
 * would take back until a sweep (a descriptor and a timer each, piling
 * up under thread churn).  A ring of the last tids ended; an entry goes
 * once a listing no longer shows its tid, or when the tid starts again
 * as a new pthread.  Touched only under lock.
 */
enum { ENDED = 256 };
static pid_t ended[ENDED];
static unsigned char ended_seen[ENDED];
static size_t ended_next;

static void ended_add(pid_t tid)
{
	ended[ended_next] = tid;
	ended_next = (ended_next + 1) % ENDED;
}

static void ended_forget(pid_t tid)
{
	for (size_t i = 0; i < ENDED; i++)
		if (ended[i] == tid)
			ended[i] = 0;
}

/* Is tid a thread that has ended?  Marks it seen in this listing. */
static int ended_listed(pid_t tid)
{
	for (size_t i = 0; i < ENDED; i++)
		if (ended[i] == tid) {
			ended_seen[i] = 1;
			return 1;
		}
	return 0;
}

/*
 * Kernel threads of the process (io_uring's iou-sqp and io-wq workers,
 * PF_IO_WORKER) are listed in /proc/self/task but never run user code:
 * not armed.  The flags are the ninth field of the thread's stat.  The
 * last ones seen are remembered, so that a rescan reads each stat once.
 */
#define PF_IO_WORKER 0x00000010u
#define PF_KTHREAD 0x00200000u
enum { WORKERS = 32 };
static pid_t workers[WORKERS];
static size_t workers_next;

static char scratch[4096] __attribute__((aligned(8)));	/* under lock */

static int kernel_worker(pid_t tid)
{
	for (size_t i = 0; i < WORKERS; i++)
		if (workers[i] == tid)
			return 1;
	char path[64] = "/proc/self/task/";
	size_t at = strlen(path);
	char digits[16];
	size_t n = 0;
	for (unsigned v = (unsigned)tid; v; v /= 10)
		digits[n++] = (char)('0' + v % 10);
	while (n)
		path[at++] = digits[--n];
	memcpy(path + at, "/stat", 6);
	long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	long got = syscall(SYS_read, (int)fd, scratch, sizeof scratch - 1);
	syscall(SYS_close, (int)fd);
	if (got <= 0)
		return 0;
	scratch[got] = '\0';
	char *p = strrchr(scratch, ')');	/* the name may hold anything */
	if (!p)
		return 0;
	/* ") S ppid pgrp session tty_nr tpgid flags" */
	for (int field = 0; field < 6 && p; field++)
		p = strchr(p + 1, ' ');
	if (!p)
		return 0;
	unsigned long flags = 0;
	for (p++; *p >= '0' && *p <= '9'; p++)
		flags = flags * 10 + (unsigned long)(*p - '0');
	if (!(flags & (PF_IO_WORKER | PF_KTHREAD)))
		return 0;
	workers[workers_next] = tid;
	workers_next = (workers_next + 1) % WORKERS;
	return 1;
}

/* Arm every thread of the process; with only_new, leave alone the
   threads that have a slot, without asking the backend.  The directory
   is opened for this listing only: no descriptor of ours stays where
   the program may close or reuse it. */
static void arm_listed(int only_new)
{
	long dir = syscall(SYS_openat, AT_FDCWD, "/proc/self/task",
			   O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0) {
		if (!only_new)
			arm_thread(current_tid());
		return;
	}
	static char buf[4096] __attribute__((aligned(8)));	/* under lock */
	long n;
	pid_t self = current_tid();
	memset(ended_seen, 0, sizeof ended_seen);
	while ((n = syscall(SYS_getdents64, (int)dir, buf, sizeof buf)) > 0) {
		for (long at = 0; at < n;) {
			struct dirent64 *d = (struct dirent64 *)(buf + at);
			at += d->d_reclen;
			long tid = 0;
			const char *c = d->d_name;
			for (; *c >= '0' && *c <= '9' && tid < (1L << 30); c++)
				tid = tid * 10 + (*c - '0');
			/* The calling thread runs our code: no kernel worker. */
			if (*c != '\0' || tid <= 0 || (only_new && find_slot((pid_t)tid))
			    || ended_listed((pid_t)tid)
			    || ((pid_t)tid != self && kernel_worker((pid_t)tid)))
				continue;
			arm_thread((pid_t)tid);
		}
	}
	if (n == 0)	/* a whole listing: the tids it lacks are gone */
		for (size_t i = 0; i < ENDED; i++)
			if (!ended_seen[i])
				ended[i] = 0;
	syscall(SYS_close, (int)dir);
}

static void arm_all(void)
{
	arm_listed(0);
}

static void disarm_all(void)
{
	for (size_t i = 0; i < nslots; i++)
		disarm_slot(&slots[i]);
	nslots = 0;
}

static unsigned max_hz_of(const struct backend *b, const char **why)
{
	*why = "";
	unsigned m = b->max_hz ? b->max_hz(why) : PROFIL_HZ_MAX;
	return m < PROFIL_HZ_MIN ? PROFIL_HZ_MIN : m > PROFIL_HZ_MAX ? PROFIL_HZ_MAX : m;
}

/* v in decimal, then suffix, into out (room for 10 digits and suffix). */
static void decimal(char *out, unsigned v, const char *suffix)
{
	char digits[10];
	unsigned n = 0;
	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < sizeof digits);
	while (n)
		*out++ = digits[--n];
	strcpy(out, suffix);
}

/* The rate asked was above what backend b delivers: said once a process
   (with write(2): the program's stdio is left alone). */
static void say_lowered(const struct backend *b, unsigned limit, const char *why)
{
	static atomic_flag said = ATOMIC_FLAG_INIT;
	if (atomic_flag_test_and_set(&said))
		return;
	char asked[16], use[16], line[256];
	decimal(asked, hz_asked, " Hz");
	decimal(use, limit, " Hz");
	size_t k = 0;
	const char *parts[] = { "libprofil: rate ", asked, ": above what the ", b->name,
				" backend delivers here (", why, "); using ", use, "\n" };
	for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
		for (const char *c = parts[i]; *c && k < sizeof line - 1; c++)
			line[k++] = *c;
	line[k - 1] = '\n';
	ssize_t r = write(STDERR_FILENO, line, k);
	(void)r;
}

/* Open the backend asked for, or under auto the first that works, at
   the rate asked or, if that is more than the backend delivers, at its
   limit. */
static int open_backend(void)
{
	int last = -ENOTSUP;
	passed_over = 0;
	for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++) {
		const struct backend *b = backends[i];
		if (wanted != PROFIL_BACKEND_AUTO && wanted != b->id)
			continue;
		const char *why;
		unsigned limit = max_hz_of(b, &why);
		unsigned use = hz_asked < limit ? hz_asked : limit;
		last = b->open(use, atomic_load(&generation));
		if (last == 0) {
			backend = b;
			used = b->id;
			used_backend = b;
			hz = use;
			atomic_store(&period_ns, 1000000000u / hz);
			if (use < hz_asked)
				say_lowered(b, use, why);
			return 0;
		}
		passed_over = -last;	/* say why it was not this one */
		if (wanted != PROFIL_BACKEND_AUTO)
			break;
	}
	return last;
}

static void go_dark(void);

/* Open a backend for a new generation and arm every thread. */
static int go_live(void)
{
	atomic_fetch_add(&generation, 1);
	int r = open_backend();
	if (r != 0)
		return r;
	atomic_store(&faulted, 0);
	atomic_store(&active, 1);
	arm_all();
	if (nslots == 0) {	/* not one thread could be sampled: not on */
		go_dark();
		return -EAGAIN;
	}
	return 0;
}

/*
 * Stop the backend; the sinks stay installed.  Once the generation has
 * moved and the handlers that saw the old one have left, the tallies are
 * final and no stop_self() of this session can come: then disarm.
 */
static void go_dark(void)
{
	if (!backend)
		return;
	if (backend->flush && atomic_load(&active))
		backend->flush();	/* what the backend holds is counted */
	atomic_store(&active, 0);
	atomic_fetch_add(&generation, 1);
	sinks_quiesce();
	disarm_all();
	backend->close();
	backend = NULL;
}

int sampler_start(struct sink_set *set)
{
	int cs = lock_call();
	if (atomic_load(&active) && !atomic_load(&faulted)) {
		if (backend->flush)	/* the old buffer's samples go to it */
			backend->flush();
		sinks_replace(set);
		stack_depth_update();
		unlock_call(cs);
		return 0;
	}
	go_dark();
	suspended = 0;
	owner = getpid();
	fault_install();
	sinks_replace(set);
	stack_depth_update();
	int r = go_live();
	if (r != 0) {
		sinks_replace(NULL);
		stack_depth_update();
	}
	unlock_call(cs);
	if (r != 0) {
		errno = -r;
		return -1;
	}
	return 0;
}

void sampler_stop(void)
{
	int cs = lock_call();
	go_dark();
	suspended = 0;
	sinks_replace(NULL);
	unlock_call(cs);
}

void sampler_stop_owner(int who)
{
	int cs = lock_call();
	if (sinks_owner() == who) {
		go_dark();
		suspended = 0;
		sinks_replace(NULL);
	}
	unlock_call(cs);
}

uint64_t sampler_period_ns(void)
{
	return atomic_load(&period_ns);
}

/* The fastest rate of the backend in use, or of any backend the next
   start may open. */
static unsigned limit_now(void)
{
	const char *why;
	if (backend)
		return max_hz_of(backend, &why);
	unsigned m = PROFIL_HZ_MIN;
	for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
		if (wanted == PROFIL_BACKEND_AUTO || wanted == backends[i]->id) {
			unsigned l = max_hz_of(backends[i], &why);
			m = l > m ? l : m;
		}
	return m;
}

int sampler_set_hz(unsigned new_hz)
{
	if (new_hz < PROFIL_HZ_MIN || new_hz > PROFIL_HZ_MAX) {
		errno = EINVAL;
		return -1;
	}
	int cs = lock_call();
	if (new_hz > limit_now()) {
		unlock_call(cs);
		errno = EINVAL;
		return -1;
	}
	hz_asked = hz = new_hz;
	atomic_store(&period_ns, 1000000000u / hz);
	if (backend) {
		backend->set_hz(NULL, hz);
		for (size_t i = 0; i < nslots; i++)
			backend->set_hz(&slots[i], hz);
	}
	unlock_call(cs);
	return 0;
}

static int backend_built(int id)
{
	int found = id == PROFIL_BACKEND_AUTO;
	for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
		found |= backends[i]->id == id;
	return found;
}

int sampler_set_backend(int id)
{
	int found = backend_built(id);
	if (id != PROFIL_BACKEND_AUTO && id != PROFIL_BACKEND_PERF
	    && id != PROFIL_BACKEND_TIMER) {
		errno = EINVAL;
		return -1;
	}
	if (!found) {
		errno = ENOTSUP;
		return -1;
	}
	int cs = lock_call();
	int busy = atomic_load(&active) && !atomic_load(&faulted);
	if (!busy)
		wanted = id;
	unlock_call(cs);
	if (busy) {
		errno = EBUSY;
		return -1;
	}
	return 0;
}

unsigned sampler_hz(void)
{
	return hz;
}

unsigned sampler_hz_asked(void)
{
	return hz_asked;
}

int sampler_backend_in_use(void)
{
	return used;
}

int sampler_passed_over(void)
{
	return used != PROFIL_BACKEND_PERF ? passed_over : 0;
}

int sampler_system_time(void)
{
	return system_time;
}

int sampler_user_only(void)
{
	return used_backend && used_backend->user_only && used_backend->user_only();
}

int sampler_active(void)
{
	return atomic_load(&active) && !atomic_load(&faulted);
}

int sampler_faulted(void)
{
	return atomic_load(&faulted);
}

/*
 * A rescan, under a lock taken with trylock: threads made without our
 * interposers get a sampler, and, one time in ten, slots of threads gone
 * unseen (which only hold resources) are released.
 */
static void rescan(void)
{
	static unsigned calls;
	if (pthread_mutex_trylock(&lock) != 0)
		return;
	if (backend && owner == (pid_t)syscall(SYS_getpid) && atomic_load(&active)
	    && !atomic_load(&faulted)) {
		if (++calls % 10 == 0)
			sweep_dead();
		arm_listed(1);
	}
	pthread_mutex_unlock(&lock);
}

#define RESCAN_NS 100000000

void sampler_tick(void)
{
	static _Atomic int64_t due;
	struct timespec now;
	if (!atomic_load(&active) || clock_gettime(CLOCK_MONOTONIC, &now) != 0)
		return;
	int64_t ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
	int64_t at = atomic_load_explicit(&due, memory_order_relaxed);
	if (ns < at || !atomic_compare_exchange_strong(&due, &at, ns + RESCAN_NS))
		return;
	rescan();
}

void sampler_thread_begin(void)
{
	int cs = lock_call();
	ended_forget(current_tid());	/* a tid used again */
	if (backend && owner == getpid() && atomic_load(&active) && !atomic_load(&faulted))
		arm_thread(current_tid());
	unlock_call(cs);
}

void sampler_thread_seen(void)
{
	pid_t tid = current_tid();
	pthread_mutex_lock(&lock);
	ended_forget(tid);
	if (backend && owner == (pid_t)syscall(SYS_getpid) && atomic_load(&active)
	    && !atomic_load(&faulted) && !find_slot(tid))
		arm_thread(tid);
	pthread_mutex_unlock(&lock);
}

void sampler_thread_gone(void)
{
	pid_t tid = current_tid();
	pthread_mutex_lock(&lock);
	struct thread_slot *slot = backend ? find_slot(tid) : NULL;
	if (slot)
		drop_slot(slot);
	ended_add(tid);
	pthread_mutex_unlock(&lock);
}

void sampler_thread_end(void)
{
	pid_t tid = current_tid();
	int cs = lock_call();
	struct thread_slot *slot = backend ? find_slot(tid) : NULL;
	if (slot)
		drop_slot(slot);
	ended_add(current_tid());
	unlock_call(cs);
	/* Outside the lock: the preload mode's own lock is taken before the
	   sampler's, never after. */
	const struct sampler_hooks *h = atomic_load(&hooks);
	if (h && h->thread_end)
		h->thread_end(tid);
}

void sampler_before_exec(void)
{
	/* In a vfork child the memory is the parent's: touch nothing. */
	if (owner != getpid())
		return;
	int cs = lock_call();
	if (backend) {
		go_dark();
		suspended = 1;
	}
	HOOK(before_exec);
	unlock_call(cs);
}

void sampler_after_exec_failed(void)
{
	if (owner != getpid())
		return;
	int cs = lock_call();
	HOOK(exec_failed);
	if (suspended) {
		suspended = 0;
		if (go_live() != 0)
			sinks_replace(NULL);
	}
	unlock_call(cs);
}

void sampler_exit_now(void)
{
	/* In a vfork child the memory is the parent's: touch nothing. */
	if (owner != getpid())
		return;
	/* What the rings hold is counted (the backend pointer may be
	   changing under a lock we do not take: read once). */
	const struct backend *b = backend;
	if (b && b->flush_now && atomic_load(&active))
		b->flush_now();
	atomic_store(&active, 0);
	atomic_fetch_add(&generation, 1);
	sinks_quiesce_exit();	/* every sample under way is in the counters */
	HOOK(exiting);
}

/*
 * The forking thread holds the lock across fork with every asynchronous
 * signal blocked: a program's handler that called execve (or anything
 * of ours) in that window would wait for the lock its own thread holds.
 * The mask goes back once the lock is let go, in parent and child.
 */
static sigset_t fork_mask;
static void child_restart(void);
static int fork_cancel;

static void before_fork(void)
{
	sigset_t all;
	sigfillset(&all);
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGBUS);
	sigdelset(&all, SIGILL);
	sigdelset(&all, SIGFPE);
	sigdelset(&all, SIGTRAP);
	sigset_t old;
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int cs = lock_call();
	fork_mask = old;
	fork_cancel = cs;
}

static void after_fork_parent(void)
{
	sigset_t old = fork_mask;
	unlock_call(fork_cancel);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void after_fork_child(void)
{
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
	lock = fresh;
	sigset_t old = fork_mask;
	int cs = fork_cancel;
	memset(ended, 0, sizeof ended);	/* the parent's threads */
	memset(workers, 0, sizeof workers);
	sinks_after_fork();
	HOOK(fork_child);
	if (backend)
		child_restart();
	pthread_setcancelstate(cs, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void child_restart(void)
{
	if (backend->child_reset)
		backend->child_reset();
	/* The parent's threads and timers do not exist here. */
	for (size_t i = 0; i < nslots; i++)
		backend->forget(&slots[i]);
	nslots = 0;
	owner = getpid();
	int on = atomic_load(&active) && !atomic_load(&faulted);
	atomic_store(&active, 0);
	backend->close();
	backend = NULL;
	if (on && go_live() != 0)
		sinks_replace(NULL);
}

/*
 * Load-time set-up.  Also called by monstartup: glibc's crti.o makes a
 * library's own _init call the program's __gmon_start__, which can run
 * monstartup before any constructor of libprofil.
 */
void sampler_init(void)
{
	static int done;
	if (done)
		return;
	done = 1;
	owner = getpid();
	threads_init();
	exec_init();
	pthread_atfork(before_fork, after_fork_parent, after_fork_child);
	struct env_settings env;
	env_read(&env);
	hz_asked = hz = env.hz;
	wanted = env.backend;
	system_time = env.system_time;
	stacks_wanted = env.stacks;
	if (!backend_built(wanted)) {
		env_complain("PROFIL_BACKEND", getenv("PROFIL_BACKEND"),
			     "not available in this build", "auto");
		wanted = PROFIL_BACKEND_AUTO;
	}
	atomic_store(&period_ns, 1000000000u / hz);
}

__attribute__((constructor)) static void sampler_ctor(void)
{
	sampler_init();
}
