/*
 * context_aarch64.h - the interrupted pc in a signal handler's ucontext
 * on arm64 (included by context.h).  The kernel's struct sigcontext
 * keeps pc apart from the 31 general registers; under qemu-user it is
 * the emulated program's pc, which is what is profiled.
 * Async-signal-safe.
 */
#ifndef PROFIL_CONTEXT_AARCH64_H
#define PROFIL_CONTEXT_AARCH64_H

#include <stdint.h>
#include <ucontext.h>

/* Where the interrupted pc is stored: writing it resumes elsewhere. */
static inline uintptr_t *context_pc(void *context)
{
	ucontext_t *uc = context;
	return (uintptr_t *)&uc->uc_mcontext.pc;
}

/* The interrupted stack pointer. */
static inline uintptr_t context_sp(const void *context)
{
	const ucontext_t *uc = context;
	return (uintptr_t)uc->uc_mcontext.sp;
}

#endif
