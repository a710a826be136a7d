/*
 * cli.h - what the parts of the profil command share.
 */
#ifndef PROFIL_CLI_H
#define PROFIL_CLI_H

#include <stddef.h>

/* Print "profil: MESSAGE" on one line of standard error. */
void error_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Allocation that never returns NULL: the command exits instead. */
void *xmalloc(size_t n);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);

/* The subcommands; each returns the command's exit status. */
int cmd_run(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_export(int argc, char **argv);

/* The list of files the last `profil run` in this directory made. */
#define RUN_LIST ".profil-last"

/*
 * The files to read: the arguments, or those of the last run.  Returns
 * a NULL-terminated array, or NULL after printing why there is none.
 */
char **input_files(int argc, char **argv);
void free_files(char **files);

#endif
