/*
 * html_stacks.c - the call stacks of the HTML page (flame.js): each
 * process's stacks (stacks.h, built by html_data.c) as a tree of calls from the outermost
 * frame in, in preorder, children hottest first.
 *
 * Three columns, a node each: how many levels up from the node before
 * (its depth is that node's + 1 - this), its function, and the samples
 * whose stack ends there.  The page sums totals up the tree itself.  A
 * function is its row in the page's function table where it has one
 * (samples of its own), else rows + its index among the functions only
 * the stacks have ("x": callers, "[truncated]").
 *
 * A large profile has a million nodes, and JSON arrays of numbers that
 * long take the browser half a second to parse: each column is a string
 * of numbers in base 32, five bits a character from a 64-letter
 * alphabet (the upper half says more follow, lowest bits first), which
 * the page decodes in a few milliseconds.  The stacks are a data block
 * of their own, [process, ...], which the page reads after its first
 * render.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "html.h"
#include "jsonout.h"
#include "stacks.h"

static const char digit[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static void number(FILE *f, uint64_t v)
{
	for (; v >= 32; v >>= 5)
		putc(digit[32 + (v & 31)], f);
	putc(digit[v], f);
}

void page_stacks(struct page *pg, FILE *f, const struct model *m, const struct stacks *s,
		 const struct page_rows *rows)
{
	if (!s) {
		fputs("{\"why\":", f);
		json_string(f, m->gmon_files == m->nfiles
			    ? "gmon.out files have call counts, not stacks (see a function's "
			      "callers and callees)"
			    : "the profile was recorded without call stacks", 1);
		putc('}', f);
		return;
	}
	struct stack_tree t;
	stacks_tree(s, STACK_ALL_THREADS, 0, &t);

	/* Each function's id in the page.  The stacks put anonymous code
	   (JIT) in no object, the rows in the model's object for it. */
	const struct object *anon = NULL;
	for (size_t i = 0; i < m->nobjects; i++)
		if (m->objects[i].flags & OBJECT_ANON)
			anon = &m->objects[i];
	uint64_t *id = xmalloc((s->nfuncs + 1) * sizeof *id);
	size_t nx = 0;
	for (size_t k = 0; k < s->nfuncs; k++) {
		const struct stack_func *x = &s->funcs[k];
		const struct object *o = x->object ? x->object : anon;
		size_t r = o ? rows->row(rows, o, x->name) : SIZE_MAX;
		id[k] = r != SIZE_MAX ? r : rows->nrows + nx++;
	}
	fprintf(f, "{\"n\":%" PRIu64 ",\"x\":{\"n\":[", s->samples);
	for (size_t k = 0, j = 0; k < s->nfuncs; k++)
		if (id[k] >= rows->nrows)
			fprintf(f, j++ ? ",%zu" : "%zu", page_intern(pg, s->funcs[k].name));
	fputs("],\"o\":[", f);
	for (size_t k = 0, j = 0; k < s->nfuncs; k++) {
		if (id[k] < rows->nrows)
			continue;
		/* an object with no samples has no row: -2 - its path */
		const struct object *o = s->funcs[k].object;
		size_t r = o ? rows->obj_row[o - m->objects] : SIZE_MAX;
		fprintf(f, j++ ? ",%lld" : "%lld", r != SIZE_MAX ? (long long)r
			: o ? -2 - (long long)page_intern(pg, o->path) : -1LL);
	}
	fputs("]}", f);

	/* The three columns, each one walk of the tree in preorder. */
	static const char *const cols[] = { "u", "f", "c" };
	size_t *depth = xmalloc((t.n + 1) * sizeof *depth);
	size_t nodes = 0;
	for (int c = 0; c < 3; c++) {
		fprintf(f, ",\"%s\":\"", cols[c]);
		size_t i = t.n ? t.v[0].child : STACK_NONE, prev = 0;
		depth[0] = 0;
		nodes = 0;
		while (i != STACK_NONE) {
			const struct stack_node *x = &t.v[i];
			depth[i] = depth[x->parent] + 1;
			nodes++;
			if (c == 0)
				number(f, prev + 1 - depth[i]);
			else if (c == 1)
				number(f, id[x->func]);
			else
				number(f, x->self);
			prev = depth[i];
			/* next: the first child, else the next sibling of the
			   nearest node that has one */
			if (x->child != STACK_NONE) {
				i = x->child;
				continue;
			}
			while (i != 0 && t.v[i].next == STACK_NONE)
				i = t.v[i].parent;
			i = i == 0 ? STACK_NONE : t.v[i].next;
		}
		putc('"', f);
	}
	fprintf(f, ",\"k\":%zu}", nodes);
	free(depth);
	free(id);
	stack_tree_free(&t);
}
