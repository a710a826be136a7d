/*
 * callgraph.c - the model's arcs and samples as a call graph of
 * functions, with gprof's propagation of time (see callgraph.h).
 *
 * Cycles are the strongly connected components of more than one
 * function, found with Tarjan's algorithm (iterative: a deep call chain
 * must not overflow the stack).  Tarjan's algorithm ends each component
 * after every component it calls into, which is the bottom-up order the
 * propagation needs: gprof's topological order, cycles collapsed.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "callgraph.h"
#include "cli.h"
#include "rows.h"

/* Open addressing over (object, start) -> node and (caller, callee) -> edge. */
struct slot {
	uint64_t a, b;
	size_t value;		/* + 1; 0 is empty */
};

struct map {
	struct slot *slots;
	size_t n, cap;		/* cap: a power of two */
};

static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 32);
}

/* The value of (a, b), or SIZE_MAX if none; with add, enter value. */
static size_t map_get(struct map *m, uint64_t a, uint64_t b, size_t value, int add)
{
	if (add && 2 * (m->n + 1) > m->cap) {
		struct map g = { NULL, m->n, m->cap ? m->cap * 2 : 1024 };
		g.slots = xmalloc(g.cap * sizeof *g.slots);
		memset(g.slots, 0, g.cap * sizeof *g.slots);
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->slots[i].value)
				continue;
			size_t j = mix(m->slots[i].a, m->slots[i].b) & (g.cap - 1);
			while (g.slots[j].value)
				j = (j + 1) & (g.cap - 1);
			g.slots[j] = m->slots[i];
		}
		free(m->slots);
		*m = g;
	}
	if (!m->cap)
		return SIZE_MAX;
	size_t j = mix(a, b) & (m->cap - 1);
	while (m->slots[j].value) {
		if (m->slots[j].a == a && m->slots[j].b == b)
			return m->slots[j].value - 1;
		j = (j + 1) & (m->cap - 1);
	}
	if (!add)
		return SIZE_MAX;
	m->slots[j] = (struct slot){ a, b, value + 1 };
	m->n++;
	return value;
}

struct builder {
	struct callgraph *g;
	const struct model *m;
	struct symbols **syms;
	struct map nodes, edges;
	size_t capnodes, capedges;
};

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static size_t new_node(struct builder *b)
{
	struct callgraph *g = b->g;
	if (g->nnodes == b->capnodes) {
		b->capnodes = b->capnodes ? b->capnodes * 2 : 256;
		g->nodes = xrealloc(g->nodes, b->capnodes * sizeof *g->nodes);
	}
	memset(&g->nodes[g->nnodes], 0, sizeof g->nodes[g->nnodes]);
	return g->nnodes++;
}

/* The node of the function that holds addr in object i. */
static size_t node_at(struct builder *b, size_t i, uint64_t addr)
{
	const struct object *o = &b->m->objects[i];
	uint64_t start;
	const char *name = rows_function(o, b->syms[i], addr, 0, &start);
	size_t k = map_get(&b->nodes, (uint64_t)(uintptr_t)o, start, b->g->nnodes, 1);
	if (k == b->g->nnodes) {
		new_node(b);
		struct cg_node *n = &b->g->nodes[k];
		n->name = xstrdup(name);
		n->object = o;
		n->start = start;
	}
	return k;
}

static void add_edge(struct builder *b, size_t caller, size_t callee, uint64_t count)
{
	struct callgraph *g = b->g;
	size_t k = map_get(&b->edges, caller, callee, g->nedges, 1);
	if (k == g->nedges) {
		if (g->nedges == b->capedges) {
			b->capedges = b->capedges ? b->capedges * 2 : 256;
			g->edges = xrealloc(g->edges, b->capedges * sizeof *g->edges);
		}
		g->edges[g->nedges++] = (struct cg_edge){ caller, callee, 0, 0.0, 0.0 };
	}
	g->edges[k].count = sat_add(g->edges[k].count, count);
}

static size_t object_index(const struct model *m, const struct object *o)
{
	return (size_t)(o - m->objects);
}

/* Nodes for every function with samples, edges for every arc. */
static void collect(struct builder *b)
{
	const struct model *m = b->m;
	double each = model_seconds_each(m);
	for (size_t i = 0; i < m->nobjects; i++) {
		const struct object *o = &m->objects[i];
		for (size_t k = 0; k < o->nbins; k++) {
			if (!o->bins[k].count)
				continue;
			size_t n = node_at(b, i, o->bins[k].first);
			b->g->nodes[n].samples += o->bins[k].count;
		}
	}
	for (size_t i = 0; i < m->narcs; i++) {
		const struct arc *a = &m->arcs[i];
		size_t callee = node_at(b, object_index(m, a->to), a->to_pc);
		/* from_pc is the return address: the call is the byte before
		   it (a call to a function that does not return may end its
		   caller, and the next address be another function's). */
		size_t caller = a->from ? node_at(b, object_index(m, a->from), a->from_pc - 1)
					: CG_SPONTANEOUS;
		add_edge(b, caller, callee, a->count);
	}
	for (size_t i = 0; i < b->g->nnodes; i++) {
		struct cg_node *n = &b->g->nodes[i];
		n->self = n->samples * each;
		b->g->total += n->self;
	}
}

/* Each node's lists of edges in and out; calls and self calls. */
static void link_edges(struct callgraph *g)
{
	for (size_t e = 0; e < g->nedges; e++) {
		struct cg_edge *x = &g->edges[e];
		struct cg_node *to = &g->nodes[x->callee];
		if (x->caller == x->callee)
			to->self_calls = sat_add(to->self_calls, x->count);
		else
			to->calls = sat_add(to->calls, x->count);
		to->ncallers++;
		if (x->caller != CG_SPONTANEOUS)
			g->nodes[x->caller].ncallees++;
	}
	for (size_t i = 0; i < g->nnodes; i++) {
		struct cg_node *n = &g->nodes[i];
		n->callers = xmalloc((n->ncallers + 1) * sizeof *n->callers);
		n->callees = xmalloc((n->ncallees + 1) * sizeof *n->callees);
		n->ncallers = n->ncallees = 0;
	}
	for (size_t e = 0; e < g->nedges; e++) {
		struct cg_edge *x = &g->edges[e];
		struct cg_node *to = &g->nodes[x->callee];
		to->callers[to->ncallers++] = e;
		if (x->caller != CG_SPONTANEOUS) {
			struct cg_node *from = &g->nodes[x->caller];
			from->callees[from->ncallees++] = e;
		}
	}
}

/*
 * Tarjan's strongly connected components over the function nodes, without
 * recursion.  comp_order receives the nodes component by component, each
 * component after those it calls into; comp_of[n] is n's component and
 * comp_start[c] where component c begins in comp_order.
 */
struct tarjan {
	size_t *index, *low, *stack, *comp_of, *comp_order, *comp_start;
	char *on_stack;
	size_t nstack, ncomp, norder, next;
};

static void strongconnect(const struct callgraph *g, size_t nfuncs, struct tarjan *t,
			  size_t root, size_t *frames, size_t *edge_at)
{
	size_t depth = 0;
	frames[depth] = root;
	edge_at[depth] = 0;
	t->index[root] = t->low[root] = t->next++;
	t->stack[t->nstack++] = root;
	t->on_stack[root] = 1;
	while (depth != SIZE_MAX) {
		size_t v = frames[depth];
		const struct cg_node *n = &g->nodes[v];
		if (edge_at[depth] < n->ncallees) {
			size_t w = g->edges[n->callees[edge_at[depth]++]].callee;
			if (w >= nfuncs)
				continue;
			if (t->index[w] == SIZE_MAX) {
				depth++;
				frames[depth] = w;
				edge_at[depth] = 0;
				t->index[w] = t->low[w] = t->next++;
				t->stack[t->nstack++] = w;
				t->on_stack[w] = 1;
			} else if (t->on_stack[w] && t->index[w] < t->low[v]) {
				t->low[v] = t->index[w];
			}
			continue;
		}
		if (t->low[v] == t->index[v]) {	/* v roots a component */
			t->comp_start[t->ncomp] = t->norder;
			size_t w;
			do {
				w = t->stack[--t->nstack];
				t->on_stack[w] = 0;
				t->comp_of[w] = t->ncomp;
				t->comp_order[t->norder++] = w;
			} while (w != v);
			t->ncomp++;
		}
		depth = depth ? depth - 1 : SIZE_MAX;
		if (depth != SIZE_MAX && t->low[v] < t->low[frames[depth]])
			t->low[frames[depth]] = t->low[v];
	}
}

static int by_start(const void *a, const void *b, void *arg)
{
	const struct callgraph *g = arg;
	const struct cg_node *x = &g->nodes[*(const size_t *)a], *y = &g->nodes[*(const size_t *)b];
	if (x->object != y->object)
		return (uintptr_t)x->object < (uintptr_t)y->object ? -1 : 1;
	return (x->start > y->start) - (x->start < y->start);
}

/* Cycles: one node for each component of more than one function,
   numbered as gprof numbers them: in the address order of their heads,
   the member the depth-first search came to first (which Tarjan's
   algorithm ends the component on). */
static void make_cycles(struct builder *b, const struct tarjan *t, size_t nfuncs,
			size_t *cycle_of_comp)
{
	struct callgraph *g = b->g;
	size_t *heads = xmalloc((t->ncomp + 1) * sizeof *heads), nheads = 0;
	for (size_t c = 0; c < t->ncomp; c++) {
		size_t end = c + 1 < t->ncomp ? t->comp_start[c + 1] : t->norder;
		cycle_of_comp[c] = SIZE_MAX;
		if (end - t->comp_start[c] < 2)
			continue;
		heads[nheads++] = t->comp_order[end - 1];
	}
	qsort_r(heads, nheads, sizeof *heads, by_start, g);
	for (size_t h = 0; h < nheads; h++) {
		size_t c = t->comp_of[heads[h]];
		size_t end = c + 1 < t->ncomp ? t->comp_start[c + 1] : t->norder;
		size_t id = new_node(b);
		struct cg_node *cy = &g->nodes[id];
		char name[64];
		snprintf(name, sizeof name, "<cycle %zu as a whole>", h + 1);
		cy->name = xstrdup(name);
		cy->is_cycle = 1;
		cy->cycle = (unsigned)(h + 1);
		cy->nmembers = end - t->comp_start[c];
		cy->members = xmalloc(cy->nmembers * sizeof *cy->members);
		memcpy(cy->members, &t->comp_order[t->comp_start[c]],
		       cy->nmembers * sizeof *cy->members);
		cy->callers = xmalloc(sizeof *cy->callers);
		cy->callees = xmalloc(sizeof *cy->callees);
		cycle_of_comp[c] = id;
		for (size_t k = 0; k < cy->nmembers; k++) {
			struct cg_node *mem = &g->nodes[cy->members[k]];
			mem->cycle = cy->cycle;
			cy->samples += mem->samples;
			cy->self += mem->self;
			for (size_t e = 0; e < mem->ncallers; e++) {
				const struct cg_edge *x = &g->edges[mem->callers[e]];
				if (x->caller == x->callee)
					continue;
				if (x->caller != CG_SPONTANEOUS && x->caller < nfuncs
				    && t->comp_of[x->caller] == c)
					cy->self_calls = sat_add(cy->self_calls, x->count);
				else
					cy->calls = sat_add(cy->calls, x->count);
			}
		}
	}
	free(heads);
}

/* The node whose time a call to callee shares out: its cycle's, if any. */
static size_t sharer(const struct callgraph *g, const struct tarjan *t,
		     const size_t *cycle_of_comp, size_t callee)
{
	size_t cy = cycle_of_comp[t->comp_of[callee]];
	(void)g;
	return cy == SIZE_MAX ? callee : cy;
}

/* gprof's propagate_time, component by component from the bottom up. */
static void propagate(struct callgraph *g, const struct tarjan *t, const size_t *cycle_of_comp)
{
	for (size_t k = 0; k < t->norder; k++) {
		size_t p = t->comp_order[k];
		struct cg_node *parent = &g->nodes[p];
		size_t pcy = cycle_of_comp[t->comp_of[p]];
		for (size_t e = 0; e < parent->ncallees; e++) {
			struct cg_edge *x = &g->edges[parent->callees[e]];
			if (x->callee == p || t->comp_of[x->callee] == t->comp_of[p])
				continue;	/* itself, or within its cycle */
			const struct cg_node *c = &g->nodes[sharer(g, t, cycle_of_comp, x->callee)];
			if (!c->calls)
				continue;
			double part = (double)x->count / (double)c->calls;
			x->self = c->self * part;
			x->children = c->children * part;
			parent->children += x->self + x->children;
			if (pcy != SIZE_MAX)
				g->nodes[pcy].children += x->self + x->children;
		}
	}
	/* Spontaneous edges: the share no function receives, for showing. */
	for (size_t e = 0; e < g->nedges; e++) {
		struct cg_edge *x = &g->edges[e];
		if (x->caller != CG_SPONTANEOUS)
			continue;
		const struct cg_node *c = &g->nodes[sharer(g, t, cycle_of_comp, x->callee)];
		if (!c->calls)
			continue;
		x->self = c->self * ((double)x->count / (double)c->calls);
		x->children = c->children * ((double)x->count / (double)c->calls);
	}
}

/* ---- gprof's orders ---- */

static int by_total(const void *a, const void *b, void *arg)
{
	const struct callgraph *g = arg;
	const struct cg_node *x = &g->nodes[*(const size_t *)a], *y = &g->nodes[*(const size_t *)b];
	double dx = x->self + x->children, dy = y->self + y->children;
	if (dx != dy)
		return dx < dy ? 1 : -1;
	if (x->is_cycle != y->is_cycle)
		return x->is_cycle ? -1 : 1;
	if ((x->name[0] == '_') != (y->name[0] == '_'))
		return x->name[0] == '_' ? 1 : -1;
	if (x->calls != y->calls)
		return x->calls < y->calls ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int within_cycle(const struct callgraph *g, const struct cg_edge *e)
{
	return e->caller != CG_SPONTANEOUS && g->nodes[e->caller].cycle
	       && g->nodes[e->caller].cycle == g->nodes[e->callee].cycle;
}

/* gprof's cmp_arc: calls to itself least, then calls within a cycle (by
   count), then by the time shared along the edge and its count. */
static int arc_rank(const struct callgraph *g, const struct cg_edge *x, const struct cg_edge *y)
{
	if (x->caller == x->callee || y->caller == y->callee)
		return (y->caller == y->callee) - (x->caller == x->callee);
	int cx = within_cycle(g, x), cy = within_cycle(g, y);
	if (cx != cy)
		return cx ? -1 : 1;
	if (!cx) {
		double tx = x->self + x->children, ty = y->self + y->children;
		if (tx != ty)
			return tx < ty ? -1 : 1;
	}
	return (x->count > y->count) - (x->count < y->count);
}

static const char *edge_name(const struct callgraph *g, const struct cg_edge *e, int caller)
{
	size_t n = caller ? e->caller : e->callee;
	return n == CG_SPONTANEOUS ? "<spontaneous>" : g->nodes[n].name;
}

static int callers_up(const void *a, const void *b, void *arg)
{
	const struct callgraph *g = arg;
	const struct cg_edge *x = &g->edges[*(const size_t *)a], *y = &g->edges[*(const size_t *)b];
	int r = arc_rank(g, x, y);
	return r ? r : strcmp(edge_name(g, x, 1), edge_name(g, y, 1));
}

static int callees_down(const void *a, const void *b, void *arg)
{
	const struct callgraph *g = arg;
	const struct cg_edge *x = &g->edges[*(const size_t *)a], *y = &g->edges[*(const size_t *)b];
	int r = arc_rank(g, y, x);
	return r ? r : strcmp(edge_name(g, x, 0), edge_name(g, y, 0));
}

static int members_down(const void *a, const void *b, void *arg)
{
	const struct callgraph *g = arg;
	const struct cg_node *x = &g->nodes[*(const size_t *)a], *y = &g->nodes[*(const size_t *)b];
	double dx = x->self + x->children, dy = y->self + y->children;
	if (dx != dy)
		return dx < dy ? 1 : -1;
	uint64_t cx = sat_add(x->calls, x->self_calls), cy = sat_add(y->calls, y->self_calls);
	if (cx != cy)
		return cx < cy ? 1 : -1;
	return strcmp(x->name, y->name);
}

static void sort_all(struct callgraph *g)
{
	g->order = xmalloc((g->nnodes + 1) * sizeof *g->order);
	for (size_t i = 0; i < g->nnodes; i++)
		g->order[i] = i;
	qsort_r(g->order, g->nnodes, sizeof *g->order, by_total, g);
	for (size_t i = 0; i < g->nnodes; i++)
		g->nodes[g->order[i]].index = (unsigned)(i + 1);
	for (size_t i = 0; i < g->nnodes; i++) {
		struct cg_node *n = &g->nodes[i];
		qsort_r(n->callers, n->ncallers, sizeof *n->callers, callers_up, g);
		qsort_r(n->callees, n->ncallees, sizeof *n->callees, callees_down, g);
		if (n->nmembers)
			qsort_r(n->members, n->nmembers, sizeof *n->members, members_down, g);
	}
}

void callgraph_build(struct callgraph *g, const struct model *m, struct symbols **syms)
{
	memset(g, 0, sizeof *g);
	struct builder b = { g, m, syms, { NULL, 0, 0 }, { NULL, 0, 0 }, 0, 0 };
	collect(&b);
	link_edges(g);
	size_t nf = g->nnodes;
	struct tarjan t = { 0 };
	size_t words = nf + 1;
	t.index = xmalloc(words * sizeof *t.index);
	t.low = xmalloc(words * sizeof *t.low);
	t.stack = xmalloc(words * sizeof *t.stack);
	t.comp_of = xmalloc(words * sizeof *t.comp_of);
	t.comp_order = xmalloc(words * sizeof *t.comp_order);
	t.comp_start = xmalloc(words * sizeof *t.comp_start);
	t.on_stack = xmalloc(words);
	memset(t.on_stack, 0, words);
	size_t *frames = xmalloc(words * sizeof *frames), *edge_at = xmalloc(words * sizeof *edge_at);
	/* The search starts from functions in address order, as gprof's. */
	g->nfunctions = nf;
	g->by_start = xmalloc((nf + 1) * sizeof *g->by_start);
	for (size_t i = 0; i < nf; i++)
		g->by_start[i] = i;
	qsort_r(g->by_start, nf, sizeof *g->by_start, by_start, g);
	for (size_t i = 0; i < nf; i++)
		t.index[i] = SIZE_MAX;
	for (size_t i = 0; i < nf; i++)
		if (t.index[g->by_start[i]] == SIZE_MAX)
			strongconnect(g, nf, &t, g->by_start[i], frames, edge_at);
	size_t *cycle_of_comp = xmalloc((t.ncomp + 1) * sizeof *cycle_of_comp);
	make_cycles(&b, &t, nf, cycle_of_comp);
	g->ncycles = g->nnodes - nf;
	propagate(g, &t, cycle_of_comp);
	sort_all(g);
	free(cycle_of_comp);
	free(frames);
	free(edge_at);
	free(t.index);
	free(t.low);
	free(t.stack);
	free(t.comp_of);
	free(t.comp_order);
	free(t.comp_start);
	free(t.on_stack);
	free(b.nodes.slots);
	free(b.edges.slots);
}

const struct cg_node *callgraph_find(const struct callgraph *g, const struct object *o,
				     uint64_t start)
{
	size_t lo = 0, hi = g->nfunctions;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct cg_node *n = &g->nodes[g->by_start[mid]];
		if (n->object == o && n->start == start)
			return n;
		if ((uintptr_t)n->object < (uintptr_t)o || (n->object == o && n->start < start))
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct cg_node *callgraph_sharer(const struct callgraph *g, size_t callee)
{
	const struct cg_node *n = &g->nodes[callee];
	if (!n->cycle)
		return n;
	return &g->nodes[g->nfunctions + n->cycle - 1];
}

void callgraph_free(struct callgraph *g)
{
	for (size_t i = 0; i < g->nnodes; i++) {
		free(g->nodes[i].name);
		free(g->nodes[i].callers);
		free(g->nodes[i].callees);
		free(g->nodes[i].members);
	}
	free(g->nodes);
	free(g->edges);
	free(g->order);
	free(g->by_start);
	memset(g, 0, sizeof *g);
}
