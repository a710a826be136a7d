/*
 * context_x86_64.h - the interrupted pc in a signal handler's ucontext
 * on x86-64 (included by context.h).
 * Async-signal-safe.
 */
#ifndef PROFIL_CONTEXT_X86_64_H
#define PROFIL_CONTEXT_X86_64_H

#include <stdint.h>
#include <ucontext.h>

/* Where the interrupted pc is stored: writing it resumes elsewhere. */
static inline uintptr_t *context_pc(void *context)
{
	ucontext_t *uc = context;
	return (uintptr_t *)&uc->uc_mcontext.gregs[REG_RIP];
}

/* The interrupted stack pointer. */
static inline uintptr_t context_sp(const void *context)
{
	const ucontext_t *uc = context;
	return (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
}

#endif
