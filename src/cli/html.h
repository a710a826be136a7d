/*
 * html.h - profil report --html: one self-contained page (html.c), its
 * data made from the report's rows (html_data.c), and its HTML, CSS and
 * JavaScript (src/cli/html/), compiled in by the Makefile's embed step.
 */
#ifndef PROFIL_CLI_HTML_H
#define PROFIL_CLI_HTML_H

#include <stdio.h>

#include "model.h"
#include "symbols.h"

/*
 * Write the page of files (one process each, the selector offers each
 * and their sum) to out.  exe names the program of gmon.out files.
 * Returns the command's exit status, after one line saying what is
 * wrong if it is not 0.
 */
int html_report(const char *out, char **files, const char *exe);

/* The data of the page: strings and source text shared by processes. */
struct page;
struct page *page_new(void);
void page_free(struct page *pg);

/* One process's tables (an object's fields, braces excluded); its call
   tree, or why it has none, to stacks (an element of the page's stacks
   block, html_stacks.c). */
void page_process(struct page *pg, FILE *f, FILE *stacks, const struct model *m,
		  struct symbols **syms);

/* The index of s in the page's string table (page.js's S). */
size_t page_intern(struct page *pg, const char *s);

/* What the stacks need of a process's tables: a function's row (or
   SIZE_MAX if it has none) of the nrows, and each object's row
   (SIZE_MAX: none). */
struct page_rows {
	size_t (*row)(const struct page_rows *r, const struct object *o, const char *name);
	const void *map;
	size_t nrows;
	const size_t *obj_row;
};

/* The process's call tree for the flame graph, or why it has none, as
   one JSON object (html_stacks.c). */
struct stacks;
void page_stacks(struct page *pg, FILE *f, const struct model *m, const struct stacks *s,
		 const struct page_rows *rows);

/* The string table and the source lines the processes need. */
void page_shared(struct page *pg, FILE *f);

/* The assets, made from src/cli/html/ by $(B)/gen/embed. */
extern const char html_asset_page[], html_asset_style[], html_asset_script[];
extern const char html_asset_flame_style[], html_asset_flame_script[];

#endif
