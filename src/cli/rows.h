/*
 * rows.h - the rows of a report: the model's bins given to functions,
 * source lines or objects, and a function's disassembly with the
 * samples of each instruction.  The text, csv and json output of
 * report.c and the HTML page of html.c are both made from these, so
 * that they never disagree.
 */
#ifndef PROFIL_CLI_ROWS_H
#define PROFIL_CLI_ROWS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model.h"
#include "symbols.h"

enum by { BY_FUNCTION, BY_LINE, BY_OBJECT };

struct row {
	char *name;		/* function, file:line or object */
	char *function;		/* for lines: the function */
	const struct object *object;
	uint64_t start;		/* the function's start, for sorting ties */
	uint64_t count;
	uint64_t system;	/* of count, for time in the kernel */
	uint64_t calls;		/* from gmon.out's arcs (rows_calls), else 0 */
	double children;	/* seconds of its callees' time given to it */
};

struct rows {
	struct row *v;
	size_t n, cap;
};

/*
 * Open the symbols of every object of m that has samples or call arcs
 * (NULL for the vdso and objects with neither).  One line and -1 if one cannot be.
 */
int rows_open_symbols(const struct model *m, struct symbols **syms);

/*
 * Every bin of m to the row of its function, line or object (with
 * inlines, to the innermost function inlined there), hottest first.
 * A bin goes to the row that holds its first address: bins are 2 bytes
 * of text (scale 0x10000), so a function, aligned to at least 2 bytes,
 * never shares one.
 */
void rows_collect(const struct model *m, struct symbols **syms, enum by by, int inlines,
		  struct rows *r);
void rows_free(struct rows *r);

struct callgraph;
/*
 * The calls and children time of the call graph's functions given to the
 * function rows of the same object and name, as gprof -p counts them
 * (calls to itself left out).  Functions called but without samples get
 * rows of their own, after every row with samples, most calls first.
 */
void rows_calls(struct rows *r, const struct callgraph *g);

/*
 * The row a bin at addr goes to, for those that look at bins one by one
 * (the HTML page's addresses): its function ("[unknown]" or "[vdso]"
 * without symbols; with inlines, the innermost function inlined there),
 * whose start goes to *start (0 if unknown); its "file:line" or "??".
 */
const char *rows_function(const struct object *o, struct symbols *s, uint64_t addr,
			  int inlines, uint64_t *start);
void rows_line(struct symbols *s, uint64_t addr, char *buf, size_t len);

/* A line row's name, "file:line", apart: the file into buf, the line
   returned; "??" (no line table) gives "??" and 0. */
int rows_split_line(const char *name, char *buf, size_t len);

/* The last part of a path. */
const char *base_name(const char *path);

/* A function's disassembly (objdump -d -l -C), line by line. */
struct disasm {
	char **lines;		/* as objdump wrote them, newline included */
	uint64_t *addrs;	/* of each instruction; UINT64_MAX on other lines */
	uint64_t *counts;	/* samples of each line */
	size_t n;
	uint64_t samples;	/* in the function */
};

/*
 * Disassemble f of o and give each bin to the instruction that holds
 * its last byte.  0, or -1 after printing one line saying why not
 * (unless quiet).
 */
int disasm_function(const struct object *o, const struct function *f, struct disasm *d,
		    int quiet);
/* The same in two steps, so that several objdump runs can be under way
   at once: objdump started (NULL after a line saying why, unless quiet),
   and its output read into d (0, or -1 as disasm_function). */
FILE *disasm_begin(const struct object *o, const struct function *f, int quiet);
int disasm_end(FILE *p, const struct object *o, const struct function *f, struct disasm *d,
	       int quiet);
/* The steps under those: objdump started on [start, end) of o (name: for
   the line saying why not), and every line of its output after the
   banner read into d's lines and addrs (no counts), 0 or -1 (no line
   printed). */
FILE *disasm_popen(const struct object *o, const char *name, uint64_t start, uint64_t end,
		   int quiet);
int disasm_read(FILE *p, struct disasm *d);

/*
 * n functions disassembled as disasm_function (quiet) would each, but
 * those of one object (same key) a few kilobytes apart by one objdump
 * run (disasm_many.c), up to ahead runs under way at once.  Each job's
 * ok and d are set; d as disasm_function's.
 */
struct disasm_job {
	const void *key;	/* the same for functions of the same file */
	const struct object *o;
	struct function fn;
	int ok;
	struct disasm d;
};
void disasm_many(struct disasm_job *v, size_t n, int ahead);
/* d's samples and counts again, from the bins of o (another process's
   model of the same object). */
void disasm_count(const struct object *o, const struct function *f, struct disasm *d);
void disasm_free(struct disasm *d);

#endif
