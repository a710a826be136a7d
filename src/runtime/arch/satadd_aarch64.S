/*
 * satadd_aarch64.S - satadd16/satadd32 and the other fault-tolerant
 * accesses of satadd.h, for arm64.
 *
 * Read-modify-writes are load-exclusive/store-exclusive loops (ARMv8.0:
 * no LSE atomics assumed, so one library runs on every arm64 core).  A
 * signal handler that counts into the same word between our ldxr and
 * stxr clears the exclusive monitor with its own store, and our stxr
 * fails and retries: nothing is lost.  A read-only counter faults at
 * the stxr, an unmapped one at the ldxr.
 *
 * The region between satadd_fault_begin and satadd_fault_end holds the
 * only instructions that touch the counter; a fault there resumes at
 * satadd_fault_fixup, which returns -1.  Nothing in the region keeps
 * state in x30 or on the stack, so resuming at the fixup returns to the
 * caller as the routine would have.
 * Async-signal-safe and lock-free.
 */
	.text
	.globl	satadd16
	.hidden	satadd16
	.type	satadd16, %function
	.globl	satadd32
	.hidden	satadd32
	.type	satadd32, %function
	.globl	satstore64
	.hidden	satstore64
	.type	satstore64, %function
	.globl	satload64
	.hidden	satload64
	.type	satload64, %function
	.globl	satcas64
	.hidden	satcas64
	.type	satcas64, %function
	.globl	satxadd64
	.hidden	satxadd64
	.type	satxadd64, %function
	.globl	satadd_fault_begin
	.hidden	satadd_fault_begin
	.globl	satadd_fault_end
	.hidden	satadd_fault_end
	.globl	satadd_fault_fixup
	.hidden	satadd_fault_fixup

/* int64_t satadd16(uint16_t *counter x0, uint32_t w w1) */
	.p2align 4
satadd16:
	.cfi_startproc
	mov	w1, w1			/* w, zero-extended */
	mov	x5, #0xffff
satadd_fault_begin:
1:	ldxrh	w2, [x0]		/* old value, may fault */
	add	x3, x2, x1		/* old + w, no wrap in 64 bits */
	cmp	x3, x5
	csel	x3, x3, x5, ls
	stxrh	w4, w3, [x0]		/* may fault: read-only page */
	cbnz	w4, 1b			/* lost the word: retry with its new value */
	sub	x0, x3, x2		/* added = new - old */
	ret
	.cfi_endproc
	.size	satadd16, .-satadd16

/* int64_t satadd32(uint32_t *counter x0, uint32_t w w1) */
	.p2align 4
satadd32:
	.cfi_startproc
	mov	w1, w1
	mov	x5, #0xffffffff
1:	ldxr	w2, [x0]		/* may fault */
	add	x3, x2, x1
	cmp	x3, x5
	csel	x3, x3, x5, ls
	stxr	w4, w3, [x0]		/* may fault */
	cbnz	w4, 1b
	sub	x0, x3, x2
	ret
	.cfi_endproc
	.size	satadd32, .-satadd32

/* int64_t satstore64(uint64_t *slot x0, uint64_t v x1) */
	.p2align 4
satstore64:
	.cfi_startproc
	str	x1, [x0]		/* may fault */
	mov	x0, #0
	ret
	.cfi_endproc
	.size	satstore64, .-satstore64

/*
 * int64_t satload64(const uint64_t *p x0, uint64_t *out x1)
 * An acquire load, as every load is on x86-64: a thread table entry
 * claimed by another thread is read whole after its key.
 */
	.p2align 4
satload64:
	.cfi_startproc
	ldar	x2, [x0]		/* may fault */
	str	x2, [x1]
	mov	x0, #0
	ret
	.cfi_endproc
	.size	satload64, .-satload64

/*
 * int64_t satcas64(uint64_t *p x0, uint64_t expected x1, uint64_t desired x2)
 * Acquire and release, as lock cmpxchg is on x86-64.  1 stored, 0 not.
 */
	.p2align 4
satcas64:
	.cfi_startproc
1:	ldaxr	x3, [x0]		/* may fault */
	cmp	x3, x1
	b.ne	2f
	stlxr	w4, x2, [x0]		/* may fault */
	cbnz	w4, 1b
	mov	x0, #1
	ret
2:	clrex
	mov	x0, #0
	ret
	.cfi_endproc
	.size	satcas64, .-satcas64

/* int64_t satxadd64(uint64_t *p x0, uint64_t v x1) */
	.p2align 4
satxadd64:
	.cfi_startproc
1:	ldxr	x2, [x0]		/* may fault */
	add	x2, x2, x1
	stxr	w3, x2, [x0]		/* may fault */
	cbnz	w3, 1b
	mov	x0, #0
	ret
satadd_fault_end:
	.cfi_endproc
	.size	satxadd64, .-satxadd64

	.p2align 4
	.type	satadd_fault_fixup, %function
satadd_fault_fixup:
	.cfi_startproc
	mov	x0, #-1
	ret
	.cfi_endproc
	.size	satadd_fault_fixup, .-satadd_fault_fixup

	.section .note.GNU-stack,"",%progbits
