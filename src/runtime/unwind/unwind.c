/*
 * unwind.c - the stack walk: one table lookup and at most three 8-byte
 * reads per frame, every read bounded and fault-tolerant.
 *
 * Async-signal-safe and lock-free: no allocation, no lock, no loader
 * call; the tables are immutable and never freed while a walk can run
 * (table.c: a walk is announced with unwind_read_enter).  The shared
 * counters are touched once per walk, not per frame: they bounce
 * between cores.
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <ucontext.h>
#include "sinks/satadd.h"
#include "unwind/table.h"
#include "unwind/unwind.h"

static _Atomic uint64_t stop_counts[UNWIND_STOP_COUNT];

/* Only the x86-64 walk below reads yet; arm64's register rules are to come. */
__attribute__((unused)) static bool load(const struct unwind_mem *m, uintptr_t addr, uintptr_t *out)
{
	if (addr < m->lo || addr >= m->hi || m->hi - addr < 8)
		return false;
	if (m->copy) {
		memcpy(out, m->copy + (addr - m->lo), 8);
		return true;
	}
	uint64_t v;
	if (satload64((const uint64_t *)addr, &v) < 0)
		return false;
	*out = (uintptr_t)v;
	return true;
}

#if defined(__x86_64__)

/* The kernel's rt_sigframe: __restore_rt runs with sp at the ucontext. */
static enum unwind_stop signal_frame(const struct unwind_mem *m, uintptr_t *ip, uintptr_t *sp,
				     uintptr_t *bp)
{
	uintptr_t uc = *sp, nip, nsp, nbp;
	const size_t gregs = offsetof(ucontext_t, uc_mcontext.gregs);
	if (!load(m, uc + gregs + REG_RIP * 8, &nip) || !load(m, uc + gregs + REG_RSP * 8, &nsp)
	    || !load(m, uc + gregs + REG_RBP * 8, &nbp))
		return UNWIND_BAD_READ;
	*ip = nip;
	*sp = nsp;
	*bp = nbp;
	return UNWIND_STOP_COUNT;	/* go on */
}

int unwind_walk(const struct unwind_regs *regs, const struct unwind_mem *mem, uintptr_t *pcs,
		int max, enum unwind_stop *stop)
{
	unsigned token = unwind_read_enter();
	const struct unwind_set *set = unwind_tables_get();
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
		case UNWIND_RULE_RSP:
			cfa = sp + (intptr_t)r->cfa_off;
			break;
		case UNWIND_RULE_RBP:
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
		if (r->rbp_off) {
			/* An epilogue pops rbp without a .cfi_restore: a slot below
			 * sp is gone, and rbp already holds the caller's value. */
			uintptr_t slot = cfa + (intptr_t)r->rbp_off;
			if (slot >= sp && !load(&m, slot, &bp)) {
				why = UNWIND_BAD_READ;
				break;
			}
		}
		uintptr_t ra;
		if (!load(&m, cfa - 8, &ra)) {
			why = UNWIND_BAD_READ;
			break;
		}
		sp = cfa;
		ip = ra;
		exact = false;
	}
out:
	unwind_read_leave(token);
	atomic_fetch_add_explicit(&stop_counts[why], 1, memory_order_relaxed);
	*stop = why;
	return n;
}

int unwind_regs_from_context(const void *context, struct unwind_regs *regs)
{
	const ucontext_t *uc = context;
	regs->ip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	regs->sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
	regs->bp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
	return 0;
}

#else

int unwind_walk(const struct unwind_regs *regs, const struct unwind_mem *mem, uintptr_t *pcs,
		int max, enum unwind_stop *stop)
{
	(void)mem;
	int n = 0;
	if (max > 0)
		pcs[n++] = regs->ip;
	*stop = UNWIND_NO_CFI;
	atomic_fetch_add_explicit(&stop_counts[UNWIND_NO_CFI], 1, memory_order_relaxed);
	return n;
}

int unwind_regs_from_context(const void *context, struct unwind_regs *regs)
{
	(void)context;
	(void)regs;
	return -1;
}

#endif

void unwind_stop_counts(uint64_t counts[UNWIND_STOP_COUNT])
{
	for (int i = 0; i < UNWIND_STOP_COUNT; i++)
		counts[i] = atomic_load_explicit(&stop_counts[i], memory_order_relaxed);
}
