/*
 * cfi_x86_64.c - the x86-64 side of the CFI interpreter (cfi_arch.h):
 * the CFA in rsp or rbp plus an offset, rbp saved at an offset from it
 * or left alone, the return address at CFA-8 (the call pushed it), and
 * the one CFA expression ld writes, for .plt.  Anything else is a
 * NOINFO row.  Runs outside signal handlers, while tables are built.
 */
#if defined(__x86_64__)
#include "unwind/cfi_arch.h"

enum { REG_RBP_DW = 6, REG_RSP_DW = 7, REG_RA_DW = 16 };

const struct cfi_regs cfi_regs = { .fp = REG_RBP_DW, .ra = REG_RA_DW };

static uint8_t byte(const uint8_t **p, const uint8_t *end, bool *bad)
{
	if (*p >= end) {
		*bad = true;
		return 0;
	}
	return *(*p)++;
}

static int64_t sleb(const uint8_t **p, const uint8_t *end, bool *bad)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;
	do {
		if (*p >= end) {
			*bad = true;
			return 0;
		}
		b = *(*p)++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

/* The .plt CFA expression: rsp+N, +8 once (rip & 15) >= K. */
bool cfi_arch_cfa_expression(const uint8_t *p, uint64_t len, struct cfi_state *s)
{
	const uint8_t *end = p + len;
	bool bad = false;
#define U8() byte(&p, end, &bad)
	if (U8() != 0x77)	/* DW_OP_breg7 */
		return false;
	int64_t off = sleb(&p, end, &bad);
	if (U8() != 0x80 || sleb(&p, end, &bad) != 0 || U8() != 0x3f || U8() != 0x1a)
		return false;	/* breg16 0; lit15; and */
	uint8_t k = U8();
	if (k < 0x30 || k > 0x4f)
		return false;
	if (U8() != 0x2a || U8() != 0x33 || U8() != 0x24 || U8() != 0x22 || bad || p != end)
		return false;	/* ge; lit3; shl; plus */
#undef U8
	s->plt = true;
	s->plt_threshold = (uint8_t)(k - 0x30);
	s->cfa_reg = REG_RSP_DW;
	s->cfa_off = off;
	return true;
}

bool cfi_arch_op(uint8_t op, struct cfi_state *s)
{
	(void)op;
	(void)s;
	return false;
}

void cfi_arch_rule(const struct cfi_state *s, struct unwind_rule *r)
{
	/* The CIE says rip is at CFA-8; a CIE that says nothing means the same. */
	bool ra_ok = s->ra == CFI_RA_UNSAID || (s->ra == CFI_RA_AT && s->ra_off == -8);
	if (s->bad || !ra_ok || s->fp_bad || s->cfa_off < INT32_MIN || s->cfa_off > INT32_MAX
	    || s->fp_off < INT16_MIN || s->fp_off > INT16_MAX)
		return;
	if (s->plt) {
		r->kind = UNWIND_RULE_PLT;
		r->plt_threshold = s->plt_threshold;
	} else if (s->cfa_reg == REG_RSP_DW) {
		r->kind = UNWIND_RULE_SP;
	} else if (s->cfa_reg == REG_RBP_DW) {
		r->kind = UNWIND_RULE_FP;
	} else {
		return;
	}
	r->cfa_off = (int32_t)s->cfa_off;
	r->fp_off = (int16_t)s->fp_off;
}

#endif
