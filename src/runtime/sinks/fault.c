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
 * crash handler may test memory in place, see statemem.h).
 *
 * The handler is async-signal-safe and lock-free.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include "arch/context.h"
#include "sinks/fault.h"
#include "sinks/satadd.h"
#include "sinks/sigown.h"

static atomic_int installed;

/* In this thread, the frame of ours under the program's fault handler
   (0: none), and until when (CLOCK_MONOTONIC ns) it may be believed. */
static __thread uintptr_t program_frame __attribute__((tls_model("initial-exec")));
static __thread uint64_t program_until __attribute__((tls_model("initial-exec")));

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
	uintptr_t outer_frame = program_frame;
	uint64_t outer_until = program_until;
	program_frame = (uintptr_t)__builtin_frame_address(0);
	program_until = now_ns() + PROGRAM_HANDLER_NS;
	sigown_chain(sig, info, context);
	program_frame = outer_frame;
	program_until = outer_until;
}

int fault_program_handling(const void *context)
{
	uintptr_t frame = program_frame;
	if (!frame)
		return 0;
	/* Below our frame on the same stack: still in the handler.  Above
	   it, or on another stack, the handler was left by a longjmp (it
	   may run with its own signal unblocked, SA_NODEFER, as redis's
	   does, so the mask cannot tell). */
	uintptr_t sp = context_sp(context);
	if (sp && sp < frame && frame - sp < HANDLER_STACK && now_ns() < program_until)
		return 1;
	program_frame = 0;
	return 0;
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
