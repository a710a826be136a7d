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
 * 1 while the program's own SIGSEGV or SIGBUS handler runs (for at most
 * 2 s, in case it leaves by siglongjmp): samples then take nothing.
 * Async-signal-safe and lock-free.
 */
int fault_program_handling(void);

#endif
