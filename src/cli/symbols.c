/*
 * symbols.c - libdwfl for one object at a time (see symbols.h).
 *
 * Each object is reported to its own offline Dwfl at base 0, so that
 * module addresses are the object's link-time addresses, which is what
 * the model holds.  libdwfl finds separate debug files (debuglink,
 * /usr/lib/debug/.build-id) by itself.  An object is opened once per
 * report however many model objects stand for it (the same build ID, or
 * the same file, under several paths): the opens are shared, counted.
 */
#define _GNU_SOURCE
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <libiberty/demangle.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bidcache.h"
#include "cli.h"
#include "cxxname.h"
#include "debuginfod.h"
#include "srcpath.h"
#include "symbols.h"
#include "symtab.h"


struct name {
	char *raw, *demangled;
};

/* The functions of a compilation unit by address, for inlines. */
struct cu_fn {
	Dwarf_Addr low, high;
	Dwarf_Die die;
};

struct cu_index {
	Dwarf_Off offset;	/* of the CU's DIE */
	struct cu_fn *v;
	size_t n, cap;
};

/* A function of a perf map (/tmp/perf-PID.map): JIT code. */
struct jit_fn {
	uint64_t start, end;
	uint64_t maxend;	/* the highest end of this and every one before */
	size_t line;		/* a later line wins where two overlap */
	char *name;
};

/* A source file name as the line table gives it, and made canonical. */
struct canon {
	const char *raw;	/* libdw's, as long as the Dwfl */
	char *path;
};

struct symbols {
	/* An object of JIT or anonymous code: its perf map's functions, if
	   it has one; no Dwfl. */
	struct jit_fn *jit;
	size_t njit;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	const char *path;
	struct name *names;	/* demangled names handed out, kept: a hash
				   table of cap entries (raw NULL: empty) */
	size_t nnames, cap;
	/* The answer for each address asked already: a report asks again
	   for each process, each view, each stack (a hash table of capfound
	   entries, by addr; used 0: empty). */
	struct found_at {
		uint64_t addr;
		struct function f;
		int named, used;
	} *found;
	size_t nfound, capfound;
	uint64_t last_start, last_size;	/* the last function found */
	const char *last_name;
	struct symtab *tab;	/* made at the first lookup */
	struct cu_index *cus;	/* the functions of each CU, for inlines */
	size_t ncus;
	struct canon *canon;	/* a hash table of capcanon entries by raw */
	size_t ncanon, capcanon;
	/* What the object is, for sharing: its build ID, else its file. */
	uint8_t build_id[64];
	unsigned build_id_len;
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	unsigned refs;
	struct symbols *next;	/* the objects open */
};

static struct symbols *open_list;

/* An object open already that is o's: the same build ID, or without
 * one the same file unchanged. */
static struct symbols *shared(const struct object *o, const struct stat *st)
{
	for (struct symbols *s = open_list; s; s = s->next) {
		if (o->build_id_len ? s->build_id_len == o->build_id_len
					      && memcmp(s->build_id, o->build_id, o->build_id_len) == 0
				    : !s->build_id_len && s->dev == st->st_dev && s->ino == st->st_ino
					      && s->mtime.tv_sec == st->st_mtim.tv_sec
					      && s->mtime.tv_nsec == st->st_mtim.tv_nsec)
			return s;
	}
	return NULL;
}

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = debuginfod_find_debuginfo_cb,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &objfind_debuginfo,	/* the build-ID cache's too */
};

/* Does the name look mangled: C++ and Rust legacy (_Z), Rust v0 (_R), D (_D)? */
static int mangled(const char *name)
{
	return name[0] == '_' && (name[1] == 'Z' || name[1] == 'R' || name[1] == 'D');
}

/* libiberty's demangler, the one perf, c++filt and gdb use: it tells
 * Rust's legacy names (_ZN...17h<hash>E) from C++ ones, and leaves the
 * hashes out as perf does (no DMGL_VERBOSE). */
char *demangle(const char *name)
{
	if (mangled(name)) {
		char *d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
		if (d)
			return d;
	}
	return xstrdup(name);
}

static int jit_by_start(const void *a, const void *b)
{
	const struct jit_fn *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->line > y->line) - (x->line < y->line);
}

/* A perf map's lines, "START SIZE NAME" in hex, as perf reads them;
 * lines that are not are passed over. */
static void read_perf_map(struct symbols *s, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	char *line = NULL;
	size_t cap = 0, n = 0, lineno = 0;
	ssize_t len;
	while ((len = getline(&line, &cap, f)) > 0) {
		lineno++;
		if (line[len - 1] == '\n')
			line[--len] = 0;
		char *p = line, *end;
		uint64_t start = strtoull(p, &end, 16);
		if (end == p || *end != ' ')
			continue;
		p = end + 1;
		uint64_t size = strtoull(p, &end, 16);
		if (end == p || *end != ' ' || !size || start + size < start)
			continue;
		if (s->njit == n) {
			n = n ? 2 * n : 256;
			s->jit = xrealloc(s->jit, n * sizeof *s->jit);
		}
		s->jit[s->njit++] = (struct jit_fn){ start, start + size, 0, lineno, xstrdup(end + 1) };
	}
	free(line);
	fclose(f);
	if (!s->njit)
		return;
	qsort(s->jit, s->njit, sizeof *s->jit, jit_by_start);
	for (size_t i = 0; i < s->njit; i++)
		s->jit[i].maxend = i && s->jit[i - 1].maxend > s->jit[i].end ? s->jit[i - 1].maxend
									    : s->jit[i].end;
}

static int jit_function(struct symbols *s, uint64_t addr, struct function *f)
{
	size_t lo = 0, hi = s->njit;
	while (lo < hi) {	/* the first that starts above addr */
		size_t mid = lo + (hi - lo) / 2;
		if (s->jit[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	const struct jit_fn *best = NULL;
	for (size_t k = lo; k-- > 0 && s->jit[k].maxend > addr;)
		if (addr < s->jit[k].end && (!best || s->jit[k].line > best->line))
			best = &s->jit[k];
	if (!best)
		return 0;
	*f = (struct function){ best->name, best->start, best->end - best->start };
	return 1;
}

struct symbols *symbols_open(const struct object *o, char *why, size_t len)
{
	if (o->flags & OBJECT_ANON) {	/* never fails: at worst, no names */
		struct symbols *s = xmalloc(sizeof *s);
		memset(s, 0, sizeof *s);
		s->path = o->path;
		if (strcmp(o->path, MODEL_ANON_NAME) != 0)
			read_perf_map(s, o->path);
		return s;
	}
	/* The file as profiled: perhaps --exe's, --symfs's or the cache's copy. */
	char file[PATH_MAX];
	const char *path = objfind_path(o, file, sizeof file, why, len);
	struct stat st;
	if (!path)
		return NULL;
	if (stat(path, &st) != 0) {
		snprintf(why, len, "%s: cannot read: %m (it was profiled there)", path);
		return NULL;
	}
	struct symbols *s = shared(o, &st);
	if (s) {
		s->refs++;
		return s;
	}
	s = calloc(1, sizeof *s);
	if (!s) {
		snprintf(why, len, "out of memory");
		return NULL;
	}
	s->path = o->path;
	s->dwfl = dwfl_begin(&callbacks);
	const char *base = strrchr(o->path, '/');
	if (s->dwfl)
		s->mod = dwfl_report_elf(s->dwfl, base ? base + 1 : o->path, path, -1, 0, false);
	if (!s->mod) {
		snprintf(why, len, "%s: not an ELF file libdwfl can read: %s", path,
			 dwfl_errmsg(-1));
		symbols_close(s);
		return NULL;
	}
	dwfl_report_end(s->dwfl, NULL, NULL);
	const unsigned char *bits;
	GElf_Addr vaddr;
	int n = dwfl_module_build_id(s->mod, &bits, &vaddr);
	if (o->build_id_len && (n != (int)o->build_id_len || memcmp(bits, o->build_id, (size_t)n))) {
		snprintf(why, len, "%s: changed since the run (its build ID differs)", o->path);
		symbols_close(s);
		return NULL;
	}
	memcpy(s->build_id, o->build_id, o->build_id_len);
	s->build_id_len = o->build_id_len;
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	s->mtime = st.st_mtim;
	s->refs = 1;
	s->next = open_list;
	open_list = s;
	return s;
}

void symbols_close(struct symbols *s)
{
	if (!s || (s->refs && --s->refs))
		return;
	for (struct symbols **p = &open_list; *p; p = &(*p)->next)
		if (*p == s) {
			*p = s->next;
			break;
		}
	if (!open_list)
		debuginfod_done();
	for (size_t i = 0; i < s->cap; i++) {
		free(s->names[i].raw);
		free(s->names[i].demangled);
	}
	free(s->names);
	free(s->found);
	symtab_free(s->tab);
	for (size_t i = 0; i < s->njit; i++)
		free(s->jit[i].name);
	free(s->jit);
	for (size_t i = 0; i < s->capcanon; i++)
		free(s->canon[i].path);
	free(s->canon);
	for (size_t i = 0; i < s->ncus; i++)
		free(s->cus[i].v);
	free(s->cus);
	if (s->dwfl)
		dwfl_end(s->dwfl);
	free(s);
}

const char *symbols_path(const struct symbols *s)
{
	return s->path;
}

/* The demangled form of raw, made once. */
static size_t name_hash(const char *raw, size_t cap)
{
	uint64_t h = 1469598103934665603ull;
	for (; *raw; raw++)
		h = (h ^ (unsigned char)*raw) * 1099511628211ull;
	return (size_t)(h ^ h >> 32) & (cap - 1);
}

/* The demangled form of raw, made once (a C++ program of a hundred
 * thousand functions asks for every one of them). */
static void names_room(struct symbols *s)
{
	if (2 * (s->nnames + 1) > s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 256;
		struct name *t = xmalloc(cap * sizeof *t);
		memset(t, 0, cap * sizeof *t);
		for (size_t i = 0; i < s->cap; i++) {
			if (!s->names[i].raw)
				continue;
			size_t k = name_hash(s->names[i].raw, cap);
			while (t[k].raw)
				k = (k + 1) & (cap - 1);
			t[k] = s->names[i];
		}
		free(s->names);
		s->names = t;
		s->cap = cap;
	}
}

static const char *pretty(struct symbols *s, const char *raw)
{
	if (!mangled(raw))
		return raw;	/* libdwfl keeps it as long as the Dwfl */
	names_room(s);
	size_t k = name_hash(raw, s->cap);
	for (; s->names[k].raw; k = (k + 1) & (s->cap - 1))
		if (strcmp(s->names[k].raw, raw) == 0)
			return s->names[k].demangled;
	s->names[k] = (struct name){ xstrdup(raw), demangle(raw) };
	s->nnames++;
	return s->names[k].demangled;
}

/*
 * Arm's mapping symbols ($x where instructions start, $d where data
 * does, $x.N ...) are no functions: on arm64 they are the only symbols
 * of the .plt, where -pg programs spend time calling _mcount.  Such an
 * address is named after its section, "[plt]", as gprof's _init would
 * mislead; anywhere else it is unknown.
 */
static int mapping_symbol(const char *name)
{
	return name[0] == '$' && name[1] && strchr("xdat", name[1])
	       && (name[2] == '\0' || name[2] == '.');
}

/* The section of addr, if it is one of procedure linkage table stubs:
 * "[plt]" (gprof's _init, or the function before it, would mislead). */
static int plt_section(struct symbols *s, uint64_t addr, struct function *f)
{
	Dwarf_Addr a = addr, bias;
	Elf_Scn *scn = dwfl_module_address_section(s->mod, &a, &bias);
	Elf *elf = dwfl_module_getelf(s->mod, &bias);
	size_t strndx;
	GElf_Shdr shdr;
	if (!scn || !elf || elf_getshdrstrndx(elf, &strndx) != 0 || !gelf_getshdr(scn, &shdr))
		return 0;
	const char *name = elf_strptr(elf, strndx, shdr.sh_name);
	if (!name || (strncmp(name, ".plt", 4) != 0 && strcmp(name, ".iplt") != 0))
		return 0;
	*f = (struct function){ "[plt]", shdr.sh_addr + bias, shdr.sh_size };
	return 1;
}

/* A name made here (OBJECT+0xSTART), kept as long as s. */
static const char *made_name(struct symbols *s, const char *name)
{
	names_room(s);
	size_t k = name_hash(name, s->cap);
	for (; s->names[k].raw; k = (k + 1) & (s->cap - 1))
		if (strcmp(s->names[k].raw, name) == 0)
			return s->names[k].demangled;
	s->names[k] = (struct name){ xstrdup(name), xstrdup(name) };
	s->nnames++;
	return s->names[k].demangled;
}

/* A function of the call frame information without a symbol, named by
 * its object and start as perf and pprof name such addresses. */
static const char *frame_name(struct symbols *s, uint64_t start)
{
	const char *base = strrchr(s->path, '/');
	char buf[512];
	snprintf(buf, sizeof buf, "%s+0x%" PRIx64, base ? base + 1 : s->path, start);
	return made_name(s, buf);
}

/*
 * The symbol libdwfl names if it has a size; where none has, the
 * procedure linkage table, then the function range of the call frame
 * information (named after a symbol without a size inside it at its
 * start or later, else OBJECT+0xSTART), then a symbol without a size
 * (up to addr), which libdwfl takes only past the end of every sized one.
 */
static int function_at(struct symbols *s, uint64_t addr, struct function *f);

static size_t addr_hash(uint64_t addr, size_t cap)
{
	uint64_t h = addr * 0x9e3779b97f4a7c15ull;
	return (size_t)(h ^ h >> 29) & (cap - 1);
}

int symbols_function(struct symbols *s, uint64_t addr, struct function *f)
{
	if (!s->mod)
		return jit_function(s, addr, f);
	if (2 * (s->nfound + 1) > s->capfound) {
		size_t cap = s->capfound ? 2 * s->capfound : 1024;
		struct found_at *t = xmalloc(cap * sizeof *t);
		memset(t, 0, cap * sizeof *t);
		for (size_t i = 0; i < s->capfound; i++) {
			if (!s->found[i].used)
				continue;
			size_t k = addr_hash(s->found[i].addr, cap);
			while (t[k].used)
				k = (k + 1) & (cap - 1);
			t[k] = s->found[i];
		}
		free(s->found);
		s->found = t;
		s->capfound = cap;
	}
	size_t k = addr_hash(addr, s->capfound);
	for (; s->found[k].used; k = (k + 1) & (s->capfound - 1))
		if (s->found[k].addr == addr) {
			*f = s->found[k].f;
			return s->found[k].named;
		}
	int named = function_at(s, addr, f);
	s->found[k] = (struct found_at){ addr, named ? *f : (struct function){ NULL, 0, 0 },
					 named, 1 };
	s->nfound++;
	return named;
}

static int function_at(struct symbols *s, uint64_t addr, struct function *f)
{
	if (s->last_name && addr >= s->last_start && addr - s->last_start < s->last_size) {
		*f = (struct function){ s->last_name, s->last_start, s->last_size };
		return 1;
	}
	if (!s->tab)
		s->tab = symtab_make(s->mod);
	struct symhit h;
	int named = symtab_symbol(s->tab, addr, &h);
	uint64_t start, end;
	if (named && mapping_symbol(h.raw))
		named = 0;
	if (named && h.size) {
		*f = (struct function){ pretty(s, h.raw), h.start, h.size };
	} else if (plt_section(s, addr, f)) {
	} else if (symtab_frame(s->tab, addr, &start, &end)) {
		/* Not kept for the next lookup: a symbol may start inside the
		   frame after addr (glibc's __restore_rt starts a byte into
		   its own unwind entry), and the name of an address must not
		   depend on which address was looked up before it (a run's
		   folded stacks named it one way alone, another merged). */
		if (named && h.start >= start)
			*f = (struct function){ pretty(s, h.raw), h.start, end - h.start };
		else
			*f = (struct function){ frame_name(s, start), start, end - start };
		return 1;
	} else if (named) {	/* not kept: its size is up to addr */
		*f = (struct function){ pretty(s, h.raw), h.start, addr - h.start + 1 };
		return 1;
	} else {
		return 0;
	}
	s->last_name = f->name;
	s->last_start = f->start;
	s->last_size = f->size;
	return 1;
}

static void found(struct function **out, size_t *n, const char *name, uint64_t start,
		  uint64_t size)
{
	for (size_t i = 0; i < *n; i++)
		if ((*out)[i].start == start)
			return;	/* an alias of one found */
	if ((*n & (*n - 1)) == 0)
		*out = xrealloc(*out, (*n ? 2 * *n : 1) * sizeof **out);
	(*out)[(*n)++] = (struct function){ name, start, size };
}

size_t symbols_find_all(struct symbols *s, const char *want, struct function **out)
{
	size_t n = 0;
	*out = NULL;
	for (size_t i = 0; i < s->njit; i++)
		if (strcmp(s->jit[i].name, want) == 0)
			found(out, &n, s->jit[i].name, s->jit[i].start,
			      s->jit[i].end - s->jit[i].start);
	if (!s->mod)
		return n;
	/* A function without a symbol, by the name it is shown under. */
	const char *plus = strrchr(want, '+');
	if (plus && strncmp(plus, "+0x", 3) == 0) {
		char *end;
		uint64_t start = strtoull(plus + 3, &end, 16);
		struct function f;
		if (end > plus + 3 && !*end && symbols_function(s, start, &f) && f.start == start
		    && strcmp(f.name, want) == 0)
			found(out, &n, f.name, f.start, f.size);
	}
	int nsyms = dwfl_module_getsymtab(s->mod);
	for (int i = 0; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(s->mod, i, &sym, &addr, NULL, NULL, NULL);
		if (!name || GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF)
			continue;
		const char *p = pretty(s, name);
		if (strcmp(name, want) == 0 || cxxname_matches(p, want))
			found(out, &n, p, addr, sym.st_size);
	}
	return n;
}

static size_t ptr_hash(const void *p, size_t cap)
{
	uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 32) & (cap - 1);
}

/* The canonical name of a line table's file name (srcpath.h), made once
 * for each: a line table names its files once, and a million bins ask. */
static const char *canonical(struct symbols *s, const char *raw, Dwfl_Line *l)
{
	if (2 * (s->ncanon + 1) > s->capcanon) {
		size_t cap = s->capcanon ? 2 * s->capcanon : 64;
		struct canon *t = xmalloc(cap * sizeof *t);
		memset(t, 0, cap * sizeof *t);
		for (size_t i = 0; i < s->capcanon; i++) {
			if (!s->canon[i].raw)
				continue;
			size_t k = ptr_hash(s->canon[i].raw, cap);
			while (t[k].raw)
				k = (k + 1) & (cap - 1);
			t[k] = s->canon[i];
		}
		free(s->canon);
		s->canon = t;
		s->capcanon = cap;
	}
	size_t k = ptr_hash(raw, s->capcanon);
	for (; s->canon[k].raw; k = (k + 1) & (s->capcanon - 1))
		if (s->canon[k].raw == raw)
			return s->canon[k].path;
	s->canon[k] = (struct canon){ raw, srcpath_canonical(dwfl_line_comp_dir(l), raw) };
	s->ncanon++;
	return s->canon[k].path;
}

int symbols_line(struct symbols *s, uint64_t addr, const char **file, int *line)
{
	if (!s->mod)
		return 0;
	Dwfl_Line *l = dwfl_module_getsrc(s->mod, addr);
	if (!l)
		return 0;
	Dwarf_Addr a;
	const char *src = dwfl_lineinfo(l, &a, line, NULL, NULL, NULL);
	if (!src)
		return 0;
	*file = canonical(s, src, l);
	return 1;
}

const char *symbols_comp_dir(struct symbols *s, uint64_t addr)
{
	if (!s->mod)
		return NULL;
	Dwfl_Line *l = dwfl_module_getsrc(s->mod, addr);
	return l ? dwfl_line_comp_dir(l) : NULL;
}

static int by_low(const void *a, const void *b)
{
	const struct cu_fn *x = a, *y = b;
	return (x->low > y->low) - (x->low < y->low);
}

/* Every function with code in scope (namespaces and classes included). */
static void index_scope(struct cu_index *ix, Dwarf_Die *scope)
{
	Dwarf_Die child;
	if (dwarf_child(scope, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		if (tag == DW_TAG_subprogram) {
			Dwarf_Addr base, low, high;
			for (ptrdiff_t off = 0; (off = dwarf_ranges(&child, off, &base, &low, &high)) > 0;) {
				if (ix->n == ix->cap) {
					ix->cap = ix->cap ? 2 * ix->cap : 64;
					ix->v = xrealloc(ix->v, ix->cap * sizeof *ix->v);
				}
				ix->v[ix->n++] = (struct cu_fn){ low, high, child };
			}
		} else if (tag == DW_TAG_namespace || tag == DW_TAG_class_type
			   || tag == DW_TAG_structure_type || tag == DW_TAG_union_type
			   || tag == DW_TAG_module) {
			index_scope(ix, &child);
		}
	} while (dwarf_siblingof(&child, &child) == 0);
}

static struct cu_index *cu_index(struct symbols *s, Dwarf_Die *cu)
{
	Dwarf_Off off = dwarf_dieoffset(cu);
	for (size_t i = s->ncus; i-- > 0;)	/* the last one made first */
		if (s->cus[i].offset == off)
			return &s->cus[i];
	s->cus = xrealloc(s->cus, (s->ncus + 1) * sizeof *s->cus);
	struct cu_index *ix = &s->cus[s->ncus++];
	*ix = (struct cu_index){ off, NULL, 0, 0 };
	index_scope(ix, cu);
	qsort(ix->v, ix->n, sizeof *ix->v, by_low);
	return ix;
}

static const char *inlined_name(struct symbols *s, Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *link = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	return link ? pretty(s, link) : dwarf_diename(die);
}

/* The innermost inlined subroutine under die that holds a. */
static const char *innermost(struct symbols *s, Dwarf_Die *die, Dwarf_Addr a)
{
	const char *name = NULL;
	Dwarf_Die cur = *die, child;
	while (dwarf_child(&cur, &child) == 0) {
		int found = 0;
		do {
			if (dwarf_haspc(&child, a) == 1) {
				if (dwarf_tag(&child) == DW_TAG_inlined_subroutine)
					name = inlined_name(s, &child);
				cur = child;
				found = 1;
				break;
			}
		} while (dwarf_siblingof(&child, &child) == 0);
		if (!found)
			break;
	}
	return name;
}

/* dwarf_getscopes walks the CU from its first function each time: a
 * CU of ten thousand functions made every lookup ten thousand steps.
 * The functions of each CU are indexed once instead, and only the one
 * that holds addr is walked. */
const char *symbols_inlined(struct symbols *s, uint64_t addr)
{
	if (!s->mod)
		return NULL;
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(s->mod, addr, &bias);
	if (!cu)
		return NULL;
	Dwarf_Addr a = addr - bias;
	struct cu_index *ix = cu_index(s, cu);
	size_t lo = 0, hi = ix->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ix->v[mid].low <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && a < ix->v[lo - 1].high)
		return innermost(s, &ix->v[lo - 1].die, a);
	/* Not in an indexed function (code in a partial unit, say): the
	   general walk. */
	Dwarf_Die *scopes = NULL;
	int n = dwarf_getscopes(cu, a, &scopes);
	const char *name = NULL;
	for (int i = 0; i < n && !name; i++)
		if (dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine)
			name = inlined_name(s, &scopes[i]);
	free(scopes);
	return name;
}

/* The file of an inlined subroutine's call, by its number in the CU's
 * file table. */
static const char *call_file(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	Dwarf_Word n;
	Dwarf_Die cu;
	Dwarf_Files *files;
	size_t nfiles;
	if (dwarf_formudata(dwarf_attr_integrate(die, DW_AT_call_file, &attr), &n) != 0
	    || !dwarf_diecu(die, &cu, NULL, NULL) || dwarf_getsrcfiles(&cu, &files, &nfiles) != 0
	    || n >= nfiles)
		return NULL;
	return dwarf_filesrc(files, n, NULL, NULL);
}

size_t symbols_inline_chain(struct symbols *s, uint64_t addr, struct inline_frame *out,
			    size_t max)
{
	if (!s->mod || !max)
		return 0;
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(s->mod, addr, &bias);
	if (!cu)
		return 0;
	/* Down the concrete tree of the indexed function that holds addr,
	   as innermost() walks it: dwarf_getscopes goes on, past the
	   innermost inlined function, with the scopes of its abstract
	   definition, so that a function inlined into one itself inlined
	   would have the outer function's caller as its own. */
	Dwarf_Addr a = addr - bias;
	struct cu_index *ix = cu_index(s, cu);
	size_t lo = 0, hi = ix->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ix->v[mid].low <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	Dwarf_Die chain[64];
	int n = 0;
	Dwarf_Die *scopes = NULL;
	if (lo && a < ix->v[lo - 1].high) {
		Dwarf_Die cur = ix->v[lo - 1].die, child;
		while (dwarf_child(&cur, &child) == 0) {
			int found = 0;
			do {
				if (dwarf_haspc(&child, a) == 1) {
					if (dwarf_tag(&child) == DW_TAG_inlined_subroutine && n < 64)
						chain[n++] = child;
					cur = child;
					found = 1;
					break;
				}
			} while (dwarf_siblingof(&child, &child) == 0);
			if (!found)
				break;
		}
	} else {	/* not indexed: the innermost alone, as getscopes gives it */
		int ns = dwarf_getscopes(cu, a, &scopes);
		for (int i = 0; i < ns && !n; i++)
			if (dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine)
				chain[n++] = scopes[i];
	}
	size_t k = 0;
	for (int i = n - 1; i >= 0 && k < max; i--) {	/* innermost first */
		Dwarf_Attribute attr;
		Dwarf_Word line = 0;
		dwarf_formudata(dwarf_attr(&chain[i], DW_AT_call_line, &attr), &line);
		out[k++] = (struct inline_frame){ inlined_name(s, &chain[i]), call_file(&chain[i]),
						  line <= 0x7fffffff ? (int)line : 0 };
	}
	free(scopes);
	return k;
}
