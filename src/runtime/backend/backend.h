/*
 * backend.h - what a sampling backend provides to the sampler.
 *
 * A backend only produces samples: it observes the user pc of a thread
 * after each period of that thread's CPU time and hands it to
 * sampler_take() with a weight (how many periods the observation stands
 * for).  It knows nothing of buffers.  The sampler owns the thread list
 * and the life cycle and calls these hooks with its lock held, either
 * from the program's calls or from a signal handler's rescan
 * (sampler_tick, with trylock): arm, alive, disarm and what they call
 * allocate nothing and make system calls through syscall() only.
 */
#ifndef PROFIL_BACKEND_H
#define PROFIL_BACKEND_H

#include <stdint.h>
#include <sys/types.h>

/* What the sampler keeps per sampled thread; the rest is the backend's. */
struct thread_slot {
	pid_t tid;
	int handle;		/* a timer id, a descriptor */
	uint32_t tally;		/* where the thread's samples are tallied */
	int64_t base_ns;	/* thread CPU time its periods count from
				   (below 0 for a thread armed as it starts) */
	int fallback;		/* the perf backend gave this thread a timer */
};

struct backend {
	const char *name;
	int id;		/* enum profil_backend */
	/* Is the backend blind to time spent in the kernel?  (NULL: no) */
	int (*user_only)(void);

	/*
	 * Process-wide set-up before the first thread is armed (signal
	 * handler, helper state).  generation tags this session's samples.
	 * Returns 0 or a negative errno: -EACCES, -EPERM, -ENOSYS, -ENOENT
	 * mean "not allowed here", and auto moves on to the next backend.
	 */
	int (*open)(unsigned hz, unsigned generation);
	/* Start sampling thread tid.  Returns 0, 1 for a thread of the
	   backend's own that is not to be sampled, or a negative errno. */
	int (*arm)(struct thread_slot *slot, pid_t tid);
	/* Is the thread that slot was armed for still there?  A thread the
	   sampler did not see exit leaves its slot behind, and its tid may
	   be given to a new thread. */
	int (*alive)(struct thread_slot *slot);
	/* Change the rate of a sampled thread; with slot NULL, the rate
	   for threads armed from now on. */
	int (*set_hz)(struct thread_slot *slot, unsigned hz);
	/*
	 * Stop sampling one thread and release what arm() took.  Returns
	 * the samples the thread's CPU time called for that never reached
	 * sampler_take() (a kernel that delivers late, or not before the
	 * thread ends), so that the statistics still measure CPU time, and
	 * adds them to why by cause (enum profile_lost).
	 */
	uint64_t (*disarm)(struct thread_slot *slot, uint64_t *why);
	/* The fastest rate this backend delivers here (NULL: PROFIL_HZ_MAX):
	   the kernel's limit, and what it can take without its own cost
	   running away; *why says which, as a phrase.  Not called from a
	   signal handler. */
	unsigned (*max_hz)(const char **why);
	/* Hand every sample taken so far to sampler_take() before
	   returning (NULL: samples are never held back). */
	void (*flush)(void);
	/* The same from _exit, maybe in a signal handler: async-signal-safe,
	   lock-free, waiting for no frame of its own thread (NULL: none). */
	void (*flush_now)(void);
	/* In a fork child, first: reset what the parent's threads may have
	   held (locks, helper threads) (NULL: nothing to do). */
	void (*child_reset)(void);
	/* In a fork child: release slot's resources without touching the
	   parent's (the thread does not exist in the child). */
	void (*forget)(struct thread_slot *slot);
	/* Process-wide tear-down after every thread is disarmed: afterwards
	   no signal or descriptor of the backend is left. */
	void (*close)(void);
};

extern const struct backend backend_timer;
/*
 * For a user-only backend, with backend_timer open: a slow CPU-time
 * timer for thread tid (every interval_ns of its CPU time, at most and
 * by default 10 ms) whose signal, in that thread, first hands cookie to
 * the drain hook (if cookie >= 0), then, with charge, charges the
 * thread's system time since the last one, in the sampler's periods, to
 * the pc it interrupts.  Once 4 signals in a row found no new system
 * time, and always without charge, it fires every quiet_ns instead (from
 * interval_ns to 40 ms; 0 for 40 ms).  Released with backend_timer.disarm(slot).
 * Returns 0 or a negative errno.
 */
int timer_arm_system(struct thread_slot *slot, pid_t tid, int charge, long interval_ns,
		     long quiet_ns, long cookie);
/*
 * The hook such timers call, in a signal handler of the thread they
 * sample (async-signal-safe, lock-free), with the generation of the
 * session that armed them; NULL for none.
 */
void timer_set_drain(void (*hook)(unsigned generation, long cookie));
/* Tell such a timer that its thread's user-only backend took periods
   more of user time (they bound the system time it may charge). */
void timer_system_user(const struct thread_slot *slot, uint64_t periods);
/* The periods of system time such a timer has charged. */
uint64_t timer_system_charged(const struct thread_slot *slot);
/*
 * For a backend that starts its threads on timers: a sampling timer, as
 * backend_timer.arm() makes, whose signal, in thread tid, hands cookie
 * to the promote hook after each sample.  The hook may replace the
 * timer (disarming it with backend_timer.disarm) from there.
 */
int timer_arm_promoting(struct thread_slot *slot, pid_t tid, long cookie);
/* That hook: async-signal-safe, lock-free; NULL for none. */
void timer_set_promote(void (*hook)(unsigned generation, long cookie));
extern const struct backend backend_perf;

#endif
