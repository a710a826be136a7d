/*
 * mcount_aarch64.S - the entry point gcc -pg calls on arm64.
 *
 * gcc emits `mov x0, x30; bl _mcount` after the prologue, as an ordinary
 * library call: x0 is the instrumented function's return address (the
 * call site, in its caller) and our own x30 the callee's pc.  Being an
 * ordinary call, the compiler has already saved whatever of x0-x18 and
 * the vector registers it needs, so unlike on x86-64 nothing is saved
 * here: the slow path is a tail call.  There is no -mfentry on arm64.
 *
 * The common case, an arc this thread has counted before, is done here:
 * find the arc in the thread's table (gmon_arcs.c, layout in
 * gmon_layout.h) and add one to its count.  Without LSE atomics there is
 * no single-instruction add to memory, so the add is a load-exclusive/
 * store-exclusive loop: a signal handler of this thread that counts into
 * the same table in between makes our stxr fail, and we add again on
 * its result.  Only this thread and its handlers write its table, so the
 * walk needs no ordering.  A new arc goes to gmon_arc_new() in C.
 *
 * Async-signal-safe and lock-free, like gmon_arc_new().
 */
#include "gmon/gmon_layout.h"

	.text
	.globl	_mcount
	.type	_mcount, %function
	.globl	mcount
	.type	mcount, %function

/* x0 call site, x30 callee; x9-x15 are free (caller-saved, not arguments
   gmon_arc_new needs). */
	.p2align 4
_mcount:
mcount:
	.cfi_startproc
	adrp	x9, gmon_arcs_counting
	ldr	w9, [x9, :lo12:gmon_arcs_counting]
	cbz	w9, .Ldone
	adrp	x10, :gottprel:gmon_arcs_mine
	ldr	x10, [x10, :gottprel_lo12:gmon_arcs_mine]
	mrs	x11, tpidr_el0
	ldr	x10, [x11, x10]		/* this thread's table */
	cbz	x10, .Lnew
	/* bucket: ((from << 16 ^ self) * M >> 32) & mask, M sign-extended */
	movz	x12, #0x79b1
	movk	x12, #0x9e37, lsl #16
	movk	x12, #0xffff, lsl #32
	movk	x12, #0xffff, lsl #48
	eor	x13, x30, x0, lsl #16
	mul	x13, x13, x12
	lsr	x13, x13, #32
	ldr	x14, [x10, #TABLE_MASK]
	and	x13, x13, x14
	add	x10, x10, #TABLE_BUCKETS
	ldr	x10, [x10, x13, lsl #3]	/* the chain's first arc */
1:	cbz	x10, .Lnew
	ldr	x11, [x10, #ARC_FROM]
	cmp	x11, x0
	b.ne	2f
	ldr	x11, [x10, #ARC_SELF]
	cmp	x11, x30
	b.eq	3f
2:	ldr	x10, [x10, #ARC_NEXT]
	b	1b
3:	add	x10, x10, #ARC_COUNT
4:	ldxr	x11, [x10]
	add	x11, x11, #1
	stxr	w12, x11, [x10]
	cbnz	w12, 4b
.Ldone:
	ret
.Lnew:
	mov	x1, x30
	b	gmon_arc_new		/* returns to our caller through x30 */
	.cfi_endproc
	.size	_mcount, .-_mcount
	.size	mcount, .-mcount

	.section .note.GNU-stack, "", %progbits
