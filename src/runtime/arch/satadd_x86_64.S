/*
 * satadd_x86_64.S - satadd16/satadd32 and the other fault-tolerant
 * accesses of satadd.h, for x86-64.
 *
 * The region between satadd_fault_begin and satadd_fault_end holds the
 * only instructions that touch the counter; a fault there resumes at
 * satadd_fault_fixup, which returns -1.
 * Async-signal-safe and lock-free.
 */
	.text
	.globl	satadd16
	.hidden	satadd16
	.type	satadd16, @function
	.globl	satadd32
	.hidden	satadd32
	.type	satadd32, @function
	.globl	satstore64
	.hidden	satstore64
	.type	satstore64, @function
	.globl	satload64
	.hidden	satload64
	.type	satload64, @function
	.globl	satcas64
	.hidden	satcas64
	.type	satcas64, @function
	.globl	satxadd64
	.hidden	satxadd64
	.type	satxadd64, @function
	.globl	satadd_fault_begin
	.hidden	satadd_fault_begin
	.globl	satadd_fault_end
	.hidden	satadd_fault_end
	.globl	satadd_fault_fixup
	.hidden	satadd_fault_fixup

/* int64_t satadd16(uint16_t *counter %rdi, uint32_t w %esi) */
	.p2align 4
satadd16:
	.cfi_startproc
	movl	%esi, %esi
satadd_fault_begin:
	movzwl	(%rdi), %eax		/* old value, may fault */
1:	movl	%eax, %edx
	addq	%rsi, %rdx		/* old + w, no wrap in 64 bits */
	cmpq	$0xffff, %rdx
	jbe	2f
	movl	$0xffff, %edx
2:	lock cmpxchgw %dx, (%rdi)	/* may fault: read-only page */
	jz	3f
	movzwl	%ax, %eax		/* lost a race: retry with the new value */
	jmp	1b
3:	subl	%eax, %edx		/* added = new - old */
	movl	%edx, %eax
	ret
	.cfi_endproc
	.size	satadd16, .-satadd16

/* int64_t satadd32(uint32_t *counter %rdi, uint32_t w %esi) */
	.p2align 4
satadd32:
	.cfi_startproc
	movl	%esi, %esi
	movl	(%rdi), %eax		/* may fault */
1:	movl	%eax, %edx
	addq	%rsi, %rdx
	movl	$0xffffffff, %ecx
	cmpq	%rcx, %rdx
	jbe	2f
	movq	%rcx, %rdx
2:	lock cmpxchgl %edx, (%rdi)	/* may fault; on failure %eax is reloaded */
	jnz	1b
	subq	%rax, %rdx
	movq	%rdx, %rax
	ret
	.cfi_endproc
	.size	satadd32, .-satadd32

/* int64_t satstore64(uint64_t *slot %rdi, uint64_t v %rsi) */
	.p2align 4
satstore64:
	.cfi_startproc
	movq	%rsi, (%rdi)		/* may fault */
	xorl	%eax, %eax
	ret
	.cfi_endproc
	.size	satstore64, .-satstore64

/* int64_t satload64(const uint64_t *p %rdi, uint64_t *out %rsi) */
	.p2align 4
satload64:
	.cfi_startproc
	movq	(%rdi), %rax		/* may fault */
	movq	%rax, (%rsi)
	xorl	%eax, %eax
	ret
	.cfi_endproc
	.size	satload64, .-satload64

/* int64_t satcas64(uint64_t *p %rdi, uint64_t expected %rsi, uint64_t desired %rdx) */
	.p2align 4
satcas64:
	.cfi_startproc
	movq	%rsi, %rax
	lock cmpxchgq %rdx, (%rdi)	/* may fault */
	sete	%al
	movzbl	%al, %eax
	ret
	.cfi_endproc
	.size	satcas64, .-satcas64

/* int64_t satxadd64(uint64_t *p %rdi, uint64_t v %rsi) */
	.p2align 4
satxadd64:
	.cfi_startproc
	lock addq %rsi, (%rdi)		/* may fault */
	xorl	%eax, %eax
	ret
satadd_fault_end:
	.cfi_endproc
	.size	satxadd64, .-satxadd64

	.p2align 4
	.type	satadd_fault_fixup, @function
satadd_fault_fixup:
	.cfi_startproc
	movq	$-1, %rax
	ret
	.cfi_endproc
	.size	satadd_fault_fixup, .-satadd_fault_fixup

	.section .note.GNU-stack,"",@progbits
