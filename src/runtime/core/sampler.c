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
 * Life cycle: a thread created through pthread_create is armed as it
 * starts and disarmed as it exits (threads.c); threads that exist when
 * profiling starts are found in /proc/self/task.  After fork the child
 * re-arms its only thread; before exec everything is torn down so that
 * the new image inherits no timer, signal or descriptor.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../../include/profil.h"
#include "backend/backend.h"
#include "core/env.h"
#include "sinks/fault.h"
#include "core/fds.h"
#include "core/sampler.h"
#include "core/stats.h"
#include "sinks/thread_table.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

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
static unsigned hz = PROFIL_HZ_DEFAULT;
static int system_time = 1;		/* PROFIL_SYSTEM_TIME */
static pid_t owner;			/* the process the session belongs to */
static int suspended;			/* torn down for an exec that may fail */

/* Read by signal handlers. */
static atomic_int active;
static atomic_int faulted;
static atomic_uint generation;
static atomic_uint_fast64_t period_ns = 1000000000u / PROFIL_HZ_DEFAULT;
static const struct sampler_hooks *_Atomic hooks;

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

enum take_result sampler_take_split(unsigned gen, pid_t tid, uintptr_t pc, uint32_t weight,
				    uint32_t system, _Atomic uint64_t *tally,
				    void (*stop_self)(void *arg), void *arg)
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
	enum sink_result r = sinks_count(pc, weight, &who);
	if (r == SINK_NONE)
		goto out;
	stats_add(&stats.observed, 1);
	stats_add(&stats.cpu_ns, weight * atomic_load_explicit(&period_ns, memory_order_relaxed));
	if (tally)
		atomic_fetch_add_explicit(tally, weight, memory_order_relaxed);
	result = TAKE_OK;
	if (system && r == SINK_OK) {
		stats_add(&stats.system, system);
		sinks_count_system(pc, system, &who);
	}
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

size_t sampler_take_batch(unsigned gen, pid_t tid, const uintptr_t *pcs, size_t n,
			  void (*stop_self)(void *arg), void *arg)
{
	size_t taken = 0;
	struct thread_ref who = THREAD_REF(tid, 0);
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

int sampler_lost(unsigned gen, uint64_t n)
{
	int counted = 0;
	unsigned token = sinks_enter();
	if (gen == atomic_load(&generation) && atomic_load(&active)
	    && !atomic_load(&faulted)) {
		stats_add(&stats.lost, n);
		stats_add(&stats.cpu_ns, n * atomic_load_explicit(&period_ns, memory_order_relaxed));
		counted = 1;
	}
	sinks_leave(token);
	return counted;
}

static pid_t current_tid(void)
{
	return (pid_t)gettid();
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
	uint64_t owed = backend->disarm(slot);
	if (atomic_load(&faulted))
		return;
	stats_add(&stats.lost, owed);
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
	if (nslots == capacity) {
		size_t n = capacity ? capacity * 2 : 64;
		struct thread_slot *p = realloc(slots, n * sizeof *p);
		if (!p) {
			atomic_fetch_add(&stats.threads_unsampled, 1);
			return;
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
 * /proc/self/task, open while a session is on: a rescan lists it again
 * with two system calls (lseek, getdents64) instead of an opendir.
 */
static int task_fd = -1;

/* Arm every thread of the process; with only_new, leave alone the
   threads that have a slot, without asking the backend. */
static void arm_listed(int only_new)
{
	static const char task[] = "/proc/self/task";
	int transient = -1;	/* not to be kept (fds.c): for this listing only */
	if (task_fd < 0)
		task_fd = fds_keep(open(task, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	int dir = task_fd >= 0 ? task_fd
		: (transient = open(task, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	if (dir < 0 || lseek(dir, 0, SEEK_SET) != 0) {
		arm_thread(current_tid());
		if (transient >= 0)
			close(transient);
		return;
	}
	char buf[4096] __attribute__((aligned(8)));
	long n;
	memset(ended_seen, 0, sizeof ended_seen);
	while ((n = syscall(SYS_getdents64, dir, buf, sizeof buf)) > 0) {
		for (long at = 0; at < n;) {
			struct dirent64 *d = (struct dirent64 *)(buf + at);
			at += d->d_reclen;
			char *end;
			long tid = strtol(d->d_name, &end, 10);
			if (*end != '\0' || tid <= 0 || (only_new && find_slot((pid_t)tid))
			    || ended_listed((pid_t)tid))
				continue;
			arm_thread((pid_t)tid);
		}
	}
	if (n == 0)	/* a whole listing: the tids it lacks are gone */
		for (size_t i = 0; i < ENDED; i++)
			if (!ended_seen[i])
				ended[i] = 0;
	if (transient >= 0)
		close(transient);
}

static void arm_all(void)
{
	arm_listed(0);
}

static void close_task_fd(void)
{
	if (task_fd >= 0)
		close(task_fd);
	task_fd = -1;
}

static void disarm_all(void)
{
	for (size_t i = 0; i < nslots; i++)
		disarm_slot(&slots[i]);
	nslots = 0;
}

/* Open the backend asked for, or under auto the first that works. */
static int open_backend(void)
{
	int last = -ENOTSUP;
	passed_over = 0;
	for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++) {
		const struct backend *b = backends[i];
		if (wanted != PROFIL_BACKEND_AUTO && wanted != b->id)
			continue;
		last = b->open(hz, atomic_load(&generation));
		if (last == 0) {
			backend = b;
			used = b->id;
			used_backend = b;
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
	atomic_store(&period_ns, 1000000000u / hz);
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
	close_task_fd();
}

int sampler_start(struct sink_set *set)
{
	pthread_mutex_lock(&lock);
	if (atomic_load(&active) && !atomic_load(&faulted)) {
		if (backend->flush)	/* the old buffer's samples go to it */
			backend->flush();
		sinks_replace(set);
		pthread_mutex_unlock(&lock);
		return 0;
	}
	go_dark();
	suspended = 0;
	owner = getpid();
	fault_install();
	sinks_replace(set);
	int r = go_live();
	if (r != 0)
		sinks_replace(NULL);
	pthread_mutex_unlock(&lock);
	if (r != 0) {
		errno = -r;
		return -1;
	}
	return 0;
}

void sampler_stop(void)
{
	pthread_mutex_lock(&lock);
	go_dark();
	suspended = 0;
	sinks_replace(NULL);
	pthread_mutex_unlock(&lock);
}

void sampler_stop_owner(int who)
{
	pthread_mutex_lock(&lock);
	if (sinks_owner() == who) {
		go_dark();
		suspended = 0;
		sinks_replace(NULL);
	}
	pthread_mutex_unlock(&lock);
}

uint64_t sampler_period_ns(void)
{
	return atomic_load(&period_ns);
}

int sampler_set_hz(unsigned new_hz)
{
	if (new_hz < PROFIL_HZ_MIN || new_hz > PROFIL_HZ_MAX) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&lock);
	hz = new_hz;
	atomic_store(&period_ns, 1000000000u / hz);
	if (backend) {
		backend->set_hz(NULL, hz);
		for (size_t i = 0; i < nslots; i++)
			backend->set_hz(&slots[i], hz);
	}
	pthread_mutex_unlock(&lock);
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
	pthread_mutex_lock(&lock);
	int busy = atomic_load(&active) && !atomic_load(&faulted);
	if (!busy)
		wanted = id;
	pthread_mutex_unlock(&lock);
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

void sampler_rescan(void)
{
	static unsigned calls;
	if (pthread_mutex_trylock(&lock) != 0)
		return;
	if (backend && owner == getpid() && atomic_load(&active) && !atomic_load(&faulted)) {
		/* Slots of threads gone unseen only hold resources: look
		   for them one time in ten. */
		if (++calls % 10 == 0)
			sweep_dead();
		arm_listed(1);
	}
	pthread_mutex_unlock(&lock);
}

void sampler_thread_begin(void)
{
	pthread_mutex_lock(&lock);
	ended_forget(current_tid());	/* a tid used again */
	if (backend && owner == getpid() && atomic_load(&active) && !atomic_load(&faulted))
		arm_thread(current_tid());
	pthread_mutex_unlock(&lock);
}

void sampler_thread_end(void)
{
	pid_t tid = current_tid();
	pthread_mutex_lock(&lock);
	struct thread_slot *slot = backend ? find_slot(tid) : NULL;
	if (slot)
		drop_slot(slot);
	ended_add(current_tid());
	pthread_mutex_unlock(&lock);
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
	pthread_mutex_lock(&lock);
	if (backend) {
		go_dark();
		suspended = 1;
	}
	HOOK(before_exec);
	pthread_mutex_unlock(&lock);
}

void sampler_after_exec_failed(void)
{
	if (owner != getpid())
		return;
	pthread_mutex_lock(&lock);
	HOOK(exec_failed);
	if (suspended) {
		suspended = 0;
		if (go_live() != 0)
			sinks_replace(NULL);
	}
	pthread_mutex_unlock(&lock);
}

void sampler_exit_now(void)
{
	/* In a vfork child the memory is the parent's: touch nothing. */
	if (owner != getpid())
		return;
	atomic_store(&active, 0);
	atomic_fetch_add(&generation, 1);
	sinks_quiesce();	/* every sample under way is in the counters */
	HOOK(exiting);
}

static void before_fork(void)
{
	pthread_mutex_lock(&lock);
}

static void after_fork_parent(void)
{
	pthread_mutex_unlock(&lock);
}

static void after_fork_child(void)
{
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
	lock = fresh;
	memset(ended, 0, sizeof ended);	/* the parent's threads */
	sinks_after_fork();
	HOOK(fork_child);
	if (!backend)
		return;
	close_task_fd();	/* the parent's threads */
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
	hz = env.hz;
	wanted = env.backend;
	system_time = env.system_time;
	if (!backend_built(wanted)) {
		env_complain("PROFIL_BACKEND", getenv("PROFIL_BACKEND"),
			     "not available in this build", "auto");
		wanted = PROFIL_BACKEND_AUTO;
	}
	atomic_store(&period_ns, 1000000000u / hz);
	if (preload_init)
		preload_init();
}

__attribute__((constructor)) static void sampler_ctor(void)
{
	sampler_init();
}
