/*
 * fault.c - SIGSEGV/SIGBUS handling for counter increments.
 *
 * A fault inside satadd16/satadd32 means the program's buffer stopped
 * being writable: the handler moves the pc to the routine's fixup, which
 * returns -1, and the sampler turns profiling off.  Every other fault is
 * the program's own and goes where it would have gone without libprofil:
 * to the handler installed before ours, or, for the default action, back
 * to the default so that the faulting instruction runs again and the
 * process dies of the same signal with the same core dump.
 *
 * The handler is async-signal-safe and lock-free.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include "arch/context.h"
#include "sinks/fault.h"
#include "sinks/satadd.h"

static struct sigaction previous_segv, previous_bus;
static atomic_int installed;

static void on_fault(int sig, siginfo_t *info, void *context)
{
	uintptr_t *pc = context_pc(context);
	uintptr_t fixup = pc ? satadd_fixup(*pc) : 0;
	if (fixup) {
		*pc = fixup;
		return;
	}
	const struct sigaction *prev = sig == SIGBUS ? &previous_bus : &previous_segv;
	if (prev->sa_flags & SA_SIGINFO) {
		prev->sa_sigaction(sig, info, context);
	} else if (prev->sa_handler != SIG_DFL && prev->sa_handler != SIG_IGN) {
		prev->sa_handler(sig);
	} else {
		/* Let the fault happen again with the default action. */
		struct sigaction dfl;
		memset(&dfl, 0, sizeof dfl);
		dfl.sa_handler = SIG_DFL;
		sigaction(sig, &dfl, NULL);
	}
}

int fault_install(void)
{
	int expected = 0;
	if (!satadd_recovers() || !atomic_compare_exchange_strong(&installed, &expected, 1))
		return 0;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, &previous_segv) != 0
	    || sigaction(SIGBUS, &sa, &previous_bus) != 0) {
		atomic_store(&installed, 0);
		return -1;
	}
	return 0;
}
