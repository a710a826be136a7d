/*
 * stackprint.h - report's views of the call stacks (stackprint.c), made
 * from the stacks of stacks.h.
 */
#ifndef PROFIL_CLI_STACKPRINT_H
#define PROFIL_CLI_STACKPRINT_H

#include <stdint.h>
#include <stdio.h>

#include "model.h"
#include "rows.h"
#include "stacks.h"

/* The header's line on the stacks (how many, how complete, why not),
   if the files have stacks; in JSON, a "stacks": field and a comma. */
void stacks_note(const struct model *m);
void stacks_json(const struct model *m);

/*
 * The total (inclusive) samples of each row of a flat profile by
 * function, allocated: rows of their own are added first for the
 * functions the stacks pass through without samples of their own
 * (inlined ones only with inlines), hottest first.
 */
uint64_t *stacks_row_totals(const struct stacks *s, struct rows *r, int inlines);

/* --callers or --callees (callees) of every function want names, with
   shares of its total; text or JSON.  0, or 1 after one line. */
int stacks_print_neighbours(const struct model *m, const struct stacks *s, const char *want,
			    int callees, int json, int full);

/* --tree: the calls from the outermost frames, leaving out those below
   threshold percent of the samples.  0, or 1 after one line. */
int stacks_print_tree(const struct model *m, const struct stacks *s, double threshold, int json,
		      int full);

/* Folded stacks, "a;b;c COUNT", outermost first, a line per distinct
   stack (threads summed).  0, or -1 on a write error. */
int stacks_write_folded(const struct stacks *s, FILE *f);

#endif
