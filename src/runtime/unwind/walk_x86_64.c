/*
 * walk_x86_64.c - the stack walk on x86-64: one table lookup and at most
 * three 8-byte reads per frame (rbp, the return address at CFA-8, or a
 * signal frame's three registers), every read bounded and fault-tolerant.
 *
 * Async-signal-safe and lock-free: no allocation, no lock, no loader
 * call; the tables are immutable and never freed while a walk can run
 * (table.c: unwind_walk, in unwind.c, announces the walk with
 * unwind_read_enter; unwind_walk_in walks a set its caller keeps).
 */
#if defined(__x86_64__)
#define _GNU_SOURCE
#include <stddef.h>
#include <ucontext.h>
#include "unwind/table.h"
#include "unwind/walk.h"

/* The kernel's rt_sigframe: __restore_rt runs with sp at the ucontext. */
static enum unwind_stop signal_frame(const struct unwind_mem *m, uintptr_t *ip, uintptr_t *sp,
				     uintptr_t *bp)
{
	uintptr_t uc = *sp, nip, nsp, nbp;
	const size_t gregs = offsetof(ucontext_t, uc_mcontext.gregs);
	if (!unwind_load(m, uc + gregs + REG_RIP * 8, &nip)
	    || !unwind_load(m, uc + gregs + REG_RSP * 8, &nsp)
	    || !unwind_load(m, uc + gregs + REG_RBP * 8, &nbp))
		return UNWIND_BAD_READ;
	*ip = nip;
	*sp = nsp;
	*bp = nbp;
	return UNWIND_STOP_COUNT;	/* go on */
}

int unwind_walk_in(const struct unwind_set *set, const struct unwind_regs *regs,
		   const struct unwind_mem *mem, uintptr_t *pcs, int max, enum unwind_stop *stop)
{
	uintptr_t ip = regs->ip, sp = regs->sp, bp = regs->bp;
	struct unwind_mem m = *mem;
	enum unwind_stop why;
	/* The sampled pc and an interrupted pc are where execution is; a
	 * return address is one past the call, which may be the last
	 * instruction of its function, so it is looked up at pc-1. */
	bool exact = true;
	int n = 0;
	if (max > UNWIND_MAX_DEPTH)
		max = UNWIND_MAX_DEPTH;
	for (;;) {
		if (n >= max) {
			why = UNWIND_DEPTH;
			break;
		}
		pcs[n++] = ip;
		uintptr_t at = exact ? ip : ip - 1;
		const struct unwind_object *obj = unwind_set_find(set, at);
		if (!obj) {
			why = UNWIND_NO_OBJECT;
			break;
		}
		const struct unwind_rule *r = unwind_object_rule(obj, at);
		uintptr_t cfa;
		switch (r->kind) {
		case UNWIND_RULE_STOP:
			why = UNWIND_COMPLETE;
			goto out;
		case UNWIND_RULE_SIGNAL:
			why = signal_frame(&m, &ip, &sp, &bp);
			if (why != UNWIND_STOP_COUNT)
				goto out;
			if (!m.copy) {
				/* A handler on an alternate stack: the interrupted
				 * frames are on another stack, bounded the same way. */
				uintptr_t span = mem->hi - mem->lo;
				m.lo = sp;
				m.hi = sp < UINTPTR_MAX - span ? sp + span : UINTPTR_MAX;
			}
			exact = true;
			continue;
		case UNWIND_RULE_SP:
			cfa = sp + (intptr_t)r->cfa_off;
			break;
		case UNWIND_RULE_FP:
			cfa = bp + (intptr_t)r->cfa_off;
			break;
		case UNWIND_RULE_PLT:
			cfa = sp + (intptr_t)r->cfa_off + ((ip & 15) >= r->plt_threshold ? 8 : 0);
			break;
		default:
			why = UNWIND_NO_CFI;
			goto out;
		}
		if (cfa <= sp) {
			why = UNWIND_CFA_NOT_INCREASING;
			break;
		}
		if (r->fp_off) {
			/* An epilogue pops rbp without a .cfi_restore: a slot below
			 * sp is gone, and rbp already holds the caller's value. */
			uintptr_t slot = cfa + (intptr_t)r->fp_off;
			if (slot >= sp && !unwind_load(&m, slot, &bp)) {
				why = UNWIND_BAD_READ;
				break;
			}
		}
		uintptr_t ra;
		if (!unwind_load(&m, cfa - 8, &ra)) {
			why = UNWIND_BAD_READ;
			break;
		}
		sp = cfa;
		ip = ra;
		exact = false;
	}
out:
	unwind_count_stop(why);
	*stop = why;
	return n;
}

int unwind_regs_from_context(const void *context, struct unwind_regs *regs)
{
	const ucontext_t *uc = context;
	regs->ip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	regs->sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
	regs->bp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
	regs->lr = 0;
	return 0;
}

#endif
