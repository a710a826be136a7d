/*
 * context.h - the interrupted pc in a signal handler's ucontext.
 * Async-signal-safe.
 */
#ifndef PROFIL_CONTEXT_H
#define PROFIL_CONTEXT_H

#include <stdint.h>
#include <ucontext.h>

/* Where the interrupted pc is stored, or NULL on an unknown machine. */
static inline uintptr_t *context_pc(void *context)
{
	ucontext_t *uc = context;
#if defined(__x86_64__)
	return (uintptr_t *)&uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	return (uintptr_t *)&uc->uc_mcontext.pc;
#else
	(void)uc;
	return NULL;
#endif
}

#endif
