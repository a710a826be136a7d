/*
 * cgprint.c - the call graph printed as gprof -q prints it (see
 * callgraph.h): one entry per function or cycle, most total time first;
 * its callers above it, its callees below, each with the time the edge
 * carries and count/calls.  Calls to itself and within a cycle show only
 * their count.  A function nothing in the profile calls has the line
 * <spontaneous> above it, as in gprof; calls from outside the profiled
 * text are a <spontaneous> caller with their count.  The JSON form has
 * the same, every node an object, edges by the nodes' indexes.
 */
#include <inttypes.h>
#include <stdio.h>

#include "callgraph.h"
#include "jsonout.h"

static void name(const struct cg_node *n)
{
	fputs(n->name, stdout);
	if (n->cycle && !n->is_cycle)
		printf(" <cycle %u>", n->cycle);
	printf(" [%u]\n", n->index);
}

/* One caller or callee line of an entry. */
static void edge_line(const struct callgraph *g, const struct cg_edge *e, int show_caller)
{
	const struct cg_node *to = &g->nodes[e->callee];
	int quiet = e->caller == e->callee
		    || (e->caller != CG_SPONTANEOUS && to->cycle
			&& g->nodes[e->caller].cycle == to->cycle);
	if (quiet)
		printf("%6s %5s %7s %7s %7" PRIu64 " %7s     ", "", "", "", "", e->count, "");
	else
		printf("%6s %5s %7.2f %7.2f %7" PRIu64 "/%-7" PRIu64 "     ", "", "", e->self,
		       e->children, e->count, callgraph_sharer(g, e->callee)->calls);
	if (show_caller && e->caller == CG_SPONTANEOUS)
		puts("<spontaneous>");
	else
		name(&g->nodes[show_caller ? e->caller : e->callee]);
}

static void calls(uint64_t calls, uint64_t self_calls)
{
	if (!calls && !self_calls)
		printf(" %7s %7s ", "", "");
	else if (self_calls)
		printf(" %7" PRIu64 "+%-7" PRIu64 " ", calls, self_calls);
	else
		printf(" %7" PRIu64 " %7s ", calls, "");
}

/* The share of all self time in n and its descendants. */
static double percent(const struct callgraph *g, const struct cg_node *n)
{
	return 100.0 * (n->self + n->children) / (g->total > 0 ? g->total : 1.0);
}

static void entry(const struct callgraph *g, const struct cg_node *n)
{
	char index[32];
	snprintf(index, sizeof index, "[%u]", n->index);
	if (n->is_cycle) {
		printf("%-6s %5.1f %7.2f %7.2f", index, percent(g, n),
		       n->self, n->children);
		calls(n->calls, n->self_calls);
		name(n);
		for (size_t k = 0; k < n->nmembers; k++) {
			const struct cg_node *m = &g->nodes[n->members[k]];
			printf("%6s %5s %7.2f %7.2f", "", "", m->self, m->children);
			calls(m->calls, m->self_calls);
			printf("    ");
			name(m);
		}
		return;
	}
	if (!n->ncallers)
		printf("%6s %5s %7s %7s %7s %7s     <spontaneous>\n", "", "", "", "", "", "");
	for (size_t k = 0; k < n->ncallers; k++)
		edge_line(g, &g->edges[n->callers[k]], 1);
	printf("%-6s %5.1f %7.2f %7.2f", index, percent(g, n),
	       n->self, n->children);
	calls(n->calls, n->self_calls);
	name(n);
	for (size_t k = 0; k < n->ncallees; k++)
		edge_line(g, &g->edges[n->callees[k]], 0);
}

void callgraph_print(const struct callgraph *g, double threshold)
{
	printf("Call graph: %zu function%s, %zu cycle%s, %.2f seconds of self time\n",
	       g->nfunctions, g->nfunctions == 1 ? "" : "s", g->ncycles,
	       g->ncycles == 1 ? "" : "s", g->total);
	if (!g->nedges)
		printf("No calls: only the gmon.out files of programs built with -pg have them.\n");
	putchar('\n');
	printf("index %% time    self  children    called     name\n");
	for (size_t i = 0; i < g->nnodes; i++) {
		if (percent(g, &g->nodes[g->order[i]]) < threshold)
			continue;
		entry(g, &g->nodes[g->order[i]]);
		printf("-----------------------------------------------\n");
	}
}

/* The edges of a node as a JSON array of {"index", "count", "calls",
   "self_seconds", "children_seconds"}, index null for outside the text. */
static void json_edges(const struct callgraph *g, const size_t *edges, size_t n, int callers)
{
	putchar('[');
	for (size_t k = 0; k < n; k++) {
		const struct cg_edge *e = &g->edges[edges[k]];
		size_t other = callers ? e->caller : e->callee;
		if (other == CG_SPONTANEOUS)
			printf("%s{\"index\":null", k ? "," : "");
		else
			printf("%s{\"index\":%u", k ? "," : "", g->nodes[other].index);
		printf(",\"count\":%" PRIu64 ",\"calls\":%" PRIu64 ",\"self_seconds\":%.6f"
		       ",\"children_seconds\":%.6f}", e->count, callgraph_sharer(g, e->callee)->calls,
		       e->self, e->children);
	}
	putchar(']');
}

void callgraph_json(const struct callgraph *g, double threshold)
{
	printf("{\"self_seconds\":%.6f,\"nodes\":[", g->total);
	int first = 1;
	for (size_t i = 0; i < g->nnodes; i++) {
		const struct cg_node *n = &g->nodes[g->order[i]];
		if (percent(g, n) < threshold)
			continue;
		printf("%s{\"index\":%u,\"name\":", first ? "" : ",", n->index);
		first = 0;
		json_string(stdout, n->name, 0);
		printf(",\"object\":");
		if (n->object)
			json_string(stdout, n->object->path, 0);
		else
			printf("null");
		printf(",\"cycle\":");
		if (n->cycle)
			printf("%u", n->cycle);
		else
			printf("null");
		printf(",\"is_cycle\":%s,\"percent\":%.4f,\"self_seconds\":%.6f"
		       ",\"children_seconds\":%.6f,\"calls\":%" PRIu64 ",\"self_calls\":%" PRIu64,
		       n->is_cycle ? "true" : "false", percent(g, n),
		       n->self, n->children, n->calls, n->self_calls);
		if (n->is_cycle) {
			printf(",\"members\":[");
			for (size_t k = 0; k < n->nmembers; k++)
				printf("%s%u", k ? "," : "", g->nodes[n->members[k]].index);
			printf("]}");
			continue;
		}
		printf(",\"callers\":");
		json_edges(g, n->callers, n->ncallers, 1);
		printf(",\"callees\":");
		json_edges(g, n->callees, n->ncallees, 0);
		putchar('}');
	}
	printf("]}\n");
}
