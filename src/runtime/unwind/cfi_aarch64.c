/*
 * cfi_aarch64.c - the arm64 side of the CFI interpreter (cfi_arch.h).
 * A bl leaves the return address in x30; gcc and clang keep the CFA in
 * sp (31) or x29 plus an offset, and save x29 and x30 at offsets from
 * it in the prologue (8-aligned: data alignment -8), or never, in a
 * leaf.  Anything else (a CFA expression, a register rule) is a NOINFO
 * row.  DW_CFA_AARCH64_negate_ra_state (pointer authentication: the
 * saved x30 is signed) needs no rule: the walk strips the signature of
 * every return address.  .plt has no CFI on arm64.  Runs outside
 * signal handlers, while tables are built.
 */
#if defined(__aarch64__)
#include "unwind/cfi_arch.h"

enum { REG_X29_DW = 29, REG_X30_DW = 30, REG_SP_DW = 31 };
enum { DW_CFA_AARCH64_negate_ra_state = 0x2d };

const struct cfi_regs cfi_regs = { .fp = REG_X29_DW, .ra = REG_X30_DW };

bool cfi_arch_cfa_expression(const uint8_t *p, uint64_t len, struct cfi_state *s)
{
	(void)p;
	(void)len;
	(void)s;
	return false;
}

bool cfi_arch_op(uint8_t op, struct cfi_state *s)
{
	(void)s;
	return op == DW_CFA_AARCH64_negate_ra_state;
}

/* off / 8 if off is 8-aligned and fits in [lo, hi], else 0. */
static int64_t words(int64_t off, int64_t lo, int64_t hi)
{
	return off % 8 == 0 && off / 8 >= lo && off / 8 <= hi ? off / 8 : 0;
}

void cfi_arch_rule(const struct cfi_state *s, struct unwind_rule *r)
{
	int64_t cfa_off = s->cfa_off, fp_off = s->fp_off, ra_off = s->ra_off;
	if (s->ra == CFI_RA_AT && ra_off > 0) {
		/*
		 * x30 above the CFA: the frame of glibc's lazy binding
		 * (_dl_runtime_resolve), whose CFA is sp after PLT0's
		 * stp x16, x30, [sp, #-16]!, with the caller's x30 at
		 * CFA+8.  The caller's sp is 16 above: that is the CFA
		 * the walk wants.  Any other slot above the CFA is not
		 * understood.
		 */
		if (ra_off != 8)
			return;
		cfa_off += 16;
		ra_off -= 16;
		fp_off = fp_off ? fp_off - 16 : 0;
	}
	if (s->bad || s->fp_bad || cfa_off < INT32_MIN || cfa_off > INT32_MAX)
		return;
	int64_t fp8 = 0, ra8 = 0;
	if (fp_off && !(fp8 = words(fp_off, INT16_MIN, INT16_MAX)))
		return;
	if (s->ra == CFI_RA_AT) {
		/* From x29's slot (the pair), or from the CFA. */
		ra8 = words(ra_off - fp_off, INT8_MIN, INT8_MAX);
		if (!ra8)
			return;
	} else if (s->ra != CFI_RA_UNSAID && s->ra != CFI_RA_SAME) {
		return;
	}
	if (s->cfa_reg == REG_SP_DW)
		r->kind = UNWIND_RULE_SP;
	else if (s->cfa_reg == REG_X29_DW)
		r->kind = UNWIND_RULE_FP;
	else
		return;
	r->ra_off8 = (int8_t)ra8;
	r->fp_off8 = (int16_t)fp8;
	r->cfa_off = (int32_t)cfa_off;
}

#endif
