/*
 * stackviews.c - what the views make of resolved stacks (stacks.h):
 * inclusive totals, a function's direct callers and callees, the tree of
 * calls.  A function that recurs is counted once per stack, so that no
 * total exceeds the samples.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "stacks.h"

void stacks_totals(const struct stacks *s, uint64_t *total, uint64_t *self)
{
	size_t *stamp = xmalloc((s->nfuncs + 1) * sizeof *stamp);
	memset(stamp, 0xff, (s->nfuncs + 1) * sizeof *stamp);
	if (total)
		memset(total, 0, s->nfuncs * sizeof *total);
	if (self)
		memset(self, 0, s->nfuncs * sizeof *self);
	for (size_t i = 0; i < s->n; i++) {
		const struct stack *st = &s->v[i];
		for (size_t d = 0; d < st->depth && total; d++) {
			size_t f = st->funcs[d];
			if (stamp[f] != i) {
				stamp[f] = i;
				total[f] += st->count;
			}
		}
		if (self && st->depth)
			self[st->funcs[st->depth - 1]] += st->count;
	}
	free(stamp);
}

static int hotter_edge(const void *a, const void *b)
{
	const struct stack_edge *x = a, *y = b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return (x->func > y->func) - (x->func < y->func);
}

/* The neighbours of f at offset dir (-1: callers, +1: callees), once per
   stack each; the end past the stack is `end`. */
static size_t neighbours(const struct stacks *s, size_t f, int dir, size_t end,
			 struct stack_edge **out)
{
	size_t n = s->nfuncs + 1;	/* the last one: end */
	uint64_t *count = xmalloc(n * sizeof *count);
	size_t *stamp = xmalloc(n * sizeof *stamp);
	memset(count, 0, n * sizeof *count);
	memset(stamp, 0xff, n * sizeof *stamp);
	for (size_t i = 0; i < s->n; i++) {
		const struct stack *st = &s->v[i];
		for (size_t d = 0; d < st->depth; d++) {
			if (st->funcs[d] != f)
				continue;
			size_t nd = d + (size_t)dir;	/* wraps past 0: out of range */
			size_t g = nd < st->depth ? st->funcs[nd] : s->nfuncs;
			if (stamp[g] != i) {
				stamp[g] = i;
				count[g] += st->count;
			}
		}
	}
	size_t k = 0;
	for (size_t g = 0; g < n; g++)
		k += count[g] != 0;
	*out = xmalloc((k + 1) * sizeof **out);
	k = 0;
	for (size_t g = 0; g < n; g++)
		if (count[g])
			(*out)[k++] = (struct stack_edge){ g == s->nfuncs ? end : g, count[g] };
	qsort(*out, k, sizeof **out, hotter_edge);
	free(count);
	free(stamp);
	return k;
}

size_t stacks_callers(const struct stacks *s, size_t f, struct stack_edge **out)
{
	return neighbours(s, f, -1, STACK_ROOT, out);
}

size_t stacks_callees(const struct stacks *s, size_t f, struct stack_edge **out)
{
	return neighbours(s, f, +1, STACK_SELF, out);
}

/* ---- The tree. ---- */

struct tree_index {
	size_t *v;
	size_t cap;
};

static uint64_t node_hash(size_t parent, size_t func)
{
	return (parent * UINT64_C(0x9e3779b97f4a7c15)) ^ (func * UINT64_C(0xff51afd7ed558ccd));
}

static size_t child_of(struct stack_tree *t, struct tree_index *ix, size_t *cap, size_t parent,
		       size_t func)
{
	size_t j = node_hash(parent, func) & (ix->cap - 1);
	for (; ix->v[j] != SIZE_MAX; j = (j + 1) & (ix->cap - 1))
		if (t->v[ix->v[j]].parent == parent && t->v[ix->v[j]].func == func)
			return ix->v[j];
	if (t->n == *cap) {
		*cap *= 2;
		t->v = xrealloc(t->v, *cap * sizeof *t->v);
	}
	t->v[t->n] = (struct stack_node){ func, 0, 0, parent, STACK_NONE, STACK_NONE };
	ix->v[j] = t->n++;
	if (2 * t->n > ix->cap) {
		free(ix->v);
		ix->cap *= 2;
		ix->v = xmalloc(ix->cap * sizeof *ix->v);
		memset(ix->v, 0xff, ix->cap * sizeof *ix->v);
		for (size_t i = 1; i < t->n; i++) {
			size_t h = node_hash(t->v[i].parent, t->v[i].func) & (ix->cap - 1);
			while (ix->v[h] != SIZE_MAX)
				h = (h + 1) & (ix->cap - 1);
			ix->v[h] = i;
		}
	}
	return t->n - 1;
}

static int by_parent_hotter(const void *a, const void *b, void *arg)
{
	const struct stack_node *v = arg;
	const struct stack_node *x = &v[*(const size_t *)a], *y = &v[*(const size_t *)b];
	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return (x->func > y->func) - (x->func < y->func);
}

void stacks_tree(const struct stacks *s, size_t thread, int inverted, struct stack_tree *t)
{
	size_t cap = 256;
	t->v = xmalloc(cap * sizeof *t->v);
	t->v[0] = (struct stack_node){ STACK_ROOT, 0, 0, STACK_NONE, STACK_NONE, STACK_NONE };
	t->n = 1;
	struct tree_index ix = { xmalloc(1024 * sizeof(size_t)), 1024 };
	memset(ix.v, 0xff, ix.cap * sizeof *ix.v);
	for (size_t i = 0; i < s->n; i++) {
		const struct stack *st = &s->v[i];
		if (thread != STACK_ALL_THREADS && st->thread != thread)
			continue;
		size_t node = 0;
		t->v[0].total += st->count;
		for (size_t d = 0; d < st->depth; d++) {
			size_t f = st->funcs[inverted ? st->depth - 1 - d : d];
			node = child_of(t, &ix, &cap, node, f);
			t->v[node].total += st->count;
		}
		t->v[node].self += st->count;
	}
	free(ix.v);
	/* Children linked hottest first. */
	size_t *order = xmalloc(t->n * sizeof *order);
	for (size_t i = 0; i < t->n; i++)
		order[i] = i;
	qsort_r(order + 1, t->n - 1, sizeof *order, by_parent_hotter, t->v);
	for (size_t i = t->n; i-- > 1;) {
		struct stack_node *x = &t->v[order[i]], *p = &t->v[x->parent];
		x->next = p->child;
		p->child = order[i];
	}
	free(order);
}

void stack_tree_free(struct stack_tree *t)
{
	free(t->v);
	t->v = NULL;
	t->n = 0;
}
