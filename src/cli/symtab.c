/*
 * symtab.c - an object's functions by address (see symtab.h).
 *
 * dwfl_module_addrinfo() reads every symbol of the table at each call
 * (elfutils 0.188): a report of a build, whose cc1 has no symbol for
 * most of its samples, spent most of its time there.  Here the symbols
 * with a size are sorted once; an address that exactly one of them
 * holds is answered by bisection, several by libdwfl's own rule of
 * preference (the closest start, then the binding, globals before
 * locals); anything else (no symbol with a size: a symbol without one,
 * a mapping symbol) is asked of libdwfl once for each stretch between
 * two symbol or section boundaries, where its answer cannot change, and
 * kept; where no symbol without a size lies past every sized one before
 * the address, libdwfl would name nothing, and is not asked.
 */
#define _GNU_SOURCE
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "symtab.h"

struct sized {
	uint64_t start, end;
	uint64_t maxend;	/* the highest end of this and every one before */
	const char *raw;
	int index;		/* in the symbol table: libdwfl's order */
	int bind;		/* 3 global, 2 weak, 1 local, 0 other */
};

/* libdwfl's answer for one stretch between boundaries. */
struct memo {
	const char *raw;
	uint64_t start, size;
	int known;
};

struct symtab {
	Dwfl_Module *mod;
	int first_global;
	struct sized *sized;	/* by start */
	size_t nsized;
	uint64_t *exact;	/* global symbols without a size, by value */
	size_t nexact;
	uint64_t *bare;		/* every symbol without a size, by value */
	size_t nbare;
	uint64_t *cuts;		/* every boundary, sorted and unique */
	size_t ncuts;
	struct memo *memo;	/* ncuts + 1 stretches, made at first need */
	/* Call frame information: .eh_frame, and the function starts of
	   its .eh_frame_hdr's search table. */
	Dwarf_CFI *cfi;
	Dwarf_Addr cfi_bias;
	int cfi_tried;
	uint64_t *starts;	/* sorted, as the table is */
	size_t nstarts;
	uint64_t frame_start, frame_end;	/* the last range found */
};

static int bind_value(const GElf_Sym *sym)
{
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL: return 3;
	case STB_WEAK: return 2;
	case STB_LOCAL: return 1;
	default: return 0;
	}
}

static int by_start(const void *a, const void *b)
{
	const struct sized *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->index > y->index) - (x->index < y->index);
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static void push(uint64_t **v, size_t *n, size_t *cap, uint64_t x)
{
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 256;
		*v = xrealloc(*v, *cap * sizeof **v);
	}
	(*v)[(*n)++] = x;
}

static size_t sort_unique(uint64_t *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof *v, by_value);
	size_t k = 0;
	for (size_t i = 1; i < n; i++)
		if (v[i] != v[k])
			v[++k] = v[i];
	return k + 1;
}

struct symtab *symtab_make(Dwfl_Module *mod)
{
	struct symtab *t = xmalloc(sizeof *t);
	memset(t, 0, sizeof *t);
	t->mod = mod;
	int n = dwfl_module_getsymtab(mod);
	t->first_global = dwfl_module_getsymtab_first_global(mod);
	size_t capcuts = 0, capexact = 0, capbare = 0;
	if (n > 0)
		t->sized = xmalloc((size_t)n * sizeof *t->sized);
	/* Entry 0 is the null symbol, which libdwfl passes over too. */
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info);
		if (!name || !name[0] || sym.st_shndx == SHN_UNDEF || type == STT_SECTION
		    || type == STT_FILE || type == STT_TLS)
			continue;
		push(&t->cuts, &t->ncuts, &capcuts, addr);
		if (sym.st_size && addr + sym.st_size > addr) {
			push(&t->cuts, &t->ncuts, &capcuts, addr + sym.st_size);
			t->sized[t->nsized++] = (struct sized){ addr, addr + sym.st_size, 0, name, i,
								bind_value(&sym) };
		} else if (!sym.st_size) {
			push(&t->bare, &t->nbare, &capbare, addr);
			if (t->first_global == 0 || i >= t->first_global)
				push(&t->exact, &t->nexact, &capexact, addr);
		}
	}
	/* libdwfl tells symbols apart by section too. */
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	for (Elf_Scn *scn = NULL; elf && (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr shdr;
		if (gelf_getshdr(scn, &shdr) && (shdr.sh_flags & SHF_ALLOC)) {
			push(&t->cuts, &t->ncuts, &capcuts, shdr.sh_addr + bias);
			push(&t->cuts, &t->ncuts, &capcuts, shdr.sh_addr + bias + shdr.sh_size);
		}
	}
	qsort(t->sized, t->nsized, sizeof *t->sized, by_start);
	for (size_t i = 0; i < t->nsized; i++)
		t->sized[i].maxend = i && t->sized[i - 1].maxend > t->sized[i].end
					     ? t->sized[i - 1].maxend : t->sized[i].end;
	t->ncuts = sort_unique(t->cuts, t->ncuts);
	t->nexact = sort_unique(t->exact, t->nexact);
	t->nbare = sort_unique(t->bare, t->nbare);
	return t;
}

void symtab_free(struct symtab *t)
{
	if (!t)
		return;
	free(t->sized);
	free(t->exact);
	free(t->bare);
	free(t->cuts);
	free(t->memo);
	free(t->starts);
	free(t);
}

/* How many of v[0..n) are at or below x. */
static size_t upto(const uint64_t *v, size_t n, uint64_t x)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int global_pass(const struct symtab *t, const struct sized *s)
{
	return t->first_global == 0 || s->index >= t->first_global;
}

/*
 * Of the symbols with a size that hold addr, libdwfl's choice among
 * those of its first pass (the globals): in table order, one replaces
 * the one chosen if it starts closer to addr or binds more strongly,
 * or starts at the same place and is smaller without binding less
 * strongly, or no larger and binding more strongly.  NULL if none
 * holds it or the choice is not this simple (only locals hold it, and a
 * global symbol without a size might be at addr).
 */
static const struct sized *preferred(const struct symtab *t, uint64_t addr, size_t *below)
{
	size_t lo = 0, hi = t->nsized;
	while (lo < hi) {	/* the first that starts above addr */
		size_t mid = lo + (hi - lo) / 2;
		if (t->sized[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	*below = lo;
	const struct sized *only = NULL, *best = NULL;
	size_t holders = 0, globals = 0;
	for (size_t k = lo; k-- > 0 && t->sized[k].maxend > addr;) {
		const struct sized *s = &t->sized[k];
		if (addr >= s->end)
			continue;
		holders++;
		only = s;
		if (!global_pass(t, s))
			continue;
		globals++;
	}
	if (!holders)
		return NULL;
	if (holders == 1 && globals == 1)
		return only;
	if (!globals) {
		/* libdwfl's second pass, the locals, is skipped when a
		   global without a size is exactly at addr. */
		size_t at = upto(t->exact, t->nexact, addr);
		if (at && t->exact[at - 1] == addr)
			return NULL;
		if (holders == 1)
			return only;
	}
	/* Several: libdwfl's rule, in table order (lowest index first). */
	int last = -1;
	for (;;) {
		const struct sized *next = NULL;
		for (size_t k = lo; k-- > 0 && t->sized[k].maxend > addr;) {
			const struct sized *s = &t->sized[k];
			if (addr < s->end && (!globals || global_pass(t, s)) && s->index > last
			    && (!next || s->index < next->index))
				next = s;
		}
		if (!next)
			break;
		last = next->index;
		if (!best || best->start < next->start || best->bind < next->bind
		    || (best->start == next->start
			&& ((best->end - best->start > next->end - next->start
			     && best->bind <= next->bind)
			    || (best->end - best->start >= next->end - next->start
				&& best->bind < next->bind))))
			best = next;
	}
	return best;
}

int symtab_symbol(struct symtab *t, uint64_t addr, struct symhit *h)
{
	size_t below;
	const struct sized *s = preferred(t, addr, &below);
	if (s) {
		*h = (struct symhit){ s->raw, s->start, s->end - s->start };
		return 1;
	}
	/* libdwfl takes a symbol without a size only at or past the end of
	   every sized one before addr: with none there, it names nothing
	   (a stripped object's internal functions, mostly). */
	uint64_t past = below ? t->sized[below - 1].maxend : 0;
	size_t b = upto(t->bare, t->nbare, addr);
	if (past <= addr && (!b || t->bare[b - 1] < past)) {
		*h = (struct symhit){ NULL, 0, 0 };
		return 0;
	}
	size_t k = upto(t->cuts, t->ncuts, addr);
	if (!t->memo) {
		t->memo = xmalloc((t->ncuts + 1) * sizeof *t->memo);
		memset(t->memo, 0, (t->ncuts + 1) * sizeof *t->memo);
	}
	struct memo *m = &t->memo[k];
	if (!m->known) {
		GElf_Off off;
		GElf_Sym sym;
		const char *name = dwfl_module_addrinfo(t->mod, addr, &off, &sym, NULL, NULL, NULL);
		*m = (struct memo){ name, addr - (name ? off : 0), name ? sym.st_size : 0, 1 };
	}
	*h = (struct symhit){ m->raw, m->start, m->size };
	return m->raw != NULL;
}

static uint32_t get32(const unsigned char *p, int msb)
{
	return msb ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
		   : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

/*
 * The function starts of .eh_frame_hdr's binary search table: what a
 * Dwarf_Frame tells of its range is one row of the call frame table (up
 * to the next push or pop), not its function.  The table is read as
 * every GNU and LLVM linker writes it (each entry two 4-byte signed
 * offsets from the header, DW_EH_PE_datarel | DW_EH_PE_sdata4); another
 * encoding leaves the object without function ranges.
 */
static void read_starts(struct symtab *t)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(t->mod, &bias);
	size_t nph;
	if (!elf || elf_getphdrnum(elf, &nph) != 0)
		return;
	GElf_Ehdr eh;
	int msb = gelf_getehdr(elf, &eh) && eh.e_ident[EI_DATA] == ELFDATA2MSB;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_GNU_EH_FRAME || ph.p_filesz < 12)
			continue;
		Elf_Data *d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_BYTE);
		const unsigned char *h = d ? d->d_buf : NULL;
		/* version 1; eh_frame_ptr 4 bytes (pcrel or datarel,
		   sdata4/udata4); fde_count udata4; the table datarel sdata4. */
		if (!h || h[0] != 1 || (h[1] & 0x0f) != 0x0b || h[2] != 0x03 || h[3] != 0x3b)
			return;
		uint64_t n = get32(h + 8, msb);
		if (n > (ph.p_filesz - 12) / 8)
			return;
		t->starts = xmalloc((n + 1) * sizeof *t->starts);
		for (uint64_t k = 0; k < n; k++)
			t->starts[k] = ph.p_vaddr + bias
				       + (uint64_t)(int64_t)(int32_t)get32(h + 12 + 8 * k, msb);
		t->nstarts = (size_t)n;
		return;
	}
}

int symtab_frame(struct symtab *t, uint64_t addr, uint64_t *start, uint64_t *end)
{
	if (addr - t->frame_start < t->frame_end - t->frame_start) {
		*start = t->frame_start;
		*end = t->frame_end;
		return 1;
	}
	if (!t->cfi_tried) {
		t->cfi_tried = 1;
		t->cfi = dwfl_module_eh_cfi(t->mod, &t->cfi_bias);
		if (t->cfi)
			read_starts(t);
	}
	size_t k = upto(t->starts, t->nstarts, addr);
	Dwarf_Frame *frame;
	if (!k || addr < t->cfi_bias || dwarf_cfi_addrframe(t->cfi, addr - t->cfi_bias, &frame) != 0)
		return 0;	/* before the first function, or between two */
	/* The row's end: the function's, or before it. */
	Dwarf_Addr s, e;
	int r = dwarf_frame_info(frame, &s, &e, NULL);
	free(frame);
	if (r < 0)
		return 0;
	t->frame_start = *start = t->starts[k - 1];
	t->frame_end = *end = k < t->nstarts ? t->starts[k] : e + t->cfi_bias;
	return 1;
}
