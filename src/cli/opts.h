/*
 * opts.h - the options of profil's subcommands, from one table each:
 * parsing (over getopt_long) with one line that names the option for
 * every mistake, and --help with one line per option, both made from
 * the same table so that neither can forget an option (opts.c).
 */
#ifndef PROFIL_CLI_OPTS_H
#define PROFIL_CLI_OPTS_H

#include <getopt.h>
#include <stdio.h>

#define OPTS_MAX 32

struct opt {
	const char *name;	/* the long name, without "--" */
	char letter;		/* the short form, or 0 */
	int key;		/* what opts_next returns for it (unique, not 0) */
	const char *value;	/* its value's name for --help; NULL: takes none */
	const char *help;	/* one line for --help */
};

struct opts {
	const char *cmd;	/* "report": messages and --help */
	const char *operands;	/* after [OPTION...] in --help: "[FILE...]" */
	const char *about;	/* one line on what the command does */
	const struct opt *v;	/* ended by an entry with name NULL */
	int stop_at_operand;	/* options end at the first operand (run) */
	/* Filled in by opts_next. */
	size_t n;
	struct option longs[OPTS_MAX + 1];
	char shorts[3 * OPTS_MAX + 3];
	const char *given[OPTS_MAX];	/* each option's value ("" for none), NULL: absent */
};

/*
 * The next option of argv: its key with *value its value (NULL if it
 * takes none); -1 after the last (optind indexes the first operand); 0
 * after one line naming what is wrong: an unknown or ambiguous option, a
 * value missing (or given to an option that takes none), or a value
 * option given twice with different values.  A value in the next
 * argument that begins with '-' is taken for a missing value: it is
 * written attached (--comm=-x) to mean it.  Call first with optind 0.
 */
int opts_next(struct opts *o, int argc, char **argv, const char **value);

/* Was the option of that key given? */
int opts_given(const struct opts *o, int key);

/*
 * If more than one of the keys (ended by 0) were given: 1 after one line
 * "--a and --b: WHY"; else 0.
 */
int opts_exclusive(const struct opts *o, const int *keys, const char *why);

/* --help: the usage line, the about line, one line per option. */
void opts_help(const struct opts *o, FILE *f);

#endif
