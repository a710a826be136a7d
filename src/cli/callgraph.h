/*
 * callgraph.h - the function-level call graph of a model, as gprof -q
 * computes it: per function its calls, its callers and callees with the
 * counts of each arc, its self time and the time of its descendants.
 *
 * The model's arcs (call site -> callee entry) are given to functions
 * through the symbols; the samples of every object give each function its
 * self time.  A callee's time (self and children) is shared out to its
 * callers in proportion to the calls each made, bottom up.  Functions
 * that call each other round (strongly connected, directly or through
 * others) form a cycle, numbered as gprof numbers them and shown as one
 * node too ("<cycle N as a whole>"): time is shared among the cycle's
 * callers as a whole, never along arcs inside it, so nothing loops.  A
 * function calling itself is not a cycle: those calls are its self_calls.
 *
 * Unlike gprof, calls from outside every profiled text (libc calling a
 * qsort comparator, a signal handler) are kept: they are the edges whose
 * caller is CG_SPONTANEOUS, they count in the callee's calls, and the
 * share of the callee's time they stand for goes to no function.
 * gprof drops those arcs and shows such a callee as <spontaneous> with
 * no calls; where a function has no such arcs both agree exactly.
 */
#ifndef PROFIL_CLI_CALLGRAPH_H
#define PROFIL_CLI_CALLGRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "symbols.h"

/* The caller of an edge from outside every profiled text. */
#define CG_SPONTANEOUS ((size_t)-1)

/* A function, or a cycle as a whole (is_cycle). */
struct cg_node {
	char *name;		/* demangled; "<cycle N as a whole>" for a cycle */
	const struct object *object;	/* NULL for a cycle */
	uint64_t start;		/* link-time entry address (0 for a cycle) */
	uint64_t samples;	/* self samples (a cycle: its members') */
	double self;		/* seconds of self time */
	double children;	/* seconds propagated from callees; a cycle
				   member's only from callees outside it */
	uint64_t calls;		/* calls from other functions and from outside
				   the text; a cycle's: from outside the cycle */
	uint64_t self_calls;	/* calls to itself; a cycle's: among members */
	unsigned cycle;		/* number of the cycle it is in or is, else 0 */
	int is_cycle;
	unsigned index;		/* gprof's [N]: 1 for the most total time */
	size_t *callers, ncallers;	/* edge indices, in gprof's order */
	size_t *callees, ncallees;	/* edge indices, in gprof's order */
	size_t *members, nmembers;	/* a cycle's member nodes, in gprof's order */
};

/*
 * An arc between functions: every call site of the caller into the callee
 * summed.  self and children are the seconds of the callee's time (of its
 * cycle's, if it is in one the caller is not in) given to this caller:
 * count / calls of the callee's self and children.  Both 0 for a call to
 * itself or within a cycle (only the count means something there).  A
 * spontaneous edge has its share too, though no function receives it.
 */
struct cg_edge {
	size_t caller;		/* node index, or CG_SPONTANEOUS */
	size_t callee;		/* node index, never a cycle */
	uint64_t count;
	double self, children;
};

struct callgraph {
	struct cg_node *nodes;	/* nfunctions functions, then cycle N at
				   nfunctions + N - 1 */
	size_t nnodes;
	struct cg_edge *edges;
	size_t nedges;
	size_t *order;		/* node indices by gprof's index (order[i] has index i+1) */
	size_t *by_start;	/* function nodes by (object, start), for callgraph_find */
	size_t nfunctions;
	size_t ncycles;
	double total;		/* seconds of self time of every node that is no cycle */
};

/*
 * Build the call graph of a finished model (model_finish ran).  syms has
 * one entry per object of m, as report opens them (NULL where an object
 * has no symbols: its addresses become "[unknown]").  Every function with
 * samples or calls is a node.  Exits on allocation failure as xmalloc does.
 */
void callgraph_build(struct callgraph *g, const struct model *m, struct symbols **syms);

/* The node of the function that starts at start in o, or NULL. */
const struct cg_node *callgraph_find(const struct callgraph *g, const struct object *o,
				     uint64_t start);

void callgraph_free(struct callgraph *g);

/* The node whose time a call to node callee shares out: its cycle, if it
   is in one, else itself.  The denominator of an edge's count is its calls. */
const struct cg_node *callgraph_sharer(const struct callgraph *g, size_t callee);

/* Print the graph as gprof -q does, one entry per node in index order,
   leaving out nodes below threshold percent of the time (cgprint.c). */
void callgraph_print(const struct callgraph *g, double threshold);

/* The same as one JSON object (cgprint.c; profil(1) lists the fields). */
void callgraph_json(const struct callgraph *g, double threshold);

#endif
