/*
 * cfi.c - one loaded object's unwind table, from its in-memory
 * PT_GNU_EH_FRAME (.eh_frame_hdr's sorted FDE list, then .eh_frame).
 *
 * Only what the unwinder needs of the CFI is kept: where the CFA is (a
 * stack or frame pointer register plus an offset), where the frame
 * pointer and the return address were saved, or that the return address
 * is undefined (the outermost frame).  The interpreter is the same on
 * every processor; what a row may be, and the register numbers, are the
 * processor's (cfi_arch.h: cfi_x86_64.c, cfi_aarch64.c).  Any rule the
 * processor's walk cannot follow becomes a NOINFO row and is counted,
 * and the walk stops there rather than guess.
 *
 * Runs outside signal handlers only (it allocates); the result is
 * immutable once built.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "unwind/cfi_arch.h"
#include "unwind/table.h"

#if defined(__x86_64__) || defined(__aarch64__)

enum { MAX_RULES = 4096, HASH_SLOTS = 8192, STATE_STACK = 16 };

struct cursor {
	const uint8_t *p, *end;
	bool bad;
};

static uint8_t u8(struct cursor *c)
{
	if (c->p >= c->end) {
		c->bad = true;
		return 0;
	}
	return *c->p++;
}

static uint64_t fixed(struct cursor *c, unsigned n)
{
	if ((size_t)(c->end - c->p) < n) {
		c->bad = true;
		c->p = c->end;
		return 0;
	}
	uint64_t v = 0;
	memcpy(&v, c->p, n);	/* x86-64 and arm64 Linux are little-endian */
	c->p += n;
	return v;
}

static uint64_t uleb(struct cursor *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;
	do {
		b = u8(c);
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while ((b & 0x80) && !c->bad);
	return v;
}

static int64_t sleb(struct cursor *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;
	do {
		b = u8(c);
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while ((b & 0x80) && !c->bad);
	if (shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

/* A DW_EH_PE-encoded pointer; datarel is relative to .eh_frame_hdr. */
static uintptr_t encoded(struct cursor *c, uint8_t enc, uintptr_t datarel)
{
	if (enc == 0xff)
		return 0;
	uintptr_t here = (uintptr_t)c->p, v;
	switch (enc & 0x0f) {
	case 0x00: v = (uintptr_t)fixed(c, 8); break;
	case 0x01: v = (uintptr_t)uleb(c); break;
	case 0x02: v = (uintptr_t)fixed(c, 2); break;
	case 0x03: v = (uintptr_t)fixed(c, 4); break;
	case 0x04: v = (uintptr_t)fixed(c, 8); break;
	case 0x09: v = (uintptr_t)sleb(c); break;
	case 0x0a: v = (uintptr_t)(int64_t)(int16_t)fixed(c, 2); break;
	case 0x0b: v = (uintptr_t)(int64_t)(int32_t)fixed(c, 4); break;
	case 0x0c: v = (uintptr_t)fixed(c, 8); break;
	default: c->bad = true; return 0;
	}
	switch (enc & 0x70) {
	case 0x00: break;
	case 0x10: v += here; break;
	case 0x30: v += datarel; break;
	default: c->bad = true; return 0;	/* textrel, funcrel, aligned: not in .eh_frame_hdr or FDEs */
	}
	if (enc & 0x80)
		c->bad = true;	/* indirect: never for pc_begin */
	return v;
}

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	bool has_aug, signal;
	const uint8_t *insns, *insns_end;
};

static bool parse_cie(const uint8_t *at, const uint8_t *limit, struct cie *cie)
{
	struct cursor c = { at, limit, false };
	uint64_t len = fixed(&c, 4);
	if (len == 0xffffffffu)
		len = fixed(&c, 8);
	if (c.bad || len > (uint64_t)(limit - c.p))
		return false;
	const uint8_t *end = c.p + len;
	c.end = end;
	if (fixed(&c, 4) != 0)
		return false;	/* not a CIE */
	uint8_t version = u8(&c);
	const char *aug = (const char *)c.p;
	while (c.p < c.end && *c.p)
		c.p++;
	u8(&c);
	memset(cie, 0, sizeof *cie);
	cie->fde_enc = 0;	/* absptr */
	cie->code_align = uleb(&c);
	cie->data_align = sleb(&c);
	cie->ra_reg = version == 1 ? u8(&c) : uleb(&c);
	const uint8_t *aug_end = NULL;
	for (const char *a = aug; !c.bad && *a; a++) {
		switch (*a) {
		case 'z': {
			uint64_t alen = uleb(&c);
			if (alen > (uint64_t)(c.end - c.p))
				return false;
			aug_end = c.p + alen;
			cie->has_aug = true;
			break;
		}
		case 'R': cie->fde_enc = u8(&c); break;
		case 'L': u8(&c); break;
		case 'P': { uint8_t e = u8(&c); encoded(&c, e & 0x7f, 0); break; }
		case 'S': cie->signal = true; break;
		case 'B': break;
		default:
			if (!aug_end)
				return false;	/* unknown and unskippable */
			goto done;
		}
	}
done:
	if (aug_end)
		c.p = aug_end;
	if (c.bad)
		return false;
	cie->insns = c.p;
	cie->insns_end = end;
	return true;
}

/* Output of one object's build, in scratch memory. */
struct build {
	uint32_t *row_pc;
	uint16_t *row_rule;
	size_t nrows, cap;
	uintptr_t lo;
	struct unwind_rule *rules;
	uint32_t nrules;
	int32_t *hash;		/* rule index + 1, 0 free */
	uint64_t noinfo_rows, bad_fdes, fdes;
};

static uint32_t rule_index(struct build *b, const struct unwind_rule *r)
{
	uint64_t key;
	memcpy(&key, r, sizeof key);
	uint64_t h = key * 0x9e3779b97f4a7c15ull;
	for (uint32_t i = (uint32_t)(h >> 51) & (HASH_SLOTS - 1);; i = (i + 1) & (HASH_SLOTS - 1)) {
		int32_t e = b->hash[i];
		if (e == 0) {
			if (b->nrules >= MAX_RULES)
				return 0;	/* rule 0 is NOINFO */
			b->rules[b->nrules] = *r;
			b->hash[i] = (int32_t)b->nrules + 1;
			return b->nrules++;
		}
		if (memcmp(&b->rules[e - 1], r, sizeof *r) == 0)
			return (uint32_t)e - 1;
	}
}

static void to_rule(const struct cfi_state *s, bool signal, struct unwind_rule *r)
{
	memset(r, 0, sizeof *r);
	if (signal)
		r->kind = UNWIND_RULE_SIGNAL;
	else if (s->ra == CFI_RA_UNDEF)
		r->kind = UNWIND_RULE_STOP;
	else
		cfi_arch_rule(s, r);
}

static void add_row(struct build *b, uintptr_t pc, const struct unwind_rule *r)
{
	if (pc < b->lo)
		return;
	uint32_t off = (uint32_t)(pc - b->lo);
	uint16_t idx = (uint16_t)rule_index(b, r);
	if (b->nrows) {
		uint32_t last = b->row_pc[b->nrows - 1];
		if (off < last)
			return;	/* overlapping FDEs: the first one wins */
		if (off == last) {
			b->row_rule[b->nrows - 1] = idx;
			if (b->nrows >= 2 && b->row_rule[b->nrows - 2] == idx)
				b->nrows--;
			return;
		}
		if (b->row_rule[b->nrows - 1] == idx)
			return;
	}
	if (b->nrows >= b->cap)
		return;
	b->row_pc[b->nrows] = off;
	b->row_rule[b->nrows] = idx;
	b->nrows++;
}

static void set_reg(struct cfi_state *s, const struct cfi_state *init, uint64_t reg, int how,
		    int64_t off)
{
	/* how: 0 offset(off), 1 restore, 2 undefined, 3 same value, 4 other */
	if (reg == cfi_regs.fp) {
		s->fp_bad = false;
		switch (how) {
		case 0: s->fp_off = off; if (off == 0) s->fp_bad = true; break;
		case 1: s->fp_off = init->fp_off; s->fp_bad = init->fp_bad; break;
		case 2: case 3: s->fp_off = 0; break;
		default: s->fp_bad = true; break;
		}
	} else if (reg == cfi_regs.ra) {
		switch (how) {
		case 0: s->ra = CFI_RA_AT; s->ra_off = off; break;
		case 1: s->ra = init->ra; s->ra_off = init->ra_off; break;
		case 2: s->ra = CFI_RA_UNDEF; break;
		case 3: s->ra = CFI_RA_SAME; break;
		default: s->ra = CFI_RA_OTHER; break;
		}
	}
}

/* Run CFA instructions from *loc, emitting a row at each advance; false if malformed. */
static bool run(struct build *b, const struct cie *cie, const uint8_t *p, const uint8_t *end,
		struct cfi_state *s, const struct cfi_state *init, uintptr_t *loc, uintptr_t stop_at,
		bool emit)
{
	struct cfi_state stack[STATE_STACK];
	unsigned depth = 0;
	struct cursor c = { p, end, false };
	struct unwind_rule r;
	while (c.p < c.end && !c.bad) {
		uint8_t op = u8(&c);
		uint64_t reg, delta = 0;
		int64_t off;
		switch (op >> 6) {
		case 1: delta = (uint64_t)(op & 0x3f) * cie->code_align; goto advance;
		case 2: set_reg(s, init, op & 0x3f, 0, (int64_t)uleb(&c) * cie->data_align); continue;
		case 3: set_reg(s, init, op & 0x3f, 1, 0); continue;
		default: break;
		}
		switch (op) {
		case 0x00: break;
		case 0x01: {
			uintptr_t to = encoded(&c, cie->fde_enc, 0);
			if (to < *loc)
				return false;
			delta = to - *loc;
			goto advance;
		}
		case 0x02: delta = fixed(&c, 1) * cie->code_align; goto advance;
		case 0x03: delta = fixed(&c, 2) * cie->code_align; goto advance;
		case 0x04: delta = fixed(&c, 4) * cie->code_align; goto advance;
		case 0x05: reg = uleb(&c); set_reg(s, init, reg, 0, (int64_t)uleb(&c) * cie->data_align); break;
		case 0x06: set_reg(s, init, uleb(&c), 1, 0); break;
		case 0x07: set_reg(s, init, uleb(&c), 2, 0); break;
		case 0x08: set_reg(s, init, uleb(&c), 3, 0); break;
		case 0x09: reg = uleb(&c); uleb(&c); set_reg(s, init, reg, 4, 0); break;
		case 0x0a:
			if (depth >= STATE_STACK)
				return false;
			stack[depth++] = *s;
			break;
		case 0x0b:
			if (depth == 0)
				return false;
			*s = stack[--depth];	/* the CFA rule too, as libgcc does */
			break;
		case 0x0c: s->cfa_reg = (uint8_t)uleb(&c); s->cfa_off = (int64_t)uleb(&c); s->plt = false; break;
		case 0x0d: s->cfa_reg = (uint8_t)uleb(&c); s->plt = false; break;
		case 0x0e: s->cfa_off = (int64_t)uleb(&c); break;
		case 0x0f: {
			uint64_t len = uleb(&c);
			if (len > (uint64_t)(c.end - c.p))
				return false;
			if (!cfi_arch_cfa_expression(c.p, len, s)) {
				s->cfa_reg = 0xff;
				s->plt = false;
			}
			c.p += len;
			break;
		}
		case 0x10: case 0x16: {
			reg = uleb(&c);
			uint64_t len = uleb(&c);
			if (len > (uint64_t)(c.end - c.p))
				return false;
			c.p += len;
			set_reg(s, init, reg, 4, 0);
			break;
		}
		case 0x11: reg = uleb(&c); set_reg(s, init, reg, 0, sleb(&c) * cie->data_align); break;
		case 0x12: s->cfa_reg = (uint8_t)uleb(&c); s->cfa_off = sleb(&c) * cie->data_align; s->plt = false; break;
		case 0x13: s->cfa_off = sleb(&c) * cie->data_align; break;
		case 0x14: reg = uleb(&c); uleb(&c); set_reg(s, init, reg, 4, 0); break;
		case 0x15: reg = uleb(&c); sleb(&c); set_reg(s, init, reg, 4, 0); break;
		case 0x2e: uleb(&c); break;
		case 0x2f: reg = uleb(&c); off = -(int64_t)uleb(&c) * cie->data_align; set_reg(s, init, reg, 0, off); break;
		default:
			if (!cfi_arch_op(op, s))
				return false;
			break;
		}
		continue;
advance:
		if (emit) {
			to_rule(s, cie->signal, &r);
			if (r.kind == UNWIND_RULE_NOINFO)
				b->noinfo_rows++;
			add_row(b, *loc, &r);
		}
		*loc += delta;
		if (*loc >= stop_at)
			return !c.bad;
	}
	return !c.bad;
}

static bool parse_fde(struct build *b, const uint8_t *fde, const uint8_t *eh_lo,
		      const uint8_t *limit, uintptr_t datarel)
{
	struct cursor c = { fde, limit, false };
	uint64_t len = fixed(&c, 4);
	if (len == 0xffffffffu)
		return false;	/* 64-bit DWARF: never in .eh_frame of a loaded object */
	if (c.bad || len > (uint64_t)(limit - c.p) || len < 4)
		return false;
	const uint8_t *end = c.p + len;
	c.end = end;
	const uint8_t *id_at = c.p;
	uint32_t cie_off = (uint32_t)fixed(&c, 4);
	if (cie_off == 0 || (uintptr_t)(id_at - eh_lo) < cie_off)
		return false;
	struct cie cie;
	if (!parse_cie(id_at - cie_off, limit, &cie) || cie.ra_reg != cfi_regs.ra)
		return false;
	uintptr_t pc = encoded(&c, cie.fde_enc, datarel);
	uintptr_t range = encoded(&c, cie.fde_enc & 0x0f, 0);
	if (cie.has_aug) {
		uint64_t alen = uleb(&c);
		if (alen > (uint64_t)(c.end - c.p))
			return false;
		c.p += alen;
	}
	if (c.bad || range == 0)
		return false;
	struct cfi_state init;
	memset(&init, 0, sizeof init);
	init.cfa_reg = 0xff;
	uintptr_t loc = pc;
	struct cfi_state s;
	/* The CIE's initial instructions set the state without emitting rows. */
	if (!run(b, &cie, cie.insns, cie.insns_end, &init, &init, &loc, pc + range, false))
		return false;
	loc = pc;
	s = init;
	if (!run(b, &cie, c.p, end, &s, &init, &loc, pc + range, true))
		return false;
	if (loc < pc + range) {
		struct unwind_rule r;
		to_rule(&s, cie.signal, &r);
		if (r.kind == UNWIND_RULE_NOINFO)
			b->noinfo_rows++;
		add_row(b, loc, &r);
	}
	struct unwind_rule none;
	memset(&none, 0, sizeof none);
	add_row(b, pc + range, &none);
	return true;
}

int unwind_table_build(uintptr_t bias, const void *phdrs, unsigned phnum, const char *name,
		       struct unwind_object *out, struct unwind_build_stats *st)
{
	const ElfW(Phdr) *ph = phdrs, *hdr_ph = NULL;
	memset(out, 0, sizeof *out);
	for (unsigned i = 0; i < phnum; i++)
		if (ph[i].p_type == PT_GNU_EH_FRAME)
			hdr_ph = &ph[i];
	if (!hdr_ph) {
		errno = ENOENT;
		return -1;
	}
	const uint8_t *hdr = (const uint8_t *)(bias + hdr_ph->p_vaddr);
	/* .eh_frame is in the same read-only PT_LOAD: bound every read by it. */
	const uint8_t *seg_lo = NULL, *seg_hi = NULL;
	for (unsigned i = 0; i < phnum; i++) {
		if (ph[i].p_type != PT_LOAD)
			continue;
		if (hdr_ph->p_vaddr >= ph[i].p_vaddr && hdr_ph->p_vaddr < ph[i].p_vaddr + ph[i].p_filesz) {
			seg_lo = (const uint8_t *)(bias + ph[i].p_vaddr);
			seg_hi = (const uint8_t *)(bias + ph[i].p_vaddr + ph[i].p_filesz);
		}
	}
	if (!seg_lo || hdr_ph->p_memsz < 4 || hdr[0] != 1) {
		errno = EINVAL;
		return -1;
	}
	struct cursor c = { hdr + 4, seg_hi, false };
	uintptr_t datarel = (uintptr_t)hdr;
	const uint8_t *eh = (const uint8_t *)encoded(&c, hdr[1], datarel);
	uint64_t nfde = encoded(&c, hdr[2], datarel);
	if (c.bad || hdr[3] != 0x3b || eh < seg_lo || eh >= seg_hi
	    || nfde > (uint64_t)(seg_hi - c.p) / 8) {
		errno = EINVAL;	/* only the sorted sdata4 datarel table gcc's ld, gold and lld write */
		return -1;
	}
	const int32_t *tab = (const int32_t *)c.p;
	if (nfde == 0) {
		errno = ENOENT;
		return -1;
	}
	struct build b;
	memset(&b, 0, sizeof b);
	b.lo = datarel + (intptr_t)tab[0];
	/* Rows are bounded by instruction bytes plus two per FDE. */
	b.cap = (size_t)(seg_hi - eh) + 2 * nfde + 2;
	size_t scratch = b.cap * (sizeof *b.row_pc + sizeof *b.row_rule) + MAX_RULES * sizeof *b.rules
			 + HASH_SLOTS * sizeof *b.hash;
	uint8_t *mem = malloc(scratch);	/* reused by the next build, unlike a mapping */
	if (!mem)
		return -1;
	b.rules = (struct unwind_rule *)mem;
	b.hash = (int32_t *)(mem + MAX_RULES * sizeof *b.rules);
	memset(b.hash, 0, HASH_SLOTS * sizeof *b.hash);
	b.row_pc = (uint32_t *)((uint8_t *)b.hash + HASH_SLOTS * sizeof *b.hash);
	b.row_rule = (uint16_t *)(b.row_pc + b.cap);
	struct unwind_rule none;
	memset(&none, 0, sizeof none);
	rule_index(&b, &none);	/* rule 0 is NOINFO */
	for (uint64_t i = 0; i < nfde; i++) {
		const uint8_t *fde = (const uint8_t *)(datarel + (intptr_t)tab[2 * i + 1]);
		b.fdes++;
		if (fde < eh || fde >= seg_hi || !parse_fde(&b, fde, eh, seg_hi, datarel)) {
			b.bad_fdes++;
			/* Cover the failed FDE's start with NOINFO so its pcs do not
			 * take the previous function's rule. */
			add_row(&b, datarel + (intptr_t)tab[2 * i], &none);
		}
	}
	size_t bytes = b.nrows * (sizeof *b.row_pc + sizeof *b.row_rule) + b.nrules * sizeof *b.rules;
	/* From malloc, not a mapping of its own: a table built after a
	 * dlopen must not take the hole a dlclose leaves, or the library
	 * opened again lands elsewhere every time. */
	uint8_t *final = b.nrows ? malloc(bytes + 8) : NULL;
	if (b.nrows && !final) {
		free(mem);
		return -1;
	}
	if (final) {
		uint32_t *rp = (uint32_t *)final;
		struct unwind_rule *rr = (struct unwind_rule *)(rp + b.nrows);
		uint16_t *ri = (uint16_t *)(rr + b.nrules);
		memcpy(rp, b.row_pc, b.nrows * sizeof *rp);
		memcpy(rr, b.rules, b.nrules * sizeof *rr);
		memcpy(ri, b.row_rule, b.nrows * sizeof *ri);
		out->row_pc = rp;
		out->rules = rr;
		out->row_rule = ri;
		out->hi = b.lo + rp[b.nrows - 1] + 1;
	}
	free(mem);
	out->lo = b.lo;
	out->nrows = (uint32_t)b.nrows;
	out->nrules = b.nrules;
	out->bias = bias;
	out->bytes = bytes;
	const char *tail = name ? name : "";
	size_t n = strlen(tail);
	if (n >= sizeof out->name)
		tail += n - (sizeof out->name - 1);
	strcpy(out->name, tail);
	if (st) {
		st->objects++;
		st->fdes += b.fdes;
		st->rows += b.nrows;
		st->noinfo_rows += b.noinfo_rows;
		st->bad_fdes += b.bad_fdes;
		st->bytes += bytes;
	}
	return 0;
}

void unwind_table_free(struct unwind_object *obj)
{
	if (obj->mapped)
		munmap((void *)((uintptr_t)obj->row_pc & ~(uintptr_t)4095), obj->mapped);
	else
		free((void *)obj->row_pc);
	obj->row_pc = NULL;
}

#else

int unwind_table_build(uintptr_t bias, const void *phdrs, unsigned phnum, const char *name,
		       struct unwind_object *out, struct unwind_build_stats *st)
{
	(void)bias; (void)phdrs; (void)phnum; (void)name; (void)st;
	memset(out, 0, sizeof *out);
	errno = ENOSYS;
	return -1;
}

void unwind_table_free(struct unwind_object *obj)
{
	(void)obj;
}

#endif
