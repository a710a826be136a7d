/*
 * diff.h - profil report --diff BASE [NEW]: each function's time in two
 * profiles, matched by function and object name (so across rebuilds),
 * as text, csv, json or an HTML page (diff.c, diff_html.c).
 */
#ifndef PROFIL_CLI_DIFF_H
#define PROFIL_CLI_DIFF_H

#include <stdint.h>
#include <stdio.h>

#include "model.h"

enum diff_fmt { DIFF_TEXT, DIFF_CSV, DIFF_JSON };

struct diff_row {
	char *function;
	const char *object;	/* its file name, owned by the row's model */
	uint64_t count[2];	/* samples in base, new */
	double seconds[2];	/* CPU seconds */
	double share[2];	/* percent of each profile's samples */
	double error;		/* two standard errors of the change in seconds */
};

struct diff {
	const char *name[2];	/* as given: BASE, NEW (or "the last run") */
	uint64_t samples[2];
	double cpu[2];		/* CPU seconds of each profile */
	struct diff_row *v;	/* the largest change in seconds first */
	size_t n;
};

/*
 * The whole of report --diff: base's files against news (NULL-terminated),
 * printed as fmt or, with html, as a page written there; rows whose share
 * is below threshold in both left out.  The command's exit status, after
 * one line saying what is wrong if it is not 0.
 */
int diff_report(char **base, const char *base_name, char **news, const char *new_name,
		const char *exe, const struct thread_filter *filter, enum diff_fmt fmt,
		double threshold, const char *html);

/* report's hook: --diff BASE with the operands (NEW, else the last
   run); the exit status.  diff_conflicts: 1 after one line if a view
   --diff has not was asked for too. */
struct opts;
int diff_command(const char *base, int argc, char **argv, const char *exe,
		 const struct thread_filter *filter, enum diff_fmt fmt, double threshold,
		 const char *html);
int diff_conflicts(const struct opts *o);

/* The page of d (diff_html.c), with the flame graph of diff_flame
   (a piece of the page, made first) after its heading. */
void diff_html(FILE *f, const struct diff *d, double threshold, const char *flame);

/* The differential flame graph of new against base, as a piece of an
   HTML page: or a line saying why there is none (diff_flame.c). */
struct symbols;
void diff_flame(FILE *f, const struct model *base, struct symbols **base_syms,
		const struct model *new, struct symbols **new_syms);

#endif
