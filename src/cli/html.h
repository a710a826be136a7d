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

/* One process's tables (an object's fields, braces excluded). */
void page_process(struct page *pg, FILE *f, const struct model *m, struct symbols **syms);

/* The string table and the source lines the processes need. */
void page_shared(struct page *pg, FILE *f);

/* The assets, made from src/cli/html/ by $(B)/gen/embed. */
extern const char html_asset_page[], html_asset_style[], html_asset_script[];

#endif
