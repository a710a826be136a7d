/*
 * rows.c - the model's bins given to functions, lines or objects, and a
 * function's annotated disassembly (see rows.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "callgraph.h"
#include "bidcache.h"
#include "cli.h"
#include "rows.h"
#include "stacks.h"

const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* Bins come in address order, so the row of a bin is almost always one
 * of the last few made: look there, and let combine() merge the rest. */
static struct row *row_for(struct rows *r, const struct object *o, const char *name,
			   const char *function, uint64_t start)
{
	for (size_t i = r->n; i-- > 0 && i + 64 >= r->n;) {
		struct row *x = &r->v[i];
		if (x->object == o && strcmp(x->name, name) == 0
		    && (!function || !x->function || strcmp(x->function, function) == 0))
			return x;
	}
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 256;
		r->v = xrealloc(r->v, r->cap * sizeof *r->v);
	}
	r->v[r->n] = (struct row){ xstrdup(name), function ? xstrdup(function) : NULL, o, start,
				   0, 0, 0, 0.0 };
	return &r->v[r->n++];
}

static int by_count(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	if (x->calls != y->calls)
		return x->calls < y->calls ? 1 : -1;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->start > y->start) - (x->start < y->start);
}

static int same_key(const struct row *x, const struct row *y)
{
	return x->object == y->object && strcmp(x->name, y->name) == 0
	       && (x->function ? y->function && strcmp(x->function, y->function) == 0
			       : !y->function);
}

/* Rows of one key together, the hottest of each first (ties: the
 * lowest start), so that the row kept is the one by_count puts first. */
static int by_key(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	if (x->object != y->object)
		return (uintptr_t)x->object < (uintptr_t)y->object ? -1 : 1;
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	if (!x->function != !y->function)
		return x->function ? 1 : -1;
	if (x->function && (c = strcmp(x->function, y->function)))
		return c;
	return by_count(a, b);
}

/* Merge the rows of the same key that row_for's window missed: sorted
 * by key, they are neighbours (n log n for a million lines). */
static void combine(struct rows *r)
{
	if (!r->n)
		return;
	qsort(r->v, r->n, sizeof *r->v, by_key);
	size_t k = 0;
	for (size_t j = 1; j < r->n; j++) {
		if (same_key(&r->v[k], &r->v[j])) {
			r->v[k].count += r->v[j].count;
			r->v[k].system += r->v[j].system;
			free(r->v[j].name);
			free(r->v[j].function);
		} else {
			r->v[++k] = r->v[j];
		}
	}
	r->n = k + 1;
	qsort(r->v, r->n, sizeof *r->v, by_count);
	while (r->n && r->v[r->n - 1].count == 0) {
		r->n--;
		free(r->v[r->n].name);
		free(r->v[r->n].function);
	}
}

static int has_arcs(const struct model *m, const struct object *o)
{
	for (size_t i = 0; i < m->narcs; i++)
		if (m->arcs[i].to == o || m->arcs[i].from == o)
			return 1;
	return 0;
}

const char *rows_function(const struct object *o, struct symbols *s, uint64_t addr,
			  int inlines, uint64_t *start)
{
	struct function f;
	const char *name;
	*start = 0;
	if (s && symbols_function(s, addr, &f)) {
		name = f.name;
		*start = f.start;
	} else {
		name = (o->flags & OBJECT_ANON) ? MODEL_ANON_NAME
		       : (o->flags & 4 /* PROFILE_SEG_VDSO */) ? "[vdso]" : "[unknown]";
	}
	if (inlines && s) {
		const char *in = symbols_inlined(s, addr);
		if (in)
			name = in;
	}
	return name;
}

void rows_line(struct symbols *s, uint64_t addr, char *buf, size_t len)
{
	const char *file;
	int line;
	if (s && symbols_line(s, addr, &file, &line))
		snprintf(buf, len, "%s:%d", file, line);
	else
		snprintf(buf, len, "??");
}

int rows_split_line(const char *name, char *buf, size_t len)
{
	const char *colon = strrchr(name, ':');
	char *end;
	long line = colon ? strtol(colon + 1, &end, 10) : 0;
	if (!colon || colon == name || *end || line <= 0 || line > INT_MAX) {
		snprintf(buf, len, "%s", name);
		return 0;
	}
	snprintf(buf, len, "%.*s", (int)(colon - name), name);
	return (int)line;
}

int rows_open_symbols(const struct model *m, struct symbols **syms)
{
	for (size_t i = 0; i < m->nobjects; i++) {
		const struct object *o = &m->objects[i];
		syms[i] = NULL;
		if ((!o->total && !has_arcs(m, o)) || (o->flags & 4 /* PROFILE_SEG_VDSO */))
			continue;
		char why[1024];
		syms[i] = symbols_open(o, why, sizeof why);
		if (!syms[i]) {
			error_line("%s", why);
			return -1;
		}
	}
	stacks_open_symbols(m, syms);
	return 0;
}

void rows_collect(const struct model *m, struct symbols **syms, enum by by, int inlines,
		  struct rows *r)
{
	char buf[4096];
	for (size_t i = 0; i < m->nobjects; i++) {
		const struct object *o = &m->objects[i];
		if (!o->total)
			continue;
		if (by == BY_OBJECT) {
			struct row *x = row_for(r, o, o->path, NULL, 0);
			x->count += o->total;
			for (size_t k = 0; k < o->nbins; k++)
				x->system += o->bins[k].system;
			continue;
		}
		for (size_t k = 0; k < o->nbins; k++) {
			const struct bin *b = &o->bins[k];
			uint64_t start;
			const char *fname = rows_function(o, syms[i], b->first, inlines, &start);
			if (by == BY_LINE)
				rows_line(syms[i], b->first, buf, sizeof buf);
			struct row *x = row_for(r, o, by == BY_LINE ? buf : fname,
						by == BY_LINE ? fname : NULL, start);
			x->count += b->count;
			x->system += b->system;
		}
	}
	combine(r);
}

static int by_object_name(const void *a, const void *b, void *arg)
{
	const struct row *v = arg;
	const struct row *x = &v[*(const size_t *)a], *y = &v[*(const size_t *)b];
	if (x->object != y->object)
		return (uintptr_t)x->object < (uintptr_t)y->object ? -1 : 1;
	return strcmp(x->name, y->name);
}

void rows_calls(struct rows *r, const struct callgraph *g)
{
	size_t n = r->n, *index = xmalloc((n + 1) * sizeof *index);
	for (size_t i = 0; i < n; i++)
		index[i] = i;
	qsort_r(index, n, sizeof *index, by_object_name, r->v);
	for (size_t k = 0; k < g->nfunctions; k++) {
		const struct cg_node *f = &g->nodes[k];
		if (!f->calls && !f->children)
			continue;
		/* The row of f's object and name, by bisection. */
		size_t lo = 0, hi = n;
		struct row *x = NULL;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			struct row *y = &r->v[index[mid]];
			int c = y->object != f->object
					? ((uintptr_t)y->object < (uintptr_t)f->object ? -1 : 1)
					: strcmp(y->name, f->name);
			if (!c) {
				x = y;
				break;
			}
			if (c < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (!x) {	/* called, never sampled */
			x = row_for(r, f->object, f->name, NULL, f->start);
		}
		x->calls += f->calls;
		x->children += f->children;
	}
	free(index);
	if (r->n > n)
		qsort(r->v + n, r->n - n, sizeof *r->v, by_count);
}

void rows_free(struct rows *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].name);
		free(r->v[i].function);
	}
	free(r->v);
	memset(r, 0, sizeof *r);
}

FILE *disasm_popen(const struct object *o, const char *name, uint64_t start, uint64_t end,
		   int quiet)
{
	if (o->flags & OBJECT_ANON) {
		if (!quiet)
			error_line("%s: JIT or anonymous code: no file to disassemble it from",
				   name);
		return NULL;
	}
	/* The file as profiled: perhaps --exe, --symfs's or the cache's copy. */
	char file[PATH_MAX], why[PATH_MAX + 256];
	const char *path = objfind_path(o, file, sizeof file, why, sizeof why);
	if (!path)
		path = o->path;
	if (strchr(path, '\'')) {
		if (!quiet)
			error_line("%s: a quote in the name: cannot annotate", path);
		return NULL;
	}
	/* objdump reads the whole section (48 MB of libLLVM's text) into
	   memory it allocates each run: in huge pages, a quarter fewer page
	   faults (21800 to 4800 there) and of its CPU time.  Glibc before
	   2.35 ignores the tunable. */
	char cmd[8192];
	snprintf(cmd, sizeof cmd,
		 "GLIBC_TUNABLES=${GLIBC_TUNABLES:+$GLIBC_TUNABLES:}glibc.malloc.hugetlb=1 "
		 "objdump -d -l -C --no-show-raw-insn --start-address=0x%" PRIx64
		 " --stop-address=0x%" PRIx64 " '%s' 2>&1", start, end, path);
	FILE *p = popen(cmd, "r");
	if (!p && !quiet)
		error_line("cannot run objdump: %s", strerror(errno));
	return p;
}

FILE *disasm_begin(const struct object *o, const struct function *f, int quiet)
{
	return disasm_popen(o, f->name, f->start, f->start + (f->size ? f->size : 1), quiet);
}

int disasm_read(FILE *p, struct disasm *d)
{
	memset(d, 0, sizeof *d);
	if (!p)
		return -1;
	/* Read every instruction's address first, to give each bin to the
	 * instruction that holds its last byte. */
	char line[4096];
	int started = 0;
	size_t cap = 0;
	while (fgets(line, sizeof line, p)) {
		if (!started) {	/* skip objdump's banner */
			if (strstr(line, ">:"))
				started = 1;
			continue;
		}
		char *colon;
		uint64_t a = UINT64_MAX;
		if (strchr(line, '\t') && (colon = strchr(line, ':'))) {
			char *endp;
			uint64_t v = strtoull(line, &endp, 16);
			if (endp == colon)
				a = v;
		}
		if (d->n == cap) {
			cap = cap ? cap * 2 : 64;
			d->lines = xrealloc(d->lines, cap * sizeof *d->lines);
			d->addrs = xrealloc(d->addrs, cap * sizeof *d->addrs);
		}
		d->lines[d->n] = xstrdup(line);
		d->addrs[d->n++] = a;
	}
	int st = pclose(p);
	if (st != 0 || !started) {
		disasm_free(d);
		return -1;
	}
	return 0;
}

int disasm_end(FILE *p, const struct object *o, const struct function *f, struct disasm *d,
	       int quiet)
{
	int had = p != NULL;
	if (disasm_read(p, d) != 0) {
		if (had && !quiet)
			error_line("objdump could not disassemble %s in %s", f->name, o->path);
		return -1;
	}
	disasm_count(o, f, d);
	return 0;
}

int disasm_function(const struct object *o, const struct function *f, struct disasm *d, int quiet)
{
	return disasm_end(disasm_begin(o, f, quiet), o, f, d, quiet);
}

/* The instruction that holds byte last: of those at or before it, the
   one at the highest address (the first such line), or SIZE_MAX.  ins:
   the lines that are instructions, by address if sorted. */
static size_t holder(const struct disasm *d, const size_t *ins, size_t nins, int sorted,
		     uint64_t last)
{
	size_t best = SIZE_MAX;
	if (!sorted) {
		for (size_t j = 0; j < d->n; j++)
			if (d->addrs[j] != UINT64_MAX && d->addrs[j] <= last
			    && (best == SIZE_MAX || d->addrs[j] > d->addrs[best]))
				best = j;
		return best;
	}
	size_t lo = 0, hi = nins;	/* the first instruction past last */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->addrs[ins[mid]] <= last)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return SIZE_MAX;
	while (lo > 1 && d->addrs[ins[lo - 2]] == d->addrs[ins[lo - 1]])
		lo--;
	return ins[lo - 1];
}

void disasm_count(const struct object *o, const struct function *f, struct disasm *d)
{
	uint64_t end = f->start + (f->size ? f->size : 1);
	/* o's bins are sorted by first address (model_finish): those of f
	   are found by halving, not by a walk over all of them, and each
	   bin's instruction as well (a process's view of libLLVM has tens of
	   thousands of bins, the page 40 functions a view). */
	size_t lo = 0, hi = o->nbins;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (o->bins[mid].first < f->start)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t *ins = xmalloc((d->n ? d->n : 1) * sizeof *ins), nins = 0;
	int sorted = 1;
	for (size_t j = 0; j < d->n; j++)
		if (d->addrs[j] != UINT64_MAX) {
			if (nins && d->addrs[j] < d->addrs[ins[nins - 1]])
				sorted = 0;
			ins[nins++] = j;
		}
	d->samples = 0;
	free(d->counts);
	d->counts = xmalloc((d->n ? d->n : 1) * sizeof *d->counts);
	memset(d->counts, 0, (d->n ? d->n : 1) * sizeof *d->counts);
	for (size_t k = lo; k < o->nbins && o->bins[k].first < end; k++) {
		const struct bin *b = &o->bins[k];
		d->samples += b->count;
		size_t best = holder(d, ins, nins, sorted, b->last);
		if (best != SIZE_MAX)
			d->counts[best] += b->count;
	}
	free(ins);
}

void disasm_free(struct disasm *d)
{
	for (size_t j = 0; j < d->n; j++)
		free(d->lines[j]);
	free(d->lines);
	free(d->addrs);
	free(d->counts);
	memset(d, 0, sizeof *d);
}
