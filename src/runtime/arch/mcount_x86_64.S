/*
 * mcount_x86_64.S - the entry points gcc -pg calls on x86-64.
 *
 * gcc -pg calls mcount (through the GOT, or _mcount) right after the
 * function's prologue has set up %rbp: the callee's pc is our return
 * address, the call site the function's own return address at 8(%rbp).
 * With -mfentry it calls __fentry__ before the prologue: the call site
 * is then just above our return address.
 *
 * The common case, an arc this thread has counted before, is done here:
 * find the arc in the thread's table (gmon_arcs.c, layout in
 * gmon_layout.h) and add one to its count with a single unlocked
 * instruction, touching only %rax, %rdx, %rsi, %rdi (saved) and the
 * flags.  A new arc goes to gmon_arc_new() in C, with every register a
 * call may carry an argument in saved (%r10 is the static chain, %rax
 * the vector count of a variadic call, %xmm0-7 vector arguments) and the
 * stack aligned: gcc calls mcount with the stack as the prologue left
 * it.
 *
 * Async-signal-safe and lock-free, like gmon_arc_new().
 */
#include "gmon/gmon_layout.h"

	.text

	.globl	mcount
	.type	mcount, @function
	.globl	_mcount
	.type	_mcount, @function
	.globl	__fentry__
	.type	__fentry__, @function

#define PUSH(r)	pushq r; .cfi_adjust_cfa_offset 8
#define POP(r)	popq r; .cfi_adjust_cfa_offset -8

/* Saved on entry: what the fast path touches.  After them, our return
   address is at 32(%rsp). */
#define SAVE	PUSH(%rax); PUSH(%rdx); PUSH(%rsi); PUSH(%rdi)
#define RESTORE	POP(%rdi); POP(%rsi); POP(%rdx); POP(%rax)

/*
 * %rdi call site, %rsi callee.  Jumps to done once counted (or when
 * arcs are off); falls through to the slow path for a new arc.
 */
#define FAST(done)						\
	movl	gmon_arcs_counting(%rip), %eax;			\
	testl	%eax, %eax;					\
	jz	done;						\
	movq	gmon_arcs_mine@GOTTPOFF(%rip), %rax;		\
	movq	%fs:(%rax), %rax;				\
	testq	%rax, %rax;					\
	jz	9f;						\
	movq	%rdi, %rdx;					\
	shlq	$16, %rdx;					\
	xorq	%rsi, %rdx;					\
	imulq	$ARC_HASH_IMM, %rdx, %rdx;			\
	shrq	$32, %rdx;					\
	andq	TABLE_MASK(%rax), %rdx;				\
	movq	TABLE_BUCKETS(%rax,%rdx,8), %rax;		\
1:	testq	%rax, %rax;					\
	jz	9f;						\
	cmpq	%rdi, ARC_FROM(%rax);				\
	jne	2f;						\
	cmpq	%rsi, ARC_SELF(%rax);				\
	je	3f;						\
2:	movq	ARC_NEXT(%rax), %rax;				\
	jmp	1b;						\
3:	addq	$1, ARC_COUNT(%rax);				\
	jmp	done;						\
9:

/* A new arc: gmon_arc_new(%rdi, %rsi) with everything else saved. */
#define SLOW							\
	PUSH(%rcx); PUSH(%r8); PUSH(%r9); PUSH(%r10); PUSH(%r11); \
	PUSH(%rbx);						\
	.cfi_rel_offset %rbx, 0;				\
	movq	%rsp, %rbx;					\
	.cfi_def_cfa_register %rbx;				\
	andq	$-16, %rsp;					\
	subq	$128, %rsp;					\
	movaps	%xmm0, 0(%rsp);					\
	movaps	%xmm1, 16(%rsp);				\
	movaps	%xmm2, 32(%rsp);				\
	movaps	%xmm3, 48(%rsp);				\
	movaps	%xmm4, 64(%rsp);				\
	movaps	%xmm5, 80(%rsp);				\
	movaps	%xmm6, 96(%rsp);				\
	movaps	%xmm7, 112(%rsp);				\
	call	gmon_arc_new;					\
	movaps	0(%rsp), %xmm0;					\
	movaps	16(%rsp), %xmm1;				\
	movaps	32(%rsp), %xmm2;				\
	movaps	48(%rsp), %xmm3;				\
	movaps	64(%rsp), %xmm4;				\
	movaps	80(%rsp), %xmm5;				\
	movaps	96(%rsp), %xmm6;				\
	movaps	112(%rsp), %xmm7;				\
	movq	%rbx, %rsp;					\
	.cfi_def_cfa_register %rsp;				\
	POP(%rbx);						\
	.cfi_restore %rbx;					\
	POP(%r11); POP(%r10); POP(%r9); POP(%r8); POP(%rcx)

	.p2align 4
mcount:
_mcount:
	.cfi_startproc
	SAVE
	movq	8(%rbp), %rdi		/* call site */
	movq	32(%rsp), %rsi		/* callee: our return address */
	FAST(.Lmcount_done)
	SLOW
.Lmcount_done:
	RESTORE
	ret
	.cfi_endproc
	.size	mcount, .-mcount
	.size	_mcount, .-_mcount

	.p2align 4
__fentry__:
	.cfi_startproc
	SAVE
	movq	40(%rsp), %rdi		/* call site: the callee's return address */
	movq	32(%rsp), %rsi		/* callee: our return address */
	FAST(.Lfentry_done)
	SLOW
.Lfentry_done:
	RESTORE
	ret
	.cfi_endproc
	.size	__fentry__, .-__fentry__

	.section .note.GNU-stack, "", @progbits
