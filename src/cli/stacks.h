/*
 * stacks.h - the call stacks of a model (SPEC section 10): what report's
 * total column, --callers, --callees, --tree and --folded, export's pprof
 * samples, merge and the HTML page's flame graph are all made from.
 *
 * Two layers.  While files are read (model_add_file), each file's stack
 * table goes into m->stacks as it is: per thread row, the pcs of each
 * stack, innermost first, turned into (object, link-time address) by the
 * file's segments, so that the stacks of many processes and runs add up
 * as their histograms do.  Under a thread filter only the stacks of the
 * threads kept are taken.
 *
 * Once the symbols are open, stacks_build resolves them: each pc to its
 * function (a return address is looked up at pc - 1, the call that made
 * it), with the functions inlined there as frames of their own, and the
 * stacks that resolve to the same functions (per thread) added up.  A
 * stack whose walk did not reach the outermost frame gets one more frame
 * outermost, "[truncated]", so that it is never taken for a whole one.
 */
#ifndef PROFIL_CLI_STACKS_H
#define PROFIL_CLI_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "../format/profile.h"
#include "model.h"
#include "symbols.h"

/* ---- What the model keeps of the files (raw stacks). ---- */

/* A pc of a stack: in m->objects[object] at link-time addr, or, with
   object STACK_NO_OBJECT, a runtime pc in no segment of its file. */
#define STACK_NO_OBJECT ((size_t)-1)
struct stack_loc {
	size_t object;
	uint64_t addr;
};

struct raw_stack {
	size_t thread;		/* index of m->thread_rows, as model_add_file
				   made them (before any sorting) */
	uint64_t count, system;
	size_t locs;		/* index of its first (innermost) loc */
	uint32_t depth;
	uint8_t stop;		/* enum profile_stop */
};

struct model_stacks {
	struct stack_loc *locs;
	size_t nlocs, caplocs;
	struct raw_stack *v;
	size_t n, cap;
	unsigned files;		/* files with a stack table (with stacks on) */
	uint64_t samples;	/* the counts of v, summed */
	/* The files' own statistics (struct profile_ext), summed. */
	uint64_t recorded, unplaced;
	uint64_t stop[PROFILE_STOP_COUNT];
};

/*
 * The stacks of profile p into m->stacks (made if need be): objs[i] is
 * the index in m->objects of the file's segment i, objs[p->nsegs] that
 * of the object of pcs in no segment when the process's perf map names
 * them (SIZE_MAX: none, they stay MODEL_ANON_NAME), rows the index of
 * m->thread_rows at which model_add_threads put the file's first row.
 * Nothing for a file without stacks.
 */
void stacks_add_file(struct model *m, const struct profile *p, const size_t *objs,
		     size_t rows);
void model_stacks_free(struct model_stacks *s);

/* The segment of p that holds runtime pc (SIZE_MAX: none): one still
   mapped first, else the latest closed.  *hint: the last one found
   (start with 0), tried first. */
size_t stacks_segment_of(const struct profile *p, uint64_t pc, size_t *hint);

/* The symbols of the objects only stacks pass through (rows_open_symbols
   opens those with samples): NULL, without a word, where they cannot be
   had; the frames there are "[unknown]". */
void stacks_open_symbols(const struct model *m, struct symbols **syms);

/* Does the model have stacks (some file had a stack table)? */
int stacks_present(const struct model *m);

/* ---- Stacks of functions (stacks_build). ---- */

/* A function as the stacks name it: by object and name, as the rows of
   the flat profile are (rows_function), so that the two match. */
struct stack_func {
	const char *name;		/* owned by the stacks */
	const struct object *object;	/* NULL: a frame of no object
					   ("[truncated]", "[unknown]") */
	uint64_t start;			/* link-time entry; 0 if unknown or inlined */
	int inlined;			/* only ever seen inlined into another */
};

struct stack {
	size_t thread;		/* as struct raw_stack's */
	uint64_t count, system;
	const size_t *funcs;	/* depth indices of stacks.funcs, outermost first */
	size_t depth;
};

/* The frame of a signal trampoline whose object names no symbol there:
   the handler frames above it interrupted the frames below. */
#define STACK_SIGNAL_NAME "[signal handler called]"

struct stacks {
	struct stack_func *funcs;
	size_t nfuncs;
	struct stack *v;	/* distinct per (thread, functions), hottest first */
	size_t n;
	uint64_t samples;	/* the counts of v, summed */
	/* Internal: the frames' pool, the names, the lookup of funcs. */
	size_t *pool;
	size_t npool, cappool;
	char **names;
	size_t *index;
	size_t capindex;
};

/*
 * Resolve m's stacks (model_finish ran; syms[i] the symbols of
 * m->objects[i], or NULL) into s.  s is empty (n 0) if m has none.
 */
void stacks_build(struct stacks *s, const struct model *m, struct symbols **syms);
void stacks_free(struct stacks *s);

/* The function of that object and name, or SIZE_MAX if no stack has it. */
size_t stacks_func(const struct stacks *s, const struct object *o, const char *name);

/*
 * Per function (total[nfuncs], self[nfuncs], either may be NULL): the
 * samples of the stacks it is in, counted once per stack however often
 * it recurs (its inclusive samples), and of those it is innermost in.
 */
void stacks_totals(const struct stacks *s, uint64_t *total, uint64_t *self);

/*
 * The direct callers (or callees) of function f: per neighbour, the
 * samples of the stacks in which it calls f (f calls it), counted once
 * per stack; hottest first.  A caller STACK_ROOT stands for f being
 * outermost; a callee STACK_SELF for f being innermost.  Their number;
 * *out allocated (the caller frees it).
 */
#define STACK_ROOT ((size_t)-1)
#define STACK_SELF ((size_t)-2)
struct stack_edge {
	size_t func;
	uint64_t count;
};
size_t stacks_callers(const struct stacks *s, size_t f, struct stack_edge **out);
size_t stacks_callees(const struct stacks *s, size_t f, struct stack_edge **out);

/*
 * The stacks as a tree of calls: node 0 the root (func STACK_ROOT, total
 * every sample taken); a node per distinct path from the outermost frame
 * (inverted: from the innermost, so that a node's children are its
 * callers), its samples in total and those whose stack ends at it in
 * self.  Children are linked hottest first.  Only the stacks of thread
 * row `thread`, or of all with STACK_ALL_THREADS.
 */
#define STACK_ALL_THREADS ((size_t)-1)
#define STACK_NONE ((size_t)-1)
struct stack_node {
	size_t func;		/* index of stacks.funcs */
	uint64_t total, self;
	size_t parent;		/* STACK_NONE for the root */
	size_t child, next;	/* first child, next sibling: STACK_NONE if none */
};
struct stack_tree {
	struct stack_node *v;
	size_t n;
};
void stacks_tree(const struct stacks *s, size_t thread, int inverted, struct stack_tree *t);
void stack_tree_free(struct stack_tree *t);

/*
 * The frames of one loc, innermost first, for those that need the
 * addresses (pprof's locations): up to max of them; their number (at
 * least 1).  leaf: the loc is a stack's sampled pc, looked up where it
 * is; else a return address, looked up at the call before it.
 */
struct stack_line {
	const char *name;	/* owned by syms, or a constant */
	uint64_t start;		/* of the function (0: inlined or unknown) */
	const char *file;	/* NULL if unknown */
	int line;		/* 0 if unknown */
};
size_t stacks_lines(const struct model *m, struct symbols **syms, const struct stack_loc *l,
		    int leaf, struct stack_line *out, size_t max);
/* Is frame d of a stack (locs: its frames, innermost first) an exact pc,
   to be resolved as leaf: the innermost frame, or the frame a signal
   interrupted (the one outside a signal trampoline), which is not a
   return address and must not be looked up at the byte before. */
int stacks_exact_pc(const struct model *m, struct symbols **syms, const struct stack_loc *locs,
		    uint32_t d);

/* The name of the frame that ends a stack not complete. */
#define STACK_TRUNCATED "[truncated]"

#endif
