/*
 * fault.h - recover from a fault in a counter increment (see satadd.h).
 */
#ifndef PROFIL_FAULT_H
#define PROFIL_FAULT_H

/*
 * Install the SIGSEGV and SIGBUS handlers that resume a faulting
 * satadd16/satadd32 at its fixup, chaining every other fault to the
 * handler that was there before.  Idempotent.  Returns 0 or -1.
 */
int fault_install(void);

/*
 * 1 if the sample that interrupted context (a signal handler's ucontext)
 * did so in this thread while the program's own SIGSEGV or SIGBUS
 * handler runs: it should take nothing.  (The sampling signal is blocked
 * in that thread while the handler runs; one comes only if the handler
 * unblocks it.)  Reads no thread-local storage: call it before anything
 * that does, errno included.  A handler left by a longjmp is seen as
 * left at the next sample above its frame (or on another stack), and
 * after 10 s in any case.
 * Async-signal-safe and lock-free.
 */
int fault_program_handling(const void *context);

#endif
