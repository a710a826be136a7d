/*
 * attach_unwind.c - the call stacks of profil run -p: each sample's copy
 * of the target's user stack, walked with the runtime's own unwinder
 * (src/runtime/unwind, compiled into the command as well).
 *
 * The walk reads nothing but the copy (unwind_walk_in's copy mode) and
 * the tables.  A table is built by table.c's own builder from the
 * object's PT_GNU_EH_FRAME as the file on disk has it (opened by
 * attach_maps.c through /proc/PID/map_files or /proc/PID/root): the
 * PT_LOAD that holds .eh_frame_hdr and .eh_frame is mapped read-only
 * here, the builder reads it as if it were the loaded object, and the
 * table's pcs are moved from where profil mapped it to where the target
 * did.  The vDSO has no file: the target's is the kernel's, the same
 * image as profil's own (getauxval(AT_SYSINFO_EHDR)), whose table is
 * built from memory the same way.  Tables are kept per file (its build
 * ID, else device, inode, size and time) for the whole run, so that a
 * library many processes map is built once; each process has a set of
 * the tables of what it maps now, made again when that changes.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <gelf.h>
#include <link.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unwind/table.h"
#include "unwind/unwind.h"
#include "attach.h"
#include "cli.h"

/*
 * The registers a walk starts from, by their bit in sample_regs_user
 * (asm/perf_regs.h); a record has them in bit order.  As libprofil's
 * perf backend asks them.
 */
#if defined(__x86_64__)
#define REGS_MASK ((1ull << 6) | (1ull << 7) | (1ull << 8))	/* bp, sp, ip */
#define NREGS 3
#define AT_BP 0
#define AT_SP 1
#define AT_PC 2
#define MACHINE EM_X86_64
#elif defined(__aarch64__)
#define REGS_MASK ((1ull << 29) | (1ull << 30) | (1ull << 31) | (1ull << 32))	/* x29, lr, sp, pc */
#define NREGS 4
#define AT_BP 0
#define AT_LR 1
#define AT_SP 2
#define AT_PC 3
#define MACHINE EM_AARCH64
#else
#define REGS_MASK 0ull	/* no walk: stacks of the sampled pc alone */
#define NREGS 0
#define AT_PC 0
#define MACHINE EM_NONE	/* no table is built */
#endif

uint64_t attach_regs_mask(void)
{
	return REGS_MASK;
}

int attach_regs_pc(void)
{
	return NREGS ? AT_PC : -1;
}

unsigned attach_regs_count(void)
{
	return NREGS;
}

/* One object's table, at link-time addresses (bias 0). */
struct attach_table {
	struct unwind_object obj;	/* nrows 0: the object has none */
	uint64_t adjust;		/* added to the mapping's bias (the vDSO's) */
	uint8_t id[64];
	uint32_t id_len;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	int vdso;
	struct attach_table *next;
};

static struct attach_table *tables;

/* The walk's set of the objects process p maps now. */
struct attach_unwind {
	struct unwind_set set;
	struct unwind_object *objects;
	size_t cap;
	int stale;
};

/* Moves a table built at bias from to bias to. */
static void rebase(struct unwind_object *o, uint64_t from, uint64_t to)
{
	o->lo = o->lo - (uintptr_t)from + (uintptr_t)to;
	o->hi = o->hi - (uintptr_t)from + (uintptr_t)to;
	o->bias = (uintptr_t)to;
}

/* The table of the ELF file at fd, from its PT_GNU_EH_FRAME: 0, or -1. */
static int build_file(int fd, off_t file_size, const char *name, struct unwind_object *out)
{
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -1;
	GElf_Ehdr eh;
	size_t n = 0;
	int rc = -1;
	ElfW(Phdr) *ph = NULL;
	if (elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) != ELFCLASS64 || !gelf_getehdr(elf, &eh)
	    || eh.e_machine != MACHINE || elf_getphdrnum(elf, &n) != 0 || !n)
		goto out;
	ph = xmalloc(n * sizeof *ph);
	const ElfW(Phdr) *hdr = NULL, *load = NULL;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr g;
		if (!gelf_getphdr(elf, (int)i, &g))
			goto out;
		ph[i] = (ElfW(Phdr)){ .p_type = g.p_type, .p_flags = g.p_flags,
				      .p_offset = g.p_offset, .p_vaddr = g.p_vaddr,
				      .p_paddr = g.p_paddr, .p_filesz = g.p_filesz,
				      .p_memsz = g.p_memsz, .p_align = g.p_align };
		if (g.p_type == PT_GNU_EH_FRAME)
			hdr = &ph[i];
	}
	for (size_t i = 0; hdr && i < n; i++)
		if (ph[i].p_type == PT_LOAD && hdr->p_vaddr >= ph[i].p_vaddr
		    && hdr->p_vaddr - ph[i].p_vaddr < ph[i].p_filesz)
			load = &ph[i];
	/* A file shorter than its headers say would fault when read. */
	if (!load || load->p_offset > (uint64_t)file_size
	    || load->p_filesz > (uint64_t)file_size - load->p_offset)
		goto out;
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t from = load->p_offset & ~(page - 1);
	size_t len = (size_t)(load->p_offset - from + load->p_filesz);
	void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, (off_t)from);
	if (map == MAP_FAILED)
		goto out;
	/* Where the builder finds each address of the segment: here. */
	uint64_t bias = (uint64_t)(uintptr_t)map + (load->p_offset - from) - load->p_vaddr;
	rc = unwind_table_build((uintptr_t)bias, ph, (unsigned)n, name, out, NULL);
	munmap(map, len);
	if (rc == 0 && out->nrows)
		rebase(out, bias, 0);
out:
	free(ph);
	elf_end(elf);
	return rc;
}

/* The vDSO's table, from profil's own: 0, or -1.  *header: where its
   ELF header is from its bias, which the target's mapping starts at. */
static int build_vdso(struct unwind_object *out, uint64_t *header)
{
	uintptr_t at = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
	if (!at)
		return -1;
	const ElfW(Ehdr) *eh = (const void *)at;
	const ElfW(Phdr) *ph = (const void *)(at + eh->e_phoff);
	const ElfW(Phdr) *load = NULL;
	for (unsigned i = 0; i < eh->e_phnum && !load; i++)
		if (ph[i].p_type == PT_LOAD)
			load = &ph[i];
	if (!load)
		return -1;
	uintptr_t bias = at - (uintptr_t)(load->p_vaddr - load->p_offset);
	if (unwind_table_build(bias, ph, eh->e_phnum, "[vdso]", out, NULL) != 0)
		return -1;
	if (out->nrows)
		rebase(out, bias, 0);
	*header = at - bias;
	return 0;
}

static struct attach_table *table_of(const struct attach_obj *o, int fd)
{
	struct stat st;
	memset(&st, 0, sizeof st);
	if (fd >= 0 && fstat(fd, &st) != 0)
		return NULL;
	const struct profile_segment *h = &o->head;
	for (struct attach_table *t = tables; t; t = t->next) {
		if (fd < 0 ? t->vdso
			   : !t->vdso && (h->build_id_len
					  ? t->id_len == h->build_id_len
					    && memcmp(t->id, h->build_id, t->id_len) == 0
					  : !t->id_len && t->dev == st.st_dev && t->ino == st.st_ino
					    && t->size == st.st_size
					    && t->mtime.tv_sec == st.st_mtim.tv_sec
					    && t->mtime.tv_nsec == st.st_mtim.tv_nsec))
			return t;
	}
	struct attach_table *t = xmalloc(sizeof *t);
	memset(t, 0, sizeof *t);
	int bad;
	if (fd < 0) {
		t->vdso = 1;
		uint64_t header = 0;
		bad = build_vdso(&t->obj, &header);
		t->adjust = -header;
	} else {
		t->id_len = h->build_id_len;
		memcpy(t->id, h->build_id, h->build_id_len);
		t->dev = st.st_dev;
		t->ino = st.st_ino;
		t->size = st.st_size;
		t->mtime = st.st_mtim;
		bad = build_file(fd, st.st_size, h->path, &t->obj);
	}
	if (bad)
		memset(&t->obj, 0, sizeof t->obj);	/* none: not tried again */
	t->next = tables;
	tables = t;
	return t;
}

void attach_unwind_object(struct attach_proc *p, struct attach_obj *o, int fd)
{
	const struct attach_table *t = table_of(o, fd);
	if (!t || !t->obj.nrows)
		return;
	o->unwind = t;
	attach_unwind_changed(p);
}

void attach_unwind_changed(struct attach_proc *p)
{
	if (p->unwind)
		p->unwind->stale = 1;
}

static int by_lo(const void *a, const void *b)
{
	const struct unwind_object *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The set of the tables of what p maps now. */
static const struct unwind_set *set_of(struct attach_proc *p)
{
	struct attach_unwind *u = p->unwind;
	if (!u) {
		u = p->unwind = xmalloc(sizeof *u);
		memset(u, 0, sizeof *u);
		u->stale = 1;
	}
	if (!u->stale)
		return &u->set;
	if (u->cap < p->nobjs) {
		u->cap = p->nobjs;
		u->objects = xrealloc(u->objects, u->cap * sizeof *u->objects);
	}
	size_t n = 0;
	for (size_t i = 0; i < p->nobjs; i++) {
		const struct attach_obj *o = p->objs[i];
		if (o->unmapped || !o->unwind)
			continue;
		u->objects[n] = o->unwind->obj;
		rebase(&u->objects[n], 0, o->head.bias + o->unwind->adjust);
		/* The same table twice (two executable segments of one
		   object): once is enough. */
		size_t k = 0;
		while (k < n && (u->objects[k].row_pc != u->objects[n].row_pc
				 || u->objects[k].lo != u->objects[n].lo))
			k++;
		n += k == n;
	}
	qsort(u->objects, n, sizeof *u->objects, by_lo);
	u->set = (struct unwind_set){ .nobjects = (uint32_t)n, .objects = u->objects };
	u->stale = 0;
	return &u->set;
}

/*
 * Why a walk of a copy ended, as libprofil's perf backend says it: the
 * unwinder's reasons are profil(5)'s in the same order, and a read past
 * a copy the kernel filled whole is a stack that went on past it.
 */
#define SAME(a, b) ((int)(a) == (int)(b))
_Static_assert(SAME(UNWIND_COMPLETE, PROFILE_STOP_COMPLETE)
	       && SAME(UNWIND_NO_OBJECT, PROFILE_STOP_NO_OBJECT)
	       && SAME(UNWIND_NO_CFI, PROFILE_STOP_NO_CFI)
	       && SAME(UNWIND_BAD_READ, PROFILE_STOP_BAD_READ)
	       && SAME(UNWIND_DEPTH, PROFILE_STOP_DEPTH)
	       && SAME(UNWIND_CFA_NOT_INCREASING, PROFILE_STOP_NOT_INCREASING), "stop reasons");

static uint8_t stop_of(enum unwind_stop why, int cut)
{
	if (why == UNWIND_BAD_READ && cut)
		return PROFILE_STOP_COPY;
	return why < UNWIND_STOP_COUNT ? (uint8_t)why : PROFILE_STOP_NO_CFI;
}

void attach_stack(struct attach_thread *t, uint64_t pc, int system, uint64_t abi,
		  const uint64_t *regs, const unsigned char *stack, uint64_t size, uint64_t dyn)
{
	struct attach_proc *p = t->proc;
	uintptr_t pcs[UNWIND_MAX_DEPTH];
	uint64_t frames[UNWIND_MAX_DEPTH];
	int n = 1;
	uint8_t stop = PROFILE_STOP_COPY;	/* no copy to walk: the pc alone */
	pcs[0] = (uintptr_t)pc;
#if NREGS
	if (abi == PERF_SAMPLE_REGS_ABI_64 && stack && dyn) {
		struct unwind_regs r = { .ip = (uintptr_t)pc, .sp = (uintptr_t)regs[AT_SP],
					 .bp = (uintptr_t)regs[AT_BP] };
#ifdef AT_LR
		r.lr = (uintptr_t)regs[AT_LR];
#endif
		struct unwind_mem m = { .lo = r.sp, .hi = r.sp + (uintptr_t)dyn, .copy = stack };
		enum unwind_stop why;
		int got = unwind_walk_in(set_of(p), &r, &m, pcs, UNWIND_MAX_DEPTH, &why);
		if (got > 0) {
			n = got;
			stop = stop_of(why, dyn == size);
		}
	}
#else
	(void)abi;
	(void)regs;
	(void)stack;
	(void)size;
	(void)dyn;
#endif
	for (int i = 0; i < n; i++)
		frames[i] = pcs[i];
	p->stacks.stop[stop]++;
	if (mstacks_put(&p->stacks, t->index, frames, (uint16_t)n, stop, 1, !!system) == 0)
		p->stacks.stacks++;
	else
		p->stacks.unplaced++;
}

void attach_unwind_free(struct attach_proc *p)
{
	if (!p->unwind)
		return;
	free(p->unwind->objects);
	free(p->unwind);
	p->unwind = NULL;
}

void attach_unwind_release(void)
{
	while (tables) {
		struct attach_table *t = tables;
		tables = t->next;
		if (t->obj.nrows)
			unwind_table_free(&t->obj);
		free(t);
	}
}
