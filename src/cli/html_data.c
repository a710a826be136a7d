/*
 * html_data.c - the data of the HTML page (see html.h), as JSON that
 * page.js reads.
 *
 * Every table is made from the rows the text report prints (rows.c):
 * the functions, the lines of each function (its source view, so the
 * page's hottest line is the one report --lines names), the objects.
 * The bins are then given to those functions one by one through the
 * same rows_function(), for the addresses and the inlined functions.
 *
 * Compact for a hundred thousand functions and a million addresses:
 * columns, not one object per row; every name once, in a string table;
 * addresses as differences from the previous one.  Source text is
 * embedded only around the lines that have samples, disassembly only
 * for the hottest functions that have no source (MAX_DISASM).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "callgraph.h"
#include "cli.h"
#include "html.h"
#include "jsonout.h"
#include "rows.h"
#include "stackprint.h"
#include "stacks.h"

#define MAX_DISASM 40			/* functions disassembled per process */
#define MAX_OBJDUMP MAX_DISASM		/* objdump runs per page: the view of all processes has its hottest */
#define MAX_SOURCE (8u << 20)		/* bytes of source text in a page */
#define MAX_SOURCE_LINES 100000		/* lines asked for, hottest functions first */
#define CONTEXT 4			/* source lines embedded around a hot one:
					   page.js shows 3, and gaps of 2 */

/* ---- A hash map of (pointer, string, string) to an index. ---- */

struct hent {
	const void *o;
	const char *a, *b;
	size_t val;
	int used;
};

struct hmap {
	struct hent *v;
	size_t cap, n;
};

static uint64_t hash(const void *o, const char *a, const char *b)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)(uintptr_t)o;
	for (; *a; a++)
		h = (h ^ (unsigned char)*a) * 1099511628211ull;
	for (; b && *b; b++)
		h = (h ^ (unsigned char)*b) * 1099511628211ull;
	return h ^ h >> 29;
}

static int same(const struct hent *e, const void *o, const char *a, const char *b)
{
	return e->o == o && strcmp(e->a, a) == 0 && (b ? e->b && strcmp(e->b, b) == 0 : !e->b);
}

/* The entry of the key, made (val SIZE_MAX) if new.  The key's strings
 * must outlive the map. */
static struct hent *hmap_at(struct hmap *h, const void *o, const char *a, const char *b)
{
	if (2 * (h->n + 1) > h->cap) {
		struct hmap g = { NULL, h->cap ? 2 * h->cap : 1024, 0 };
		g.v = xmalloc(g.cap * sizeof *g.v);
		memset(g.v, 0, g.cap * sizeof *g.v);
		for (size_t i = 0; i < h->cap; i++)
			if (h->v[i].used)
				*hmap_at(&g, h->v[i].o, h->v[i].a, h->v[i].b) = h->v[i];
		free(h->v);
		*h = g;
	}
	size_t i = hash(o, a, b) & (h->cap - 1);
	while (h->v[i].used && !same(&h->v[i], o, a, b))
		i = (i + 1) & (h->cap - 1);
	if (!h->v[i].used) {
		h->v[i] = (struct hent){ o, a, b, SIZE_MAX, 1 };
		h->n++;
	}
	return &h->v[i];
}

static size_t hmap_get(const struct hmap *h, const void *o, const char *a, const char *b)
{
	if (!h->cap)
		return SIZE_MAX;
	size_t i = hash(o, a, b) & (h->cap - 1);
	for (; h->v[i].used; i = (i + 1) & (h->cap - 1))
		if (same(&h->v[i], o, a, b))
			return h->v[i].val;
	return SIZE_MAX;
}

/* ---- What the processes share: strings, source files. ---- */

struct interval {
	int first, last;
};

struct srcfile {
	char *path;		/* as the line rows name it */
	char *real;		/* where it is read from, if not path */
	int readable;
	struct interval *want;	/* lines to embed */
	size_t nwant;
};

struct page {
	char **strings;
	size_t nstrings;
	struct hmap strmap;
	struct srcfile *files;
	size_t nfiles;
	struct hmap filemap;
	size_t wanted;		/* source lines asked for so far */
	int cut;		/* some were not, for MAX_SOURCE_LINES */
	/* Functions disassembled, for every process that has them: an
	   object's symbols are shared by the processes (symbols.c). */
	struct dis_done {
		const struct symbols *syms;
		uint64_t start;
		int ok;
		struct disasm d;
	} *dis;
	size_t ndis;
};

struct page *page_new(void)
{
	struct page *pg = xmalloc(sizeof *pg);
	memset(pg, 0, sizeof *pg);
	return pg;
}

void page_free(struct page *pg)
{
	for (size_t i = 0; i < pg->nstrings; i++)
		free(pg->strings[i]);
	free(pg->strings);
	free(pg->strmap.v);
	for (size_t i = 0; i < pg->nfiles; i++) {
		free(pg->files[i].path);
		free(pg->files[i].real);
		free(pg->files[i].want);
	}
	free(pg->files);
	free(pg->filemap.v);
	for (size_t i = 0; i < pg->ndis; i++)
		disasm_free(&pg->dis[i].d);
	free(pg->dis);
	free(pg);
}

static size_t intern(struct page *pg, const char *s)
{
	struct hent *e = hmap_at(&pg->strmap, NULL, s, NULL);
	if (e->val == SIZE_MAX) {
		if ((pg->nstrings & (pg->nstrings - 1)) == 0)
			pg->strings = xrealloc(pg->strings,
					       (pg->nstrings ? 2 * pg->nstrings : 1) * sizeof *pg->strings);
		pg->strings[pg->nstrings] = xstrdup(s);
		e->a = pg->strings[pg->nstrings];
		e->val = pg->nstrings++;
	}
	return e->val;
}

size_t page_intern(struct page *pg, const char *s)
{
	return intern(pg, s);
}

/* The source file shown as path (as the line rows name it), read from
 * dir/path if path is relative and dir is known. */
static struct srcfile *source_file(struct page *pg, const char *path, const char *dir)
{
	struct hent *e = hmap_at(&pg->filemap, NULL, path, NULL);
	if (e->val == SIZE_MAX) {
		if ((pg->nfiles & (pg->nfiles - 1)) == 0)
			pg->files = xrealloc(pg->files,
					     (pg->nfiles ? 2 * pg->nfiles : 1) * sizeof *pg->files);
		struct srcfile *s = &pg->files[pg->nfiles];
		*s = (struct srcfile){ xstrdup(path), NULL, 0, NULL, 0 };
		if (path[0] != '/' && dir && asprintf(&s->real, "%s/%s", dir, path) < 0)
			s->real = NULL;
		s->readable = access(s->real ? s->real : path, R_OK) == 0;
		e->a = s->path;
		e->val = pg->nfiles++;
	}
	return &pg->files[e->val];
}

static void want_lines(struct srcfile *s, int line)
{
	if ((s->nwant & (s->nwant - 1)) == 0)
		s->want = xrealloc(s->want, (s->nwant ? 2 * s->nwant : 1) * sizeof *s->want);
	s->want[s->nwant++] = (struct interval){ line > CONTEXT ? line - CONTEXT : 1,
						 line + CONTEXT };
}

static int by_first(const void *a, const void *b)
{
	const struct interval *x = a, *y = b;
	return (x->first > y->first) - (x->first < y->first);
}

/* "path:line" split at its last colon; 0 for "??". */
static int split_line(const char *name, char *path, size_t len, int *line)
{
	const char *colon = strrchr(name, ':');
	if (!colon || colon == name || (size_t)(colon - name) >= len)
		return 0;
	memcpy(path, name, (size_t)(colon - name));
	path[colon - name] = 0;
	*line = atoi(colon + 1);
	return *line > 0;
}

/* ---- Output helpers. ---- */

static void u64s(FILE *f, const char *key, const uint64_t *v, size_t n, int comma)
{
	fprintf(f, "%s\"%s\":[", comma ? "," : "", key);
	for (size_t i = 0; i < n; i++)
		fprintf(f, i ? ",%" PRIu64 : "%" PRIu64, v[i]);
	putc(']', f);
}

static void i64s(FILE *f, const char *key, const int64_t *v, size_t n)
{
	fprintf(f, ",\"%s\":[", key);
	for (size_t i = 0; i < n; i++)
		fprintf(f, i ? ",%" PRId64 : "%" PRId64, v[i]);
	putc(']', f);
}

/* ---- One process. ---- */

static size_t object_index(const struct model *m, const struct object *o)
{
	return (size_t)(o - m->objects);
}

/* fn of x's object disassembled, with x's process's counts: objdump
 * run once per function for the whole page, at most MAX_OBJDUMP times
 * (a build's page has a view for each of its hundreds of processes,
 * and the same cc1 functions are hot in most).  NULL if not. */
static struct dis_done *disasm_of(struct page *pg, const struct symbols *s,
				  const struct object *o, const struct function *fn)
{
	struct dis_done *e = NULL;
	for (size_t i = 0; i < pg->ndis && !e; i++)
		if (pg->dis[i].syms == s && pg->dis[i].start == fn->start)
			e = &pg->dis[i];
	if (!e) {
		if (pg->ndis == MAX_OBJDUMP)
			return NULL;
		if (!pg->dis)
			pg->dis = xmalloc(MAX_OBJDUMP * sizeof *pg->dis);
		e = &pg->dis[pg->ndis++];
		e->syms = s;
		e->start = fn->start;
		e->ok = disasm_function(o, fn, &e->d, 1) == 0;
		if (e->ok)	/* the page's lines have no newline */
			for (size_t j = 0; j < e->d.n; j++) {
				size_t len = strlen(e->d.lines[j]);
				if (len && e->d.lines[j][len - 1] == '\n')
					e->d.lines[j][len - 1] = 0;
			}
		return e->ok ? e : NULL;
	}
	if (!e->ok)
		return NULL;
	disasm_count(o, fn, &e->d);
	return e;
}

/* The entry of fn of s, or NULL if it has none yet. */
static struct dis_done *dis_find(struct page *pg, const struct symbols *s, uint64_t start)
{
	for (size_t i = 0; i < pg->ndis; i++)
		if (pg->dis[i].syms == s && pg->dis[i].start == start)
			return &pg->dis[i];
	return NULL;
}

/* A function of fr that write_disasm shows if it can: samples, no
 * source, symbols that name it. */
static int dis_wanted(const struct model *m, struct symbols **syms, const struct rows *fr,
		      const int *has_source, size_t i, struct function *fn)
{
	const struct row *x = &fr->v[i];
	struct symbols *s = syms[object_index(m, x->object)];
	return !has_source[i] && s && symbols_function(s, x->start, fn) && fn->start == x->start;
}

#define DIS_AHEAD 4	/* objdump runs under way at once */

/*
 * The entries write_disasm will make, made first by disasm_many: most
 * of an objdump run is objdump reading the object's text and line
 * tables, not output, so nearby functions of one object share a run and
 * up to DIS_AHEAD run at once.  The same entries, in the same order, as
 * write_disasm would make one by one, taking each as disassembled; if
 * one is not, write_disasm makes the ones after it itself.
 */
static void dis_prefetch(struct page *pg, const struct model *m, struct symbols **syms,
			 const struct rows *fr, const int *has_source)
{
	struct disasm_job job[MAX_OBJDUMP];
	size_t first = pg->ndis, done = 0;
	if (!pg->dis)
		pg->dis = xmalloc(MAX_OBJDUMP * sizeof *pg->dis);
	for (size_t i = 0; i < fr->n && done < MAX_DISASM; i++) {
		struct function fn;
		if (!dis_wanted(m, syms, fr, has_source, i, &fn))
			continue;
		const struct symbols *s = syms[object_index(m, fr->v[i].object)];
		struct dis_done *e = dis_find(pg, s, fn.start);
		if (e) {
			done += e->ok || e >= pg->dis + first;
			continue;
		}
		if (pg->ndis == MAX_OBJDUMP)
			continue;
		e = &pg->dis[pg->ndis++];
		e->syms = s;
		e->start = fn.start;
		job[e - pg->dis - first] = (struct disasm_job){ .key = s, .o = fr->v[i].object,
								.fn = fn };
		done++;
	}
	disasm_many(job, pg->ndis - first, DIS_AHEAD);
	for (size_t i = first; i < pg->ndis; i++) {
		pg->dis[i].ok = job[i - first].ok;
		pg->dis[i].d = job[i - first].d;
		for (size_t j = 0; pg->dis[i].ok && j < pg->dis[i].d.n; j++) {
			char *line = pg->dis[i].d.lines[j];	/* the page's lines have no newline */
			size_t len = strlen(line);
			if (len && line[len - 1] == '\n')
				line[len - 1] = 0;
		}
	}
}

/* Functions that have samples but no embedded source: disassembled,
 * the hottest first, up to MAX_DISASM.  The text of each is the page's
 * (page_shared's "dt", an object's function disassembled once for every
 * process that has it: a build's cc1 processes share their hottest);
 * each process has its index there and its own counts, as pairs of an
 * instruction's line and its samples, for the lines that have some. */
static void write_disasm(struct page *pg, FILE *f, const struct model *m,
			 struct symbols **syms, const struct rows *fr, const int *has_source)
{
	dis_prefetch(pg, m, syms, fr, has_source);
	fputs(",\"dis\":[", f);
	size_t done = 0;
	for (size_t i = 0; i < fr->n && done < MAX_DISASM; i++) {
		const struct row *x = &fr->v[i];
		struct symbols *s = syms[object_index(m, x->object)];
		struct function fn;
		if (!dis_wanted(m, syms, fr, has_source, i, &fn))
			continue;
		const struct dis_done *e = disasm_of(pg, s, x->object, &fn);
		if (!e)
			continue;
		const struct disasm *d = &e->d;
		fprintf(f, "%s[%zu,%zu,[", done ? "," : "", i, (size_t)(e - pg->dis));
		for (size_t j = 0, any = 0; j < d->n; j++)
			if (d->counts[j])
				fprintf(f, "%s%zu,%" PRIu64, any++ ? "," : "", j, d->counts[j]);
		fputs("]]", f);
		done++;
	}
	putc(']', f);
}

/* One side of a function's entry in the call graph: quadruples of the
 * other function's row (-1: spontaneous; -2 - string: a function with
 * no row), the count, and the self and children seconds it carries. */
static void write_edges(struct page *pg, FILE *f, const struct callgraph *g, const size_t *node_row,
			const size_t *edges, size_t n, int callers)
{
	putc('[', f);
	for (size_t k = 0; k < n; k++) {
		const struct cg_edge *e = &g->edges[edges[k]];
		size_t other = callers ? e->caller : e->callee;
		long long at = other == CG_SPONTANEOUS ? -1
			       : node_row[other] != SIZE_MAX ? (long long)node_row[other]
			       : -2 - (long long)intern(pg, g->nodes[other].name);
		fprintf(f, "%s%lld,%" PRIu64 ",%.6g,%.6g", k ? "," : "", at, e->count, e->self,
			e->children);
	}
	putc(']', f);
}

/* The call graph of gmon.out's arcs, per function row: its calls (as
 * the table's), calls to itself, callers and callees (callgraph.c). */
static void write_graph(struct page *pg, FILE *f, const struct callgraph *g, const struct rows *fr,
			const struct hmap *fmap)
{
	size_t *node_row = xmalloc((g->nnodes + 1) * sizeof *node_row);
	size_t *row_node = xmalloc((fr->n + 1) * sizeof *row_node);
	for (size_t i = 0; i < fr->n; i++)
		row_node[i] = SIZE_MAX;
	for (size_t k = 0; k < g->nnodes; k++) {
		const struct cg_node *x = &g->nodes[k];
		node_row[k] = x->is_cycle ? SIZE_MAX : hmap_get(fmap, x->object, x->name, NULL);
		if (node_row[k] != SIZE_MAX && row_node[node_row[k]] == SIZE_MAX)
			row_node[node_row[k]] = k;
	}
	fputs(",\"cg\":{\"calls\":[", f);
	for (size_t i = 0; i < fr->n; i++)
		fprintf(f, i ? ",%" PRIu64 : "%" PRIu64, fr->v[i].calls);
	fputs("],\"self\":[", f);
	for (size_t i = 0; i < fr->n; i++)
		fprintf(f, i ? ",%" PRIu64 : "%" PRIu64,
			row_node[i] == SIZE_MAX ? 0 : g->nodes[row_node[i]].self_calls);
	putc(']', f);
	for (int side = 0; side < 2; side++) {
		fputs(side ? ",\"callees\":{" : ",\"callers\":{", f);
		int any = 0;
		for (size_t i = 0; i < fr->n; i++) {
			if (row_node[i] == SIZE_MAX)
				continue;
			const struct cg_node *x = &g->nodes[row_node[i]];
			size_t n = side ? x->ncallees : x->ncallers;
			if (!n)
				continue;
			fprintf(f, "%s\"%zu\":", any++ ? "," : "", i);
			write_edges(pg, f, g, node_row, side ? x->callees : x->callers, n, !side);
		}
		putc('}', f);
	}
	putc('}', f);
	free(node_row);
	free(row_node);
}

static size_t function_row(const struct page_rows *r, const struct object *o, const char *name)
{
	return hmap_get(r->map, o, name, NULL);
}

void page_process(struct page *pg, FILE *f, FILE *stacks, const struct model *m,
		  struct symbols **syms)
{
	struct rows fr = { 0 }, lr = { 0 }, orows = { 0 };
	struct callgraph g;
	rows_collect(m, syms, BY_FUNCTION, 0, &fr);
	if (m->narcs) {	/* as report: calls, and rows for functions never sampled */
		callgraph_build(&g, m, syms);
		rows_calls(&fr, &g);
	}
	/* as report: totals, and rows for functions that only call others */
	struct stacks st;
	int has_stacks = stacks_present(m);
	uint64_t *totals = NULL;
	if (has_stacks) {
		stacks_build(&st, m, syms);
		totals = stacks_row_totals(&st, &fr, 0);
	}
	rows_collect(m, syms, BY_LINE, 0, &lr);
	rows_collect(m, syms, BY_OBJECT, 0, &orows);

	/* Objects: their rows, and each object's row index. */
	size_t *obj_row = xmalloc((m->nobjects + 1) * sizeof *obj_row);
	for (size_t i = 0; i < m->nobjects; i++)
		obj_row[i] = SIZE_MAX;
	for (size_t i = 0; i < orows.n; i++)
		obj_row[object_index(m, orows.v[i].object)] = i;
	/* An object that the stacks only pass through (rows of functions
	   that only call others): a row of no samples, last. */
	for (size_t i = 0; i < fr.n; i++) {
		size_t k = object_index(m, fr.v[i].object);
		if (obj_row[k] != SIZE_MAX)
			continue;
		if (orows.n == orows.cap)
			orows.v = xrealloc(orows.v, (orows.cap = 2 * orows.cap + 1) * sizeof *orows.v);
		orows.v[orows.n] = (struct row){ xstrdup(fr.v[i].object->path), NULL, fr.v[i].object,
						 0, 0, 0, 0, 0 };
		obj_row[k] = orows.n++;
	}
	fputs("\"obj\":{\"n\":[", f);
	for (size_t i = 0; i < orows.n; i++)
		fprintf(f, i ? ",%zu" : "%zu", intern(pg, orows.v[i].name));
	fputs("],\"c\":[", f);
	for (size_t i = 0; i < orows.n; i++)
		fprintf(f, i ? ",%" PRIu64 : "%" PRIu64, orows.v[i].count);
	fputs("],\"s\":[", f);
	for (size_t i = 0; i < orows.n; i++)
		fprintf(f, i ? ",%" PRIu64 : "%" PRIu64, orows.v[i].system);
	fputs("]}", f);

	/* Functions. */
	struct hmap fmap = { 0 };
	uint64_t *col = xmalloc((fr.n + 1) * sizeof *col);
	for (size_t i = 0; i < fr.n; i++)
		hmap_at(&fmap, fr.v[i].object, fr.v[i].name, NULL)->val = i;
	fputs(",\"fn\":{", f);
	for (size_t i = 0; i < fr.n; i++)
		col[i] = intern(pg, fr.v[i].name);
	u64s(f, "n", col, fr.n, 0);
	for (size_t i = 0; i < fr.n; i++)
		col[i] = obj_row[object_index(m, fr.v[i].object)];
	u64s(f, "o", col, fr.n, 1);
	for (size_t i = 0; i < fr.n; i++)
		col[i] = fr.v[i].count;
	u64s(f, "c", col, fr.n, 1);
	for (size_t i = 0; i < fr.n; i++)
		col[i] = fr.v[i].system;
	u64s(f, "s", col, fr.n, 1);
	for (size_t i = 0; i < fr.n; i++)
		col[i] = fr.v[i].start;
	u64s(f, "a", col, fr.n, 1);
	if (totals)
		u64s(f, "t", totals, fr.n, 1);
	putc('}', f);
	if (m->narcs) {
		write_graph(pg, f, &g, &fr, &fmap);
		callgraph_free(&g);
	}
	struct page_rows pr = { function_row, &fmap, fr.n, obj_row };
	page_stacks(pg, stacks, m, has_stacks ? &st : NULL, &pr);
	if (has_stacks)
		stacks_free(&st);
	free(totals);

	/* Lines, grouped by function, each group hottest first (rows order). */
	size_t *line_fn = xmalloc((lr.n + 1) * sizeof *line_fn);
	size_t *first = xmalloc((fr.n + 1) * sizeof *first);
	memset(first, 0, (fr.n + 1) * sizeof *first);
	for (size_t j = 0; j < lr.n; j++) {
		line_fn[j] = hmap_get(&fmap, lr.v[j].object, lr.v[j].function, NULL);
		if (line_fn[j] != SIZE_MAX)
			first[line_fn[j] + 1]++;
	}
	for (size_t i = 0; i < fr.n; i++)
		first[i + 1] += first[i];
	size_t nlines = first[fr.n];
	size_t *order = xmalloc((nlines + 1) * sizeof *order);
	size_t *fill = xmalloc((fr.n + 1) * sizeof *fill);
	memcpy(fill, first, (fr.n + 1) * sizeof *fill);
	for (size_t j = 0; j < lr.n; j++)
		if (line_fn[j] != SIZE_MAX)
			order[fill[line_fn[j]]++] = j;
	int64_t *lfile = xmalloc((nlines + 1) * sizeof *lfile);
	int64_t *lno = xmalloc((nlines + 1) * sizeof *lno);
	struct hmap lmap = { 0 };	/* line row -> position in order */
	for (size_t p = 0; p < nlines; p++) {
		const struct row *x = &lr.v[order[p]];
		char path[4096];
		int line;
		hmap_at(&lmap, x->object, x->name, x->function)->val = p;
		lfile[p] = split_line(x->name, path, sizeof path, &line) ? (int64_t)intern(pg, path) : -1;
		lno[p] = lfile[p] < 0 ? 0 : line;
	}
	fputs(",\"ln\":{", f);
	for (size_t i = 0; i < fr.n; i++)
		col[i] = first[i + 1] - first[i];
	u64s(f, "k", col, fr.n, 0);
	/* files and line numbers as differences from the entry before: the
	 * lines of a function are mostly in one file, and near each other */
	for (size_t p = nlines; p-- > 1;) {
		lfile[p] -= lfile[p - 1];
		lno[p] -= lno[p - 1];
	}
	i64s(f, "f", lfile, nlines);
	i64s(f, "l", lno, nlines);
	for (size_t p = 1; p < nlines; p++) {
		lfile[p] += lfile[p - 1];
		lno[p] += lno[p - 1];
	}
	uint64_t *lc = xmalloc((nlines + 1) * sizeof *lc);
	for (size_t p = 0; p < nlines; p++)
		lc[p] = lr.v[order[p]].count;
	u64s(f, "c", lc, nlines, 1);
	putc('}', f);

	/* The bins one by one: to their function's row as rows_collect gave
	 * them (the addresses); where a line was inlined from; and the
	 * directory that a line's relative file name is relative to. */
	size_t nbins = 0;
	for (size_t i = 0; i < m->nobjects; i++)
		nbins += m->objects[i].total ? m->objects[i].nbins : 0;
	size_t *bin_fn = xmalloc((nbins + 1) * sizeof *bin_fn);
	size_t *afirst = xmalloc((fr.n + 1) * sizeof *afirst);
	memset(afirst, 0, (fr.n + 1) * sizeof *afirst);
	const char **dir = xmalloc((nlines + 1) * sizeof *dir);
	memset(dir, 0, (nlines + 1) * sizeof *dir);
	char *inl_done = xmalloc(nlines + 1);
	memset(inl_done, 0, nlines + 1);
	fputs(",\"inl\":[", f);
	size_t b = 0, ninl = 0;
	for (size_t i = 0; i < m->nobjects; i++) {
		const struct object *o = &m->objects[i];
		if (!o->total)
			continue;
		for (size_t k = 0; k < o->nbins; k++, b++) {
			uint64_t start, addr = o->bins[k].first;
			const char *name = rows_function(o, syms[i], addr, 0, &start);
			bin_fn[b] = hmap_get(&fmap, o, name, NULL);
			if (bin_fn[b] != SIZE_MAX)
				afirst[bin_fn[b] + 1]++;
			if (!syms[i] || !o->bins[k].count)
				continue;
			char where[4096];
			rows_line(syms[i], addr, where, sizeof where);
			size_t p = hmap_get(&lmap, o, where, name);
			if (p == SIZE_MAX)
				continue;
			if (lfile[p] >= 0 && !dir[p] && where[0] != '/')
				dir[p] = symbols_comp_dir(syms[i], addr);
			const char *in = rows_function(o, syms[i], addr, 1, &start);
			if (inl_done[p] || in == name || strcmp(in, name) == 0)
				continue;
			inl_done[p] = 1;
			fprintf(f, "%s%zu,%zu", ninl++ ? "," : "", p, intern(pg, in));
		}
	}
	putc(']', f);

	/* The source lines to embed, around every line with samples, of the
	 * hottest functions first while the page has room. */
	int *has_source = xmalloc((fr.n + 1) * sizeof *has_source);
	memset(has_source, 0, (fr.n + 1) * sizeof *has_source);
	for (size_t i = 0; i < fr.n; i++) {
		if (pg->wanted > MAX_SOURCE_LINES) {
			pg->cut |= first[i + 1] > first[i];
			continue;
		}
		for (size_t p = first[i]; p < first[i + 1]; p++) {
			if (lfile[p] < 0)
				continue;
			struct srcfile *sf = source_file(pg, pg->strings[lfile[p]], dir[p]);
			if (sf->readable) {
				want_lines(sf, (int)lno[p]);
				pg->wanted += 2 * CONTEXT + 1;
				has_source[i] = 1;
			}
		}
	}

	for (size_t i = 0; i < fr.n; i++)
		afirst[i + 1] += afirst[i];
	size_t naddr = afirst[fr.n];
	uint64_t *aaddr = xmalloc((naddr + 1) * sizeof *aaddr);
	uint64_t *acount = xmalloc((naddr + 1) * sizeof *acount);
	memcpy(fill, afirst, (fr.n + 1) * sizeof *fill);
	b = 0;
	for (size_t i = 0; i < m->nobjects; i++) {
		const struct object *o = &m->objects[i];
		if (!o->total)
			continue;
		for (size_t k = 0; k < o->nbins; k++, b++) {
			if (bin_fn[b] == SIZE_MAX)
				continue;
			size_t p = fill[bin_fn[b]]++;
			aaddr[p] = o->bins[k].first;
			acount[p] = o->bins[k].count;
		}
	}
	/* Differences: the first from the function's start, then from the
	 * address before (bins are in address order within an object). */
	for (size_t i = 0; i < fr.n; i++)
		for (size_t p = afirst[i + 1]; p-- > afirst[i];)
			aaddr[p] -= p > afirst[i] ? aaddr[p - 1] : fr.v[i].start;
	fputs(",\"ad\":{", f);
	for (size_t i = 0; i < fr.n; i++)
		col[i] = afirst[i + 1] - afirst[i];
	u64s(f, "k", col, fr.n, 0);
	u64s(f, "d", aaddr, naddr, 1);
	u64s(f, "c", acount, naddr, 1);
	putc('}', f);

	write_disasm(pg, f, m, syms, &fr, has_source);

	free(aaddr);
	free(acount);
	free(inl_done);
	free(dir);
	free(bin_fn);
	free(afirst);
	free(lc);
	free(lmap.v);
	free(has_source);
	free(lfile);
	free(lno);
	free(fill);
	free(order);
	free(first);
	free(line_fn);
	free(col);
	free(fmap.v);
	free(obj_row);
	rows_free(&fr);
	rows_free(&lr);
	rows_free(&orows);
}

/* The wanted lines of a source file: [[first line, [text...]], ...]. */
static size_t write_source(FILE *f, struct srcfile *s, size_t budget)
{
	qsort(s->want, s->nwant, sizeof *s->want, by_first);
	FILE *in = fopen(s->real ? s->real : s->path, "r");
	if (!in)
		return 0;
	size_t used = 0, w = 0;
	int lineno = 0, open = 0;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	fputc('[', f);
	while (w < s->nwant && (len = getline(&line, &cap, in)) >= 0) {
		lineno++;
		while (w < s->nwant && s->want[w].last < lineno)
			w++;
		if (w == s->nwant || lineno < s->want[w].first || used + (size_t)len > budget) {
			if (open)
				fputs("]]", f);
			open = 0;
			continue;
		}
		if (len && line[len - 1] == '\n')
			line[--len] = 0;
		if (!open)
			fprintf(f, "%s[%d,[", used ? "," : "", lineno);
		else
			putc(',', f);
		json_string(f, line, 1);
		used += (size_t)len + 1;
		open = 1;
	}
	if (open)
		fputs("]]", f);
	fputc(']', f);
	free(line);
	fclose(in);
	return used;
}

void page_shared(struct page *pg, FILE *f)
{
	/* Source first: it interns nothing, but reads the files. */
	fputs("\"src\":{", f);
	size_t budget = MAX_SOURCE, n = 0;
	for (size_t i = 0; i < pg->nfiles; i++) {
		struct srcfile *s = &pg->files[i];
		if (!s->readable || !s->nwant || !budget)
			continue;
		fprintf(f, "%s\"%zu\":", n++ ? "," : "", intern(pg, s->path));
		size_t used = write_source(f, s, budget);
		budget = used < budget ? budget - used : 0;
	}
	/* The functions disassembled, their lines (write_disasm). */
	fprintf(f, "},\"srccut\":%d,\"dt\":[", pg->cut);
	for (size_t i = 0; i < pg->ndis; i++) {
		const struct disasm *d = &pg->dis[i].d;
		fputs(i ? ",[" : "[", f);
		for (size_t j = 0; pg->dis[i].ok && j < d->n; j++) {
			if (j)
				putc(',', f);
			json_string(f, d->lines[j], 1);
		}
		putc(']', f);
	}
	fputs("],\"strings\":[", f);
	for (size_t i = 0; i < pg->nstrings; i++) {
		if (i)
			putc(',', f);
		json_string(f, pg->strings[i], 1);
	}
	putc(']', f);
}
