/*
 * cfi_arch.h - what the CFI interpreter of cfi.c asks of the processor
 * (cfi_x86_64.c, cfi_aarch64.c): its DWARF register numbers, the CFA
 * expressions it can express, and how one row of CFI becomes a rule of
 * table.h.  Used while tables are built, outside signal handlers.
 */
#ifndef PROFIL_UNWIND_CFI_ARCH_H
#define PROFIL_UNWIND_CFI_ARCH_H

#include <stdbool.h>
#include <stdint.h>
#include "unwind/table.h"

/* Where the return address is, in the interpreter's state. */
enum cfi_ra {
	CFI_RA_UNSAID = 0,	/* no rule: the processor's convention (CFA-8, or in x30) */
	CFI_RA_SAME,		/* DW_CFA_same_value */
	CFI_RA_AT,		/* saved at CFA + ra_off */
	CFI_RA_UNDEF,		/* undefined: the outermost frame */
	CFI_RA_OTHER,		/* anything else: no rule can say it */
};

/* The interpreter's view of one row. */
struct cfi_state {
	uint8_t cfa_reg;	/* DWARF register; 0xff: an expression */
	bool plt;		/* x86-64's .plt expression (plt_threshold) */
	uint8_t plt_threshold;
	bool bad;		/* something this table cannot express */
	uint8_t ra;		/* enum cfi_ra */
	bool fp_bad;		/* fp has a rule other than an offset or its own value */
	int64_t ra_off;
	int64_t cfa_off;
	int64_t fp_off;		/* 0: same value */
};

struct cfi_regs {
	uint8_t fp;		/* the frame pointer: rbp (6), x29 (29) */
	uint8_t ra;		/* the CIE's return address column: rip (16), x30 (30) */
};
extern const struct cfi_regs cfi_regs;

/* A DW_CFA_def_cfa_expression the rules can express: s set, true. */
bool cfi_arch_cfa_expression(const uint8_t *p, uint64_t len, struct cfi_state *s);

/* A processor's own CFA operation without operands: true if known (s updated). */
bool cfi_arch_op(uint8_t op, struct cfi_state *s);

/* The rule of a row whose return address is not undefined (r zeroed:
   NOINFO unless the processor's walk can follow it). */
void cfi_arch_rule(const struct cfi_state *s, struct unwind_rule *r);

#endif
