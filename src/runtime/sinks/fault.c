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
 * The handler is async-signal-safe and lock-free.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdatomic.h>
#include "arch/context.h"
#include "sinks/fault.h"
#include "sinks/satadd.h"
#include "sinks/sigown.h"

static atomic_int installed;

static void on_fault(int sig, siginfo_t *info, void *context)
{
	uintptr_t *pc = context_pc(context);
	/* Only a fault of an instruction of ours, not a signal sent. */
	uintptr_t fixup = pc && info && info->si_code > 0 ? satadd_fixup(*pc) : 0;
	if (fixup) {
		*pc = fixup;
		return;
	}
	sigown_chain(sig, info, context);
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
