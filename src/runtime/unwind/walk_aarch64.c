/*
 * walk_aarch64.c - the stack walk on arm64: one table lookup and at most
 * two 8-byte reads per frame (x29, and x30 unless it is still in the
 * register), every read bounded and fault-tolerant.
 *
 * A bl leaves the return address in x30, not on the stack: a leaf, or
 * any function before its prologue, has its CFA at sp and its return
 * address in x30.  Only the sampled frame, or a frame a signal
 * interrupted, still has that x30; in a caller it was overwritten by the
 * caller's own bl, so a rule that says "still in x30" there stops the
 * walk (no CFI) rather than loop.
 *
 * Async-signal-safe and lock-free: no allocation, no lock, no loader
 * call; the tables are immutable and never freed while a walk can run
 * (table.c: unwind_walk, in unwind.c, announces the walk with
 * unwind_read_enter; unwind_walk_in walks a set its caller keeps).
 */
#if defined(__aarch64__)
#define _GNU_SOURCE
#include <signal.h>
#include <stddef.h>
#include <ucontext.h>
#include "unwind/table.h"
#include "unwind/walk.h"

/*
 * Pointer authentication (DW_CFA_AARCH64_negate_ra_state: gcc's and
 * clang's -mbranch-protection=pac-ret) signs a return address in its
 * unused top bits, both the x30 a leaf keeps and the copy a prologue
 * saves.  A Linux program has at most 48 bits of addresses (the kernel
 * maps nothing higher unless mmap is given a hint above 2^48, which
 * neither the loader nor malloc does), and the signature and any top
 * byte tag (TBI) are above them: keeping the low 48 bits removes them
 * and leaves an unsigned address as it was, so every return address is
 * stripped, whatever the frame's signing state.
 */
#define ADDRESS_BITS ((UINT64_C(1) << 48) - 1)

/* rt_sigreturn's two instructions, in the vDSO's __kernel_rt_sigreturn,
   glibc's and qemu-user's trampolines alike. */
enum { MOV_X8_SIGRETURN = 0xd2801168u, SVC_0 = 0xd4000001u };

/* satload64 is an ldar, which faults on an address that is not 8-aligned;
   a saved register always is. */
static bool load(const struct unwind_mem *m, uintptr_t addr, uintptr_t *out)
{
	return !(addr & 7) && unwind_load(m, addr, out);
}

/* The instruction at addr (4-aligned), through the fault-tolerant load. */
static bool insn(uintptr_t addr, uint32_t *out)
{
	uint64_t w;
	if (satload64((const uint64_t *)(addr & ~(uintptr_t)7), &w) < 0)
		return false;
	*out = (uint32_t)(w >> (addr & 4 ? 32 : 0));
	return true;
}

/*
 * Is ip a signal trampoline that has no CFI (qemu-user's own, in no
 * object; the vDSO's has an 'S' CIE), at either of its instructions?
 * Recognised by its code, as libgcc does.  Never with a stack copy:
 * code is not in it.
 */
static bool at_sigreturn(const struct unwind_mem *m, uintptr_t ip)
{
	uint32_t here, other;
	if (m->copy || (ip & 3) || ip < 4096 || !insn(ip, &here))
		return false;
	if (here == MOV_X8_SIGRETURN)
		return insn(ip + 4, &other) && other == SVC_0;
	return here == SVC_0 && insn(ip - 4, &other) && other == MOV_X8_SIGRETURN;
}

/*
 * Is ip in a PLT stub, which has no CFI on arm64?  Known by its code,
 * 16 bytes at a 16-byte boundary: an entry (adrp x16; ldr x17, [x16];
 * add x16, x16; br x17) leaves sp and x30 as its caller's; the first
 * four instructions of PLT0 (stp x16, x30, [sp, #-16]!; adrp; ldr; add)
 * have pushed 16 bytes once past the stp.  *pushed is those bytes.
 * Never with a stack copy: code is not in it.
 */
static bool in_plt(const struct unwind_mem *m, uintptr_t ip, uintptr_t *pushed)
{
	uintptr_t at = ip & ~(uintptr_t)15;
	uint64_t a, b;
	if (m->copy || (ip & 3) || ip < 4096 || satload64((const uint64_t *)at, &a) < 0
	    || satload64((const uint64_t *)(at + 8), &b) < 0)
		return false;
	uint32_t i0 = (uint32_t)a, i1 = (uint32_t)(a >> 32), i2 = (uint32_t)b, i3 = (uint32_t)(b >> 32);
	bool adrp = (i0 & 0x9f00001fu) == 0x90000010u;			/* adrp x16, ... */
	bool ldr = (i1 & 0xffc003ffu) == 0xf9400211u;			/* ldr x17, [x16, #...] */
	bool add = (i2 & 0xffc003ffu) == 0x91000210u;			/* add x16, x16, #... */
	if (adrp && ldr && add && i3 == 0xd61f0220u) {			/* br x17 */
		*pushed = 0;
		return true;
	}
	adrp = (i1 & 0x9f00001fu) == 0x90000010u;
	ldr = (i2 & 0xffc003ffu) == 0xf9400211u;
	add = (i3 & 0xffc003ffu) == 0x91000210u;
	if (i0 == 0xa9bf7bf0u && adrp && ldr && add) {			/* stp x16, x30, [sp, #-16]! */
		*pushed = ip == at ? 0 : 16;
		return true;
	}
	return false;
}

/*
 * The kernel's struct rt_sigframe (and qemu-user's copy of it) is at sp
 * when the trampoline runs: a siginfo, then the ucontext, whose
 * mcontext has the interrupted registers.
 */
static enum unwind_stop signal_frame(const struct unwind_mem *m, struct unwind_regs *r)
{
	uintptr_t uc = r->sp + sizeof(siginfo_t);
	struct unwind_regs n;
	if (!load(m, uc + offsetof(ucontext_t, uc_mcontext.pc), &n.ip)
	    || !load(m, uc + offsetof(ucontext_t, uc_mcontext.sp), &n.sp)
	    || !load(m, uc + offsetof(ucontext_t, uc_mcontext.regs[29]), &n.bp)
	    || !load(m, uc + offsetof(ucontext_t, uc_mcontext.regs[30]), &n.lr))
		return UNWIND_BAD_READ;
	*r = n;
	return UNWIND_STOP_COUNT;	/* go on */
}

int unwind_walk_in(const struct unwind_set *set, const struct unwind_regs *regs,
		   const struct unwind_mem *mem, uintptr_t *pcs, int max, enum unwind_stop *stop)
{
	struct unwind_regs r = *regs;
	struct unwind_mem m = *mem;
	enum unwind_stop why;
	/* The sampled pc and an interrupted pc are where execution is; a
	 * return address is one instruction past the bl, which may be the
	 * last of its function, so it is looked up at pc-1. */
	bool exact = true;
	bool live = true;	/* r.lr is this frame's own x30 */
	int n = 0;
	if (max > UNWIND_MAX_DEPTH)
		max = UNWIND_MAX_DEPTH;
	for (;;) {
		if (n >= max) {
			why = UNWIND_DEPTH;
			break;
		}
		pcs[n++] = r.ip;
		uintptr_t at = exact ? r.ip : r.ip - 1;
		const struct unwind_object *obj = unwind_set_find(set, at);
		const struct unwind_rule *rule = obj ? unwind_object_rule(obj, at) : NULL;
		unsigned kind = rule ? rule->kind : UNWIND_RULE_NOINFO;
		if (kind == UNWIND_RULE_NOINFO && at_sigreturn(&m, r.ip))
			kind = UNWIND_RULE_SIGNAL;
		uintptr_t cfa;
		switch (kind) {
		case UNWIND_RULE_STOP:
			why = UNWIND_COMPLETE;
			goto out;
		case UNWIND_RULE_SIGNAL:
			why = signal_frame(&m, &r);
			if (why != UNWIND_STOP_COUNT)
				goto out;
			r.ip &= ADDRESS_BITS;
			if (!m.copy) {
				/* A handler on an alternate stack: the interrupted
				 * frames are on another stack, bounded the same way. */
				uintptr_t span = mem->hi - mem->lo;
				m.lo = r.sp;
				m.hi = r.sp < UINTPTR_MAX - span ? r.sp + span : UINTPTR_MAX;
			}
			exact = true;
			live = true;
			continue;
		case UNWIND_RULE_SP:
			cfa = r.sp + (intptr_t)rule->cfa_off;
			break;
		case UNWIND_RULE_FP:
			cfa = r.bp + (intptr_t)rule->cfa_off;
			break;
		default: {
			/* No CFI: a PLT stub (the sampled frame, or one a
			 * signal interrupted: a stub calls nothing) is a leaf;
			 * code without tables and garbage end the walk. */
			uintptr_t pushed;
			if (live && in_plt(&m, r.ip, &pushed)) {
				r.sp += pushed;
				r.ip = r.lr & ADDRESS_BITS;
				exact = false;
				live = false;
				continue;
			}
			why = obj ? UNWIND_NO_CFI : UNWIND_NO_OBJECT;
			goto out;
		}
		}
		/* x29's slot, and x30's: from the slot of x29 if it was saved.
		 * A slot below sp is gone: the epilogue has reloaded the
		 * register already, and its CFI says so one instruction
		 * later (or, in _dl_runtime_resolve's last, never). */
		uintptr_t fp_slot = cfa + 8 * (intptr_t)rule->fp_off8;
		uintptr_t ra_slot = fp_slot + 8 * (intptr_t)rule->ra_off8;
		bool ra_in_x30 = rule->ra_off8 == 0 || ra_slot < r.sp;
		/* Only a frame with its return address in x30 can have
		 * nothing on the stack. */
		if (cfa < r.sp || (cfa == r.sp && !ra_in_x30)) {
			why = UNWIND_CFA_NOT_INCREASING;
			break;
		}
		if (rule->fp_off8) {
			/* An epilogue that has reloaded x29 before its CFI says
			 * so: a slot below sp is gone, and x29 already holds
			 * the caller's value. */
			if (fp_slot >= r.sp && !load(&m, fp_slot, &r.bp)) {
				why = UNWIND_BAD_READ;
				break;
			}
		}
		uintptr_t ra;
		if (ra_in_x30) {
			if (!live) {
				why = UNWIND_NO_CFI;
				break;
			}
			ra = r.lr;
		} else if (!load(&m, ra_slot, &ra)) {
			why = UNWIND_BAD_READ;
			break;
		}
		r.sp = cfa;
		r.ip = ra & ADDRESS_BITS;
		exact = false;
		live = false;
	}
out:
	unwind_count_stop(why);
	*stop = why;
	return n;
}

int unwind_regs_from_context(const void *context, struct unwind_regs *regs)
{
	const ucontext_t *uc = context;
	regs->ip = (uintptr_t)uc->uc_mcontext.pc;
	regs->sp = (uintptr_t)uc->uc_mcontext.sp;
	regs->bp = (uintptr_t)uc->uc_mcontext.regs[29];
	regs->lr = (uintptr_t)uc->uc_mcontext.regs[30];
	return 0;
}

#endif
