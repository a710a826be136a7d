/*
 * fault.c - SIGSEGV/SIGBUS handling for counter increments.
 *
 * A fault inside satadd16/satadd32 (and the other routines of the fault
 * table) means the program's buffer, or a profile file's page, stopped
 * being writable: the handler moves the pc to the routine's fixup, which
 * returns -1, and the sample is lost.  Both signals are owned
 * (sigown.h): a handler the program installs later is recorded, not put
 * in the kernel, so a fault of ours never reaches it.  Every other
 * instance is the program's own and goes where it would have gone
 * without libprofil (sigown_chain): to the program's handler, or, under
 * the default action, a fault happens again and kills the process with
 * the same signal and core dump; a signal that was sent (kill -SEGV,
 * si_code <= 0) has no faulting instruction and is sent again.
 *
 * While the program's own handler runs in a thread, fault_program_handling()
 * says so there: our sample handler then takes nothing in that thread (a
 * crash handler may test memory in place, see statemem.h), and reads
 * nothing of the thread's own first: that state is kept outside the
 * thread, by tid.
 *
 * The handler is async-signal-safe and lock-free.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "arch/context.h"
#include "sinks/fault.h"
#include "sinks/satadd.h"
#include "sinks/sigown.h"

static atomic_int installed;

/*
 * The threads now in the program's fault handler: each one's tid, the
 * frame of ours under the handler, and until when (CLOCK_MONOTONIC ns)
 * it may be believed.  Not in thread-local storage: a crash report that
 * tests memory in place tests the thread's own TLS block too (redis's
 * does, pattern by pattern), and a sample that read its state there read
 * the pattern.  Here it is in the library's statics, file contents
 * the tests leave alone (libprofil.ld), and a sample reads nothing of the
 * thread's own until it knows the thread is not in such a handler.
 */
#define HANDLING_MAX 64
static struct handling {
	_Atomic pid_t tid;	/* 0: free; -1: being filled */
	_Atomic uintptr_t frame;	/* atomic: a sample may read a slot */
	_Atomic uint64_t until;		/* as it is dropped and taken again */
} handling[HANDLING_MAX];
static atomic_int handling_now;	/* slots taken */

/* A sample this far below that frame is still in the handler; farther,
   on another stack. */
#define HANDLER_STACK ((uintptr_t)8 << 20)

#define PROGRAM_HANDLER_NS 10000000000u

static uint64_t now_ns(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static pid_t this_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* A free slot, taken for tid; NULL when all are taken (the handler
   then runs as it would have, only not shielded from samples). */
static struct handling *handling_take(pid_t tid, uintptr_t frame)
{
	for (int i = 0; i < HANDLING_MAX; i++) {
		pid_t expected = 0;
		if (atomic_load(&handling[i].tid) == 0
		    && atomic_compare_exchange_strong(&handling[i].tid, &expected, -1)) {
			atomic_store_explicit(&handling[i].frame, frame, memory_order_relaxed);
			atomic_store_explicit(&handling[i].until, now_ns() + PROGRAM_HANDLER_NS,
					      memory_order_relaxed);
			atomic_store(&handling[i].tid, tid);
			atomic_fetch_add(&handling_now, 1);
			return &handling[i];
		}
	}
	return NULL;
}

/* Once per slot, by whoever finds it left: its handler, or a sample. */
static void handling_drop(struct handling *h, pid_t tid)
{
	if (atomic_compare_exchange_strong(&h->tid, &tid, 0))
		atomic_fetch_sub(&handling_now, 1);
}

static void on_fault(int sig, siginfo_t *info, void *context)
{
	uintptr_t *pc = context_pc(context);
	/* Only a fault of an instruction of ours, not a signal sent. */
	uintptr_t fixup = pc && info && info->si_code > 0 ? satadd_fixup(*pc) : 0;
	if (fixup) {
		*pc = fixup;
		return;
	}
	/* The program's own fault, to its handler: a crash report may test
	   the process's memory in place (redis does), and must find nothing
	   of ours changing or reading it meanwhile. */
	if (!sigown_syscalls_ok()) {	/* seccomp's strict mode: no gettid */
		sigown_chain(sig, info, context);
		return;
	}
	pid_t tid = this_tid();
	struct handling *h = handling_take(tid, (uintptr_t)__builtin_frame_address(0));
	/* Nor a sampling signal delivered to this thread meanwhile: at a
	   delivery the kernel may read the thread's rseq area (Debian 12's
	   6.1 does at each), and kills the process if the test has a
	   pattern in it. */
	sigown_block_unblockable();
	sigown_chain(sig, info, context);
	if (h)
		handling_drop(h, tid);
}

int fault_program_handling(const void *context)
{
	if (atomic_load(&handling_now) == 0)
		return 0;
	pid_t tid = this_tid();
	uintptr_t sp = context_sp(context);
	uint64_t now = now_ns();
	int in_handler = 0;
	for (int i = 0; i < HANDLING_MAX; i++) {
		struct handling *h = &handling[i];
		pid_t owner = atomic_load(&h->tid);
		if (owner <= 0)
			continue;
		/* Read after the owner: if the slot changed hands since, the
		   values are the new owner's, and a drop below, which
		   compares the owner, does nothing. */
		uintptr_t frame = atomic_load_explicit(&h->frame, memory_order_relaxed);
		uint64_t until = atomic_load_explicit(&h->until, memory_order_relaxed);
		if (now >= until) {
			/* Left by a longjmp long ago, perhaps by a thread
			   that has ended since. */
			handling_drop(h, owner);
			continue;
		}
		if (owner != tid)
			continue;
		/* Below our frame on the same stack: still in the handler.
		   Above it, or on another stack, the handler was left by a
		   longjmp (it may run with its own signal unblocked,
		   SA_NODEFER, as redis's does, so the mask cannot tell). */
		if (sp && sp < frame && frame - sp < HANDLER_STACK)
			in_handler = 1;
		else
			handling_drop(h, owner);
	}
	return in_handler;
}

int fault_install(void)
{
	int expected = 0;
	if (!satadd_recovers() || !atomic_compare_exchange_strong(&installed, &expected, 1))
		return 0;
	int flags = SA_ONSTACK | SA_NODEFER | SA_RESTART;
	if (sigown_take(SIGSEGV, on_fault, flags, NULL) != 0
	    || sigown_take(SIGBUS, on_fault, flags, NULL) != 0) {
		atomic_store(&installed, 0);
		return -1;
	}
	return 0;
}
