/*
 * backend_timer.c - sampling with POSIX per-thread CPU-time timers.
 *
 * Each thread gets a timer on its own CPU clock that sends a real-time
 * signal to that thread (SIGEV_THREAD_ID) after every period of CPU
 * time.  Works wherever timers and signals do, including where
 * perf_event_open is forbidden.  The kernel checks CPU-time timers only
 * at its scheduler tick (250 Hz here), so above that rate one signal
 * stands for several periods: the timer's overrun count says how many,
 * and the sample is weighted by it, so that counts still measure CPU time.
 *
 * The signal is a real-time signal no one else uses (so a program's own
 * SIGPROF and ITIMER_PROF are left alone).  Its si_value carries the
 * session generation, so that a signal queued by an earlier session is
 * recognised and ignored, and the thread's tally: the samples delivered
 * to it.  On a machine with far more busy threads than processors the
 * kernel can fire a CPU-time timer hundreds of milliseconds late, and a
 * thread may end before its last signal comes; when a thread is disarmed,
 * its CPU time against its tally says how many samples it was owed.
 *
 * A CPU-time timer counts the kernel's time on the thread's behalf too,
 * and its signal arrives when the thread returns to user mode: at the pc
 * that entered the kernel, where SPEC section 2 charges it.  Which part
 * of the samples stands for kernel time is read from the thread's system
 * time (RUSAGE_THREAD) at each sample: the periods of system time not
 * yet charged are charged to this sample, up to its weight.
 *
 * A user-only backend (perf with exclude_kernel) sees no kernel time, so
 * it gives each thread a second, slow timer of this kind as well
 * (timer_arm_system): every SYSTEM_INTERVAL of the thread's CPU time its
 * signal charges the system time the thread used since the last one, in
 * the sampler's periods, to the pc it interrupts, and nothing else.  A
 * thread that used none since its last signal slows its timer down
 * (pace): each signal costs the user-only backend samples too.
 *
 * With stacks on (sampler_stack_depth), the handler walks the thread's
 * stack in place from the signal's context (unwind.c): every read
 * bounded above the interrupted sp and fault-tolerant, the tables built
 * outside handlers.  The pcs go on the handler's own stack, as many as
 * fit with room to spare on a small alternate signal stack or thread
 * stack (with none, the sampled pc alone, marked not walked).  A signal
 * that finds too little stack left for the handler at all is not taken,
 * and counted lost (short of stack): nothing is written past its end.
 *
 * on_sample() is a signal handler: async-signal-safe, lock-free, no
 * malloc, no stdio, no locks.  The other functions run under the
 * sampler's lock.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "../../../include/profil.h"
#include "../../format/profile.h"
#include "backend/backend.h"
#include "arch/context.h"
#include "core/sampler.h"
#include "core/stats.h"
#include "sinks/fault.h"
#include "sinks/sigown.h"
#include "unwind/unwind.h"
#include "sinks/statemem.h"

static int timer_signal;	/* 0 while closed */
/* Generation of the open session; read by handlers to tell our signals
   from the program's own instances of the same signal. */
static _Atomic unsigned session;
static struct itimerspec period;
/* Read by the handlers of every thread while set_period may change it:
   an atomic, read relaxed (any recent value is right). */
static _Atomic uint64_t period_ns;

static uint64_t period_now(void)
{
	return atomic_load_explicit(&period_ns, memory_order_relaxed);
}

/* Samples delivered to each thread armed in this session, by arm order. */
#define MAX_TALLIES (1u << 20)
#define NO_TALLY UINT32_MAX
/* In a signal's tally: the timer only charges system time. */
#define SYSTEM_ONLY 0x80000000u
/*
 * 100 times a CPU-second: a signal costs 5-12 us here, so at most about
 * 0.1% of the thread's time; the system time of each 10 ms goes to the
 * pc where the signal finds the thread.
 */
#define SYSTEM_INTERVAL_NS 10000000L
/*
 * While the thread uses no system time there is nothing to charge, and
 * the signal only drains the backend: 25 times a CPU-second.  A signal
 * costs the user-only backend more than its own time: the kernel's
 * sampling timer, firing while the thread is in the kernel taking the
 * signal, takes no sample.  That was about 1 signal in 50 here, most of
 * the periods a 4-thread program of 3 s lost (issue 15).
 */
#define QUIET_INTERVAL_NS 40000000L
static _Atomic uint64_t *tallies;
static _Atomic uint32_t next_tally;

/* A new tally, or NO_TALLY when all are taken.  Atomic: the perf
   backend arms a system-time timer from a thread's own handler
   (timer_set_promote), outside the sampler's lock. */
static uint32_t take_tally(void)
{
	uint32_t t = atomic_load(&next_tally);
	while (t < MAX_TALLIES)
		if (atomic_compare_exchange_weak(&next_tally, &t, t + 1))
			return t;
	return NO_TALLY;
}
/*
 * Per thread, by tally: charged is the periods of its system time
 * charged so far, plus one (0: the thread has not been sampled yet);
 * only that thread's handler, which cannot nest, touches it.  For a
 * system-time timer, cpu0 is the thread's CPU time when it was armed and
 * user the periods its user-only backend has taken since
 * (timer_system_user): together they bound what may be charged.
 * Written when the thread is armed, then read by its own handler:
 * atomics, as the arming thread is another one.
 */
struct system_time {
	_Atomic pid_t tid;	/* the thread the tally's timers sample */
	_Atomic uint64_t charged;
	_Atomic uint64_t cpu0;
	_Atomic uint64_t user;
	_Atomic long cookie;	/* handed to the drain hook (a system-time
				   timer) or the promote hook, or -1 */
	_Atomic int charge;	/* a system-time timer that charges */
	_Atomic uint64_t faults;	/* its page faults at the last signal */
	_Atomic uint64_t system_seen;	/* its system time then, in periods */
	_Atomic long busy_ns, quiet_ns;	/* a system-time timer's intervals */
	_Atomic long interval_ns;	/* the one it runs at */
	_Atomic unsigned calm;	/* signals in a row that found no new system time */
	_Atomic uint64_t short_of_stack;	/* periods not taken: no stack */
};
static struct system_time *systems;

/* What a user-only backend drains at each of its threads' system-time
   signals (timer_set_drain), in that thread: async-signal-safe. */
static void (*_Atomic drain_hook)(unsigned generation, long cookie);

void timer_set_drain(void (*hook)(unsigned generation, long cookie))
{
	atomic_store(&drain_hook, hook);
}

/* What a sampling timer of timer_arm_promoting() hands its cookie to
   after each sample, in its thread: async-signal-safe. */
static void (*_Atomic promote_hook)(unsigned generation, long cookie);

void timer_set_promote(void (*hook)(unsigned generation, long cookie))
{
	atomic_store(&promote_hook, hook);
}

/* si_value: the generation in the high half, the tally in the low. */
static void *pack_value(unsigned generation, uint32_t tally)
{
	return (void *)(uintptr_t)((uint64_t)generation << 32 | tally);
}

static void stop_timer(void *timer)
{
	static const struct itimerspec zero;
	if (sigown_syscalls_ok())	/* else seccomp's strict mode */
		syscall(SYS_timer_settime, (int)(intptr_t)timer, 0, &zero, NULL);
}

/*
 * What the handler needs below on_sample's frame: a sample without its
 * stack takes under 1 KiB on x86-64, the deepest paths (a perf ring's
 * drain, a rescan that arms a thread) about 2 KiB.  A signal that finds
 * less than the first left on the stack it runs on (a small sigaltstack,
 * a thread's small stack) is not taken (short of stack); with less than
 * the second, the drain and the rescan wait for a later signal.  A walk
 * keeps the first free below its pcs, and a kernel signal frame more
 * (kernel_frame): a read of the walk that faults is recovered in a
 * handler whose frame goes below ours.
 */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define HANDLER_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HANDLER_SANITIZED 1
#endif
#ifdef HANDLER_SANITIZED	/* a test build: frames with red zones */
#define HANDLER_SCALE 3u
#else
#define HANDLER_SCALE 1u
#endif
#if defined(__aarch64__)
#define HANDLER_FLAT (2048u * HANDLER_SCALE)
#define HANDLER_DEEP (4096u * HANDLER_SCALE)
#define KERNEL_FRAME_DEFAULT 5120u	/* arm64's MINSIGSTKSZ */
#else
#define HANDLER_FLAT (1536u * HANDLER_SCALE)
#define HANDLER_DEEP (3072u * HANDLER_SCALE)
#define KERNEL_FRAME_DEFAULT 2048u
#endif
/* The kernel's signal frame here (AT_MINSIGSTKSZ: 1 to 4 KiB on x86-64,
   by the processor's vector registers), read at open. */
static uintptr_t kernel_frame = KERNEL_FRAME_DEFAULT;

/*
 * The bytes left below here on the stack the handler runs on: the
 * alternate signal stack, or the thread's own as it started
 * (threads_stack); UINTPTR_MAX when that is not known (the main thread,
 * whose stack grows; a stack of the program's own making).
 */
static uintptr_t stack_left(const ucontext_t *uc, uintptr_t here)
{
	uintptr_t alt = (uintptr_t)uc->uc_stack.ss_sp;
	if (!(uc->uc_stack.ss_flags & SS_DISABLE) && here > alt
	    && here - alt <= uc->uc_stack.ss_size)
		return here - alt;
	uintptr_t lo, hi;
	threads_stack(&lo, &hi);
	return lo && here > lo && here <= hi ? here - lo : UINTPTR_MAX;
}

/*
 * The periods of the calling thread's system time not yet charged: one
 * getrusage per signal.  The first time a thread asks, its system time
 * so far was spent before it was armed, and none is pending.
 */
static uint32_t system_pending(uint32_t tally, int *faulted, int *grew)
{
	struct rusage ru;
	*faulted = *grew = 0;
	if (syscall(SYS_getrusage, RUSAGE_THREAD, &ru) != 0)
		return 0;
	/* Did the thread take page faults since the last signal? */
	uint64_t faults = (uint64_t)ru.ru_minflt + (uint64_t)ru.ru_majflt;
	*faulted = atomic_exchange_explicit(&systems[tally].faults, faults,
					    memory_order_relaxed) != faults;
	uint64_t ns = (uint64_t)ru.ru_stime.tv_sec * 1000000000u
		      + (uint64_t)ru.ru_stime.tv_usec * 1000u;
	uint64_t now = ns / period_now() + 1;
	*grew = atomic_exchange_explicit(&systems[tally].system_seen, now,
					 memory_order_relaxed) != now;
	_Atomic uint64_t *charged_at = &systems[tally].charged;
	uint64_t charged = atomic_load_explicit(charged_at, memory_order_relaxed);
	if (charged == 0 || now < charged) {
		atomic_store_explicit(charged_at, now, memory_order_relaxed);
		return 0;
	}
	return now - charged < UINT32_MAX ? (uint32_t)(now - charged) : UINT32_MAX;
}

/* Mark n pending periods as dealt with (charged, or dropped). */
static void system_settle(uint32_t tally, uint32_t n)
{
	atomic_fetch_add_explicit(&systems[tally].charged, n, memory_order_relaxed);
}

/*
 * Was the thread stopped right after a system call instruction, that is,
 * is the signal being delivered as the call returns?  Reads the two (or
 * four) bytes before pc, which are in pc's page, and pc's page is mapped:
 * the thread was about to execute it.
 */
static int after_system_call(uintptr_t pc)
{
#if defined(__x86_64__)
	if ((pc & 4095) < 2)
		return 0;
	const unsigned char *p = (const unsigned char *)pc;
	return p[-2] == 0x0f && p[-1] == 0x05;		/* syscall */
#elif defined(__aarch64__)
	if ((pc & 4095) < 4 || (pc & 3))
		return 0;
	return *(const uint32_t *)(pc - 4) == 0xd4000001u;	/* svc #0 */
#else
	(void)pc;
	return 1;
#endif
}

/*
 * A timer of timer_arm_system(): the system time since it last charged.
 * The time goes to a pc that has just made a system call, so that a
 * thread that alternates between arithmetic and reads does not see the
 * reads' time charged to the arithmetic where the signal happens to find
 * it.  Time that builds up without such a pc goes where the signal lands
 * once it is SYSTEM_CARRY intervals' worth, or at once if the thread took
 * page faults since the last signal: that is time in the faults, and the
 * signal lands where the thread runs, in the faulting code most likely.
 * Waiting for the next system call would give it to that call (a thread
 * that touches fresh mappings would have its faults' time charged to its
 * next mmap, or to the futex it then blocks in: issue 21).
 *
 * The kernel's split of CPU time into user and system is sampled at its
 * tick, and on a loaded virtual machine it can put a third more into
 * system time than there was; the user-only backend meanwhile samples
 * user time exactly.  So no more is charged than the thread's CPU time
 * since arming leaves after the user periods taken and the system
 * periods charged: what the tick put too much into system time is
 * dropped, rather than counted on top of the same time sampled as user
 * (or carried, and charged later wherever the signal lands).
 */
#define SYSTEM_CARRY 5

/* Periods the thread's CPU time leaves for system time, or UINT32_MAX. */
static uint32_t system_room(uint32_t tally)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return UINT32_MAX;
	uint64_t cpu = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	const struct system_time *st = &systems[tally];
	uint64_t cpu0 = atomic_load_explicit(&st->cpu0, memory_order_relaxed);
	if (cpu < cpu0)
		return 0;
	uint64_t room = (cpu - cpu0) / period_now();
	uint64_t used = atomic_load_explicit(&st->user, memory_order_relaxed)
			+ atomic_load_explicit(&tallies[tally], memory_order_relaxed);
	return room > used ? (room - used < UINT32_MAX ? (uint32_t)(room - used) : UINT32_MAX) : 0;
}

static __attribute__((noinline)) int take_with_stack(unsigned depth, void *context, unsigned gen,
						     pid_t tid, uint32_t weight, uint32_t system,
						     _Atomic uint64_t *tally, int timer);

/*
 * A system-time timer at its busy interval while the thread uses system
 * time, at its quiet one once QUIET_AFTER signals in a row found none.
 * In a row: the kernel's split into user and system time moves in steps,
 * and one interval without a step says little.  In the thread's own
 * handler.
 */
#define QUIET_AFTER 4

static void pace(uint32_t tally, int timer, int busy)
{
	struct system_time *st = &systems[tally];
	unsigned calm = busy ? 0 : atomic_load_explicit(&st->calm, memory_order_relaxed) + 1;
	atomic_store_explicit(&st->calm, calm, memory_order_relaxed);
	if (calm > 0 && calm < QUIET_AFTER)
		return;
	long want = atomic_load_explicit(busy ? &st->busy_ns : &st->quiet_ns,
					 memory_order_relaxed);
	if (want == atomic_load_explicit(&st->interval_ns, memory_order_relaxed))
		return;
	struct itimerspec its = { .it_interval = { 0, want }, .it_value = { 0, want } };
	if (syscall(SYS_timer_settime, timer, 0, &its, NULL) == 0)
		atomic_store_explicit(&st->interval_ns, want, memory_order_relaxed);
}

static void on_system_time(unsigned generation, void *context, uintptr_t pc, uint32_t tally,
			   int timer, uintptr_t left)
{
	/* In seccomp's strict mode a system call kills the thread: the
	   drain's gettid, getrusage below.  Its ring waits for a flush. */
	if (tally >= MAX_TALLIES || !sigown_syscalls_ok())
		return;
	/* The thread's samples held by its backend first: the user periods
	   they add bound the system time charged below. */
	void (*drain)(unsigned, long) = atomic_load(&drain_hook);
	long cookie = atomic_load_explicit(&systems[tally].cookie, memory_order_relaxed);
	if (drain && cookie >= 0 && left >= HANDLER_DEEP)
		drain(generation, cookie);
	if (!pc || !atomic_load_explicit(&systems[tally].charge, memory_order_relaxed))
		return;
	int faulted, grew;
	uint32_t pending = system_pending(tally, &faulted, &grew);
	pace(tally, timer, grew || faulted);
	if (pending == 0)
		return;
	uint32_t room = system_room(tally);
	if (pending > room) {	/* more than the CPU time left: dropped */
		system_settle(tally, pending - room);
		pending = room;
	}
	if (pending == 0 || (!after_system_call(pc) && !faulted
			     && pending * period_now() < SYSTEM_CARRY * (uint64_t)SYSTEM_INTERVAL_NS))
		return;
	system_settle(tally, pending);
	/* With its stack, as the user periods have theirs: the kernel time
	   is charged to the place the thread entered the kernel from. */
	unsigned depth = sampler_stack_depth();
	if (!depth || take_with_stack(depth, context, generation, systems[tally].tid, pending,
				      pending, &tallies[tally], timer) != 0)
		sampler_take_split(generation, systems[tally].tid, pc, pending, pending,
				   &tallies[tally], stop_timer, (void *)(intptr_t)timer);
}

_Static_assert((int)UNWIND_COMPLETE == PROFILE_STOP_COMPLETE
	       && (int)UNWIND_NO_OBJECT == PROFILE_STOP_NO_OBJECT
	       && (int)UNWIND_NO_CFI == PROFILE_STOP_NO_CFI
	       && (int)UNWIND_BAD_READ == PROFILE_STOP_BAD_READ
	       && (int)UNWIND_DEPTH == PROFILE_STOP_DEPTH
	       && (int)UNWIND_CFA_NOT_INCREASING == PROFILE_STOP_NOT_INCREASING,
	       "unwind.h's stop reasons are profil(5)'s");

/* Reads of a walk go at most this far above the interrupted sp: a
   thread's stack, with room for the largest frames (the reads are
   fault-tolerant anyway; the bound keeps a garbage frame address from
   wandering through the heap). */
#define STACK_SPAN (64u << 20)
/*
 * The sample with its stack: how deep a walk this stack has room for,
 * then the walk and the sample.  Returns 0 if it took the sample, -1 if
 * the caller should take it without a stack.  Not inlined: its buffer
 * is on the stack only when stacks are on.
 */
static __attribute__((noinline)) int take_with_stack(unsigned depth, void *context, unsigned gen,
						     pid_t tid, uint32_t weight, uint32_t system,
						     _Atomic uint64_t *tally, int timer)
{
	uintptr_t room = stack_left(context, (uintptr_t)__builtin_frame_address(0));
	if (room != UINTPTR_MAX) {
		/* What is left below us, less what the rest of the path needs. */
		uintptr_t spare = HANDLER_FLAT + kernel_frame;
		unsigned fit = room > spare + 8 * sizeof(uintptr_t)
			       ? (unsigned)((room - spare) / sizeof(uintptr_t)) : 0;
		if (fit < 8) {
			uintptr_t pc = *context_pc(context);
			sampler_take_stack(gen, tid, &pc, 1, PROFILE_STOP_NO_ROOM, weight, system,
					   tally, stop_timer, (void *)(intptr_t)timer);
			return 0;
		}
		if (fit < depth)
			depth = fit;
	}
	if (depth > UNWIND_MAX_DEPTH)
		depth = UNWIND_MAX_DEPTH;
	struct unwind_regs regs;
	if (unwind_regs_from_context(context, &regs) != 0)
		return -1;
	uintptr_t pcs[depth];
	struct unwind_mem mem = {
		.lo = regs.sp,
		.hi = regs.sp < UINTPTR_MAX - STACK_SPAN ? regs.sp + STACK_SPAN : UINTPTR_MAX,
	};
	enum unwind_stop why;
	int n = unwind_walk(&regs, &mem, pcs, (int)depth, &why);
	if (n < 1)
		return -1;
	sampler_take_stack(gen, tid, pcs, (unsigned)n, (unsigned)why, weight, system, tally,
			   stop_timer, (void *)(intptr_t)timer);
	return 0;
}

static void on_sample(int sig, siginfo_t *info, void *context)
{
	uint64_t value = (uintptr_t)info->si_value.sival_ptr;
	if (info->si_code != SI_TIMER || (unsigned)(value >> 32) != atomic_load(&session)) {
		/* Not from one of our timers: the program's, as if we were
		   not here (sigown.h); but a timer's signal the program
		   would die of is rather one of an earlier session of ours. */
		struct sigaction prog;
		sigown_program_get(sig, &prog);
		if (info->si_code != SI_TIMER || (prog.sa_flags & SA_SIGINFO)
		    || (prog.sa_handler != SIG_DFL && prog.sa_handler != SIG_IGN))
			sigown_chain(sig, info, context);
		return;
	}
	/* Nothing while the program handles a fault of its own: a crash
	   report may be testing memory in place (fault.h), the thread's TLS
	   too, errno with it: not read before this. */
	if (fault_program_handling(context))
		return;
	uint32_t weight = 1 + (info->si_overrun > 0 ? (uint32_t)info->si_overrun : 0);
	uint32_t tally = (uint32_t)value;
	/* Too little stack left to go on without writing past its end: the
	   periods are counted lost when the thread is disarmed; a
	   system-time signal's charge and drain wait for a later one. */
	uintptr_t left = stack_left(context, (uintptr_t)__builtin_frame_address(0));
	if (left < HANDLER_FLAT) {
		if (tally < MAX_TALLIES)
			atomic_fetch_add_explicit(&systems[tally].short_of_stack, weight,
						  memory_order_relaxed);
		return;
	}
	int saved_errno = errno;
	uintptr_t *pc = context_pc(context);
	if (tally != NO_TALLY && (tally & SYSTEM_ONLY)) {
		on_system_time((unsigned)(value >> 32), context, pc ? *pc : 0, tally & ~SYSTEM_ONLY,
			       info->si_timerid, left);
		if (sigown_syscalls_ok() && left >= HANDLER_DEEP)	/* it lists /proc/self/task */
			sampler_tick();
		errno = saved_errno;
		return;
	}
	/* Of the weight periods sampled, those the kernel's time calls for. */
	uint32_t system = 0;
	if (tally < MAX_TALLIES && sigown_syscalls_ok()) {
		int faulted, grew;
		uint32_t pending = system_pending(tally, &faulted, &grew);
		system = pending < weight ? pending : weight;
		system_settle(tally, system);
	}
	pid_t tid = tally < MAX_TALLIES ? systems[tally].tid
		    : sigown_syscalls_ok() ? (pid_t)syscall(SYS_gettid) : 0;
	unsigned depth = sampler_stack_depth();
	if (!depth || !pc
	    || take_with_stack(depth, context, (unsigned)(value >> 32), tid, weight, system,
			       tally < MAX_TALLIES ? &tallies[tally] : NULL, info->si_timerid) != 0)
		sampler_take_split((unsigned)(value >> 32), tid, pc ? *pc : 0, weight, system,
				   tally < MAX_TALLIES ? &tallies[tally] : NULL,
				   stop_timer, (void *)(intptr_t)info->si_timerid);
	if (sigown_syscalls_ok() && left >= HANDLER_DEEP) {
		void (*promote)(unsigned, long) = atomic_load(&promote_hook);
		long cookie = tally < MAX_TALLIES ? atomic_load(&systems[tally].cookie) : -1;
		if (promote && cookie >= 0)
			promote((unsigned)(value >> 32), cookie);
		sampler_tick();	/* it lists /proc/self/task */
	}
	errno = saved_errno;
}

static int is_ours(int sig)
{
	struct sigaction sa;
	return sigown_owned(sig) && sigown_real_sigaction(sig, NULL, &sa) == 0
	       && (sa.sa_flags & SA_SIGINFO) && sa.sa_sigaction == on_sample;
}

static int is_free(int sig)
{
	struct sigaction sa;
	return !sigown_owned(sig) && sigown_real_sigaction(sig, NULL, &sa) == 0
	       && !(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == SIG_DFL;
}

/* The highest real-time signal no one has a handler for, away from the
 * low ones that threading libraries and programs take first. */
static int pick_signal(void)
{
	for (int sig = SIGRTMAX - 4; sig >= SIGRTMIN + 4; sig--)
		if (is_ours(sig))
			return sig;
	for (int sig = SIGRTMAX - 4; sig >= SIGRTMIN + 4; sig--)
		if (is_free(sig))
			return sig;
	return 0;
}

static void set_period(unsigned hz)
{
	long ns = 1000000000L / (long)hz;
	atomic_store_explicit(&period_ns, (uint64_t)ns, memory_order_relaxed);
	period.it_interval.tv_sec = ns / 1000000000L;
	period.it_interval.tv_nsec = ns % 1000000000L;
	period.it_value = period.it_interval;
}

static int timer_open(unsigned hz, unsigned generation)
{
	int sig = timer_signal ? timer_signal : pick_signal();
	if (!sig)
		return -EAGAIN;
	unsigned long frame = getauxval(AT_MINSIGSTKSZ);
	kernel_frame = frame > KERNEL_FRAME_DEFAULT ? frame : KERNEL_FRAME_DEFAULT;
	if (!tallies) {
		void *p = statemem_map(MAX_TALLIES * sizeof *tallies, 1);
		if (p == MAP_FAILED)
			return -ENOMEM;
		tallies = p;
	}
	if (!systems) {
		void *p = statemem_map(MAX_TALLIES * sizeof *systems, 1);
		if (p == MAP_FAILED)
			return -ENOMEM;
		systems = p;
	}
	memset((void *)tallies, 0, atomic_load(&next_tally) * sizeof *tallies);
	memset((void *)systems, 0, atomic_load(&next_tally) * sizeof *systems);
	atomic_store(&next_tally, 0);
	/* SA_RESTART: a sample must not make a read() fail with EINTR.
	   Block every other signal meanwhile but the synchronous ones, so
	   that no handler of the program runs nested inside ours; sigown
	   adds glibc's cancellation signal, which sigfillset leaves out. */
	sigset_t mask;
	sigfillset(&mask);
	sigdelset(&mask, SIGSEGV);
	sigdelset(&mask, SIGBUS);
	sigdelset(&mask, SIGILL);
	sigdelset(&mask, SIGFPE);
	sigdelset(&mask, SIGTRAP);
	atomic_store(&session, generation);
	if (sigown_take(sig, on_sample, SA_RESTART | SA_ONSTACK, &mask) != 0)
		return -errno;
	sigown_unblockable(sig, 1);
	timer_signal = sig;
	set_period(hz);
	return 0;
}

/* The CPU clock of thread tid, as glibc's pthread_getcpuclockid makes it. */
static clockid_t thread_clock(pid_t tid)
{
	return (clockid_t)((~(unsigned)tid << 3) | 6u);
}

static int thread_cpu_ns(pid_t tid, uint64_t *ns)
{
	struct timespec ts;
	if (clock_gettime(thread_clock(tid), &ts) != 0)
		return -1;
	*ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	return 0;
}

/*
 * The first expiry comes after a random part of a period: a thread that
 * always started a full period from its first sample would never be
 * sampled in its last partial period, and short threads would be counted
 * short.  With a uniform phase each thread's expected count is exactly
 * its CPU time over the period.
 */
static struct itimerspec first_period(pid_t tid, struct itimerspec interval)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	uint64_t x = (uint64_t)now.tv_nsec ^ ((uint64_t)tid << 32) ^ (uint64_t)now.tv_sec;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdu;
	x ^= x >> 33;
	uint64_t ns = (uint64_t)interval.it_interval.tv_sec * 1000000000u
		      + (uint64_t)interval.it_interval.tv_nsec;
	uint64_t first = 1 + x % ns;
	struct itimerspec its = interval;
	its.it_value.tv_sec = (time_t)(first / 1000000000u);
	its.it_value.tv_nsec = (long)(first % 1000000000u);
	return its;
}

/* A timer on tid's CPU clock whose signals carry tally. */
static int create_timer(pid_t tid, uint32_t tally, int *id)
{
	struct sigevent sev;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = timer_signal;
	sev.sigev_value.sival_ptr = pack_value(atomic_load(&session), tally);
	sev._sigev_un._tid = tid;
	return syscall(SYS_timer_create, thread_clock(tid), &sev, id) != 0 ? -errno : 0;
}

/* Set the timer going; if it cannot be, it goes. */
static int start_timer(int id, const struct itimerspec *first)
{
	if (syscall(SYS_timer_settime, id, 0, first, NULL) == 0)
		return 0;
	int err = errno;
	syscall(SYS_timer_delete, id);
	return -err;
}

/*
 * The program may have put its own handler on our signal with a raw
 * system call (Go's runtime takes every signal): ours goes back, the
 * program's receives what is not ours.  The samples that went to it
 * meanwhile are owed at disarm, and so counted lost.
 */
static void said_replaced(int sig);

static void check_handler(void)
{
	if (!sigown_check(timer_signal))
		said_replaced(timer_signal);
}

int timer_arm_promoting(struct thread_slot *slot, pid_t tid, long cookie)
{
	check_handler();
	uint32_t tally = take_tally();
	if (tally < MAX_TALLIES) {
		/* before any signal carries tally */
		systems[tally].tid = tid;
		atomic_store(&systems[tally].cookie, cookie);
	}
	int id, r = create_timer(tid, tally, &id);
	if (r != 0)
		return r;
	struct itimerspec first = first_period(tid, period);
	uint64_t now = 0;
	if (thread_cpu_ns(tid, &now) != 0)
		tally = NO_TALLY;
	if ((r = start_timer(id, &first)) != 0)
		return r;
	slot->tid = tid;
	slot->handle = id;
	slot->tally = tally;
	/* The k-th sample is due when the thread's CPU time passes
	   base + k periods: the first after the random phase. */
	slot->base_ns = (int64_t)now + (int64_t)first.it_value.tv_sec * 1000000000
			+ first.it_value.tv_nsec - (int64_t)period_now();
	return 0;
}

static int timer_arm(struct thread_slot *slot, pid_t tid)
{
	return timer_arm_promoting(slot, tid, -1);
}

int timer_arm_system(struct thread_slot *slot, pid_t tid, int charge, long interval_ns,
		     long quiet_ns, long cookie)
{
	check_handler();
	if (interval_ns <= 0 || interval_ns > SYSTEM_INTERVAL_NS)
		interval_ns = SYSTEM_INTERVAL_NS;
	if (quiet_ns <= 0 || quiet_ns > QUIET_INTERVAL_NS)
		quiet_ns = QUIET_INTERVAL_NS;
	if (quiet_ns < interval_ns)
		quiet_ns = interval_ns;
	/* A timer that never charges only drains. */
	if (!charge)
		interval_ns = quiet_ns;
	uint32_t tally = take_tally();
	if (tally == NO_TALLY)
		return -ENOSPC;
	systems[tally].tid = tid;
	atomic_store(&systems[tally].cookie, cookie);
	atomic_store(&systems[tally].charge, charge);
	atomic_store(&systems[tally].busy_ns, interval_ns);
	atomic_store(&systems[tally].quiet_ns, quiet_ns);
	atomic_store(&systems[tally].interval_ns, interval_ns);
	atomic_store(&systems[tally].system_seen, 0);
	atomic_store(&systems[tally].calm, 0);
	int id, r = create_timer(tid, tally | SYSTEM_ONLY, &id);
	if (r != 0)
		return r;
	struct itimerspec interval = {
		.it_interval = { 0, interval_ns },
		.it_value = { 0, interval_ns },
	};
	struct itimerspec first = first_period(tid, interval);
	uint64_t cpu0 = 0;
	thread_cpu_ns(tid, &cpu0);
	atomic_store_explicit(&systems[tally].charged, 0, memory_order_relaxed);
	atomic_store_explicit(&systems[tally].cpu0, cpu0, memory_order_relaxed);
	atomic_store(&systems[tally].user, 0);
	if ((r = start_timer(id, &first)) != 0)
		return r;
	slot->tid = tid;
	slot->handle = id;
	slot->tally = tally | SYSTEM_ONLY;	/* owes nothing when disarmed */
	slot->base_ns = 0;
	slot->fallback = 0;
	return 0;
}

void timer_system_user(const struct thread_slot *slot, uint64_t periods)
{
	uint32_t tally = slot->tally & ~SYSTEM_ONLY;
	if (tally < MAX_TALLIES && periods)
		atomic_fetch_add_explicit(&systems[tally].user, periods, memory_order_relaxed);
}

uint64_t timer_system_charged(const struct thread_slot *slot)
{
	uint32_t tally = slot->tally & ~SYSTEM_ONLY;
	return tally < MAX_TALLIES ? atomic_load(&tallies[tally]) : 0;
}

/* A CPU timer whose thread has exited reads as all zeros, even its
 * interval; a thread with the same tid later is a different thread. */
static int timer_alive(struct thread_slot *slot)
{
	struct itimerspec now;
	if (syscall(SYS_timer_gettime, slot->handle, &now) != 0)
		return 0;
	return now.it_interval.tv_sec != 0 || now.it_interval.tv_nsec != 0;
}

static int timer_set_hz(struct thread_slot *slot, unsigned hz)
{
	set_period(hz);	/* a system-time timer charges in the new periods */
	if (!slot)
		return 0;
	/* Its tally counted periods of the old length: no reckoning of
	   what it is owed at the end. */
	slot->tally = NO_TALLY;
	return syscall(SYS_timer_settime, slot->handle, 0, &period, NULL) ? -errno : 0;
}

/* What a thread owes when it goes is its tail: a late signal is weighted
   by its overrun, not lost, so only periods no signal delivered yet. */
static uint64_t timer_disarm(struct thread_slot *slot, uint64_t *why)
{
	uint64_t now, owed = 0, short_of_stack = 0;
	if (!(slot->tally & SYSTEM_ONLY) && thread_cpu_ns(slot->tid, &now) == 0
	    && (int64_t)now > slot->base_ns) {
		uint64_t due = (uint64_t)((int64_t)now - slot->base_ns) / period_now();
		uint64_t got = atomic_load(&tallies[slot->tally]);
		owed = due > got ? due - got : 0;
		short_of_stack = atomic_load(&systems[slot->tally].short_of_stack);
		if (short_of_stack > owed)
			short_of_stack = owed;
	}
	syscall(SYS_timer_delete, slot->handle);
	slot->handle = -1;
	if (why) {
		why[PROFILE_LOST_STACK] += short_of_stack;
		why[PROFILE_LOST_TAIL] += owed - short_of_stack;
	}
	return owed;
}

static void timer_forget(struct thread_slot *slot)
{
	/* Timers are not inherited across fork: nothing to release. */
	slot->handle = -1;
}

/* Once per process: samples stopped when the program took our signal,
   and were counted lost from then to the next thread armed. */
static void said_replaced(int sig)
{
	static atomic_int said;
	if (atomic_exchange(&said, 1))
		return;
	char line[160];
	int n = snprintf(line, sizeof line, "libprofil: the program replaced the handler of "
			 "signal %d, which libprofil samples with: samples stopped until it "
			 "was put back, and were counted lost\n", sig);
	if (n > 0 && write(STDERR_FILENO, line, (size_t)n) < 0) {
		/* nowhere to say it */
	}
}

static void timer_close(void)
{
	if (!timer_signal)
		return;
	if (!sigown_check(timer_signal))
		said_replaced(timer_signal);
	/* Ignoring a signal discards every pending instance of it; then the
	   program's action (the default, unless it asked for another while
	   we had the signal) leaves no trace for an exec'd image. */
	sigown_unblockable(timer_signal, 0);
	sigown_release(timer_signal, 1);
	timer_signal = 0;
}

const struct backend backend_timer = {
	.name = "timer",
	.id = PROFIL_BACKEND_TIMER,
	.open = timer_open,
	.arm = timer_arm,
	.alive = timer_alive,
	.set_hz = timer_set_hz,
	.disarm = timer_disarm,
	.forget = timer_forget,
	.close = timer_close,
};
