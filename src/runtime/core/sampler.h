/*
 * sampler.h - the sampler core: one session of profiling for the whole
 * process, the list of sampled threads, and what happens to them at
 * thread creation and exit, fork and exec.
 */
#ifndef PROFIL_SAMPLER_H
#define PROFIL_SAMPLER_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "sinks/sink.h"

/*
 * Start profiling into set, or replace the sinks of the running session.
 * Takes ownership of set.  Returns 0 or -1 with errno.
 */
int sampler_start(struct sink_set *set);

/* Stop profiling (if on); no sink is written after it returns. */
void sampler_stop(void);

/* The same, but only if the sinks installed are owner's (enum sink_owner). */
void sampler_stop_owner(int owner);

/* The sampling period in force, in nanoseconds (1 s / the rate). */
uint64_t sampler_period_ns(void);

/* Rate and backend for this and later sessions (see profil.h). */
int sampler_set_hz(unsigned hz);
int sampler_set_backend(int backend);
/* The rate in force (or the next start's, before it lowers it to its
   backend's limit), and the rate asked for. */
unsigned sampler_hz(void);
unsigned sampler_hz_asked(void);
int sampler_backend_in_use(void);
int sampler_active(void);
int sampler_faulted(void);

/* What sampler_take() did with a sample. */
enum take_result {
	TAKE_OK,	/* counted */
	TAKE_OFF,	/* this session turned itself off: stop_self was called */
	TAKE_STALE	/* a left-over of an earlier session: ignored */
};

/*
 * Hand over weight samples at pc of thread tid, taken under session
 * generation in that thread (a signal handler), and add them to *tally
 * (if not NULL) when they are taken.  If the session
 * has turned itself off (the buffer became unwritable), stop_self(arg) is
 * called to stop the thread's sampler.  Both happen before any later
 * session can start, so that they never touch what a new session has
 * made.  Async-signal-safe and lock-free: called from signal handlers.
 */
enum take_result sampler_take(unsigned generation, pid_t tid, uintptr_t pc, uint32_t weight,
			      _Atomic uint64_t *tally,
			      void (*stop_self)(void *arg), void *arg);

/*
 * The same, when system of the weight samples stand for time in the
 * kernel: they go to stats.system and to the sinks' system counts too.
 */
enum take_result sampler_take_split(unsigned generation, pid_t tid, uintptr_t pc,
				    uint32_t weight, uint32_t system, _Atomic uint64_t *tally,
				    void (*stop_self)(void *arg), void *arg);

/*
 * The same, with the thread's call stack: pcs[0..n) innermost first (pc
 * is pcs[0], counted exactly as sampler_take_split counts it), the walk
 * having ended for reason stop (enum profile_stop, counted in
 * stats.stack_stop).  The stack goes to the sink set's stack table if
 * it has one.  n must be at least 1.  Async-signal-safe, lock-free.
 */
enum take_result sampler_take_stack(unsigned generation, pid_t tid, const uintptr_t *pcs,
				    unsigned n, unsigned stop, uint32_t weight, uint32_t system,
				    _Atomic uint64_t *tally,
				    void (*stop_self)(void *arg), void *arg);

/*
 * How deep a backend should walk each sample's stack: 0 when stacks are
 * off (not asked for, or the sinks have nowhere to keep them), else the
 * most frames to keep.  Async-signal-safe: one atomic load.
 */
unsigned sampler_stack_depth(void);

/*
 * Stacks for the running session and later ones: depth frames at most
 * (0: off; at most PROFILE_DEPTH_MAX).  Returns 0, or -1 with errno
 * EINVAL.  Not in a signal handler.
 */
int sampler_set_stacks(unsigned depth);
/* The depth asked for (sampler_set_stacks, PROFIL_STACKS). */
unsigned sampler_stacks_wanted(void);

/*
 * n samples of weight 1 at pcs, of thread tid, taken as sampler_take()
 * would take them one by one but with one entry into the sinks' read
 * side and one update of the statistics (a backend that reads records
 * in bulk, in a thread of its own).  Returns how many were taken.  Async-signal-safe, lock-free.
 */
size_t sampler_take_batch(unsigned generation, pid_t tid, const uintptr_t *pcs, size_t n,
			  void (*stop_self)(void *arg), void *arg);

/*
 * Count n samples of session generation as taken and lost, for cause
 * (enum profile_lost: a backend that learns of samples the kernel
 * dropped).  Returns whether they were
 * counted: not if the session is over.  Lock-free.
 */
int sampler_lost(unsigned generation, unsigned cause, uint64_t n);

/*
 * From a backend's signal handler, in a thread of the program: at most
 * every 100 ms, sample the threads the sampler has not seen start (made
 * with a raw clone system call, or by glibc itself) and forget those
 * gone.  Does nothing if the sampler is busy (trylock): a later signal
 * tries again.  Async-signal-safe; no thread of ours does this.
 */
void sampler_tick(void);

/* Does the backend in use see kernel time?  (PROFIL_STATS_USER_ONLY) */
int sampler_user_only(void);

/*
 * Why auto did not use the perf backend (the errno perf_event_open gave:
 * EACCES under perf_event_paranoid 3, EPERM from a seccomp filter, EMFILE
 * without a descriptor to spare), or 0 if it did or was not asked to.
 */
int sampler_passed_over(void);
/* Should a user-only backend charge system time?  (PROFIL_SYSTEM_TIME) */
int sampler_system_time(void);

/* Load-time set-up; runs once, from a constructor or monstartup. */
void sampler_init(void);

/* Thread life cycle, from threads.c (never from a signal handler). */
void sampler_thread_begin(void);
void sampler_thread_end(void);
/* A thread made by glibc's clone(), with no TLS of its own: armed if
   profiling is on and it has no sampler (no cancellation state, no
   allocation). */
void sampler_thread_seen(void);
/* The same thread at its end: its sampler goes. */
void sampler_thread_gone(void);

/*
 * Load-time set-up of threads.c and exec.c.  Calling them from the
 * sampler also makes a static link pull in those files' interposers.
 */
void threads_init(void);
void exec_init(void);

/* The calling thread's stack as it started, [*lo, *hi); both 0 when not
   known (the main thread, a thread made with clone).  Async-signal-safe. */
void threads_stack(uintptr_t *lo, uintptr_t *hi);

/*
 * The process ends now (_exit, _Exit): no sample is counted after this
 * returns, and the preload mode's file is finished.  Unlike an exit,
 * nothing is joined or unmapped (a signal handler may call _exit):
 * async-signal-safe and lock-free.  What the perf rings hold is counted
 * first, but a ring the calling thread was draining when interrupted.
 */
void sampler_exit_now(void);

/* Around execve and friends: stop everything, or restart after failure. */
void sampler_before_exec(void);
void sampler_after_exec_failed(void);

/*
 * What the preload mode (preload.c), or the gmon runtime of a -pg
 * program (moncontrol.c), hears from the sampler: the two never run in
 * one process, so one set of hooks.  sampled
 * runs in signal handlers after each counted sample (async-signal-safe);
 * thread_end in a thread that ends, once its sampler is stopped, outside
 * the sampler's lock;
 * fork_child runs in a fork child before it samples again, and may
 * replace the sinks; before_exec runs once the session is torn down for
 * an exec, exec_failed when it goes on after all.
 */
struct sampler_hooks {
	void (*sampled)(void);
	void (*fork_child)(void);
	void (*before_exec)(void);
	void (*exec_failed)(void);
	void (*thread_end)(pid_t tid);
	void (*exiting)(void);	/* async-signal-safe: from _exit */
};
void sampler_set_preload_hooks(const struct sampler_hooks *hooks);

#endif
