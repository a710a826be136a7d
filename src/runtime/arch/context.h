/*
 * context.h - the interrupted pc and sp in a signal handler's ucontext, from
 * the file of the processor the library is built for.
 * Async-signal-safe.
 */
#ifndef PROFIL_CONTEXT_H
#define PROFIL_CONTEXT_H

#if defined(__x86_64__)
#include "arch/context_x86_64.h"
#elif defined(__aarch64__)
#include "arch/context_aarch64.h"
#else
#include <stdint.h>

/* An unknown machine: no pc, so fault.c never resumes a fault. */
static inline uintptr_t *context_pc(void *context)
{
	(void)context;
	return 0;
}

static inline uintptr_t context_sp(const void *context)
{
	(void)context;
	return 0;
}
#endif

#endif
