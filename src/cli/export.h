/*
 * export.h - the writers of profil export (export.c), given a model
 * that is already read, for the command and for tests/fuzz/export.c.
 */
#ifndef PROFIL_CLI_EXPORT_H
#define PROFIL_CLI_EXPORT_H

#include "model.h"
#include "symbols.h"

/*
 * m as gzipped pprof to out; syms[i] the symbols of m->objects[i], or
 * NULL for none.  0, or -1 after one line saying why.
 */
int export_pprof(const struct model *m, struct symbols **syms, const char *out);

/*
 * m's call stacks as folded stacks ("a;b;c COUNT", outermost first) to
 * out.  0, or -1 after one line saying why (a model without stacks too).
 */
int export_folded(const struct model *m, struct symbols **syms, const char *out);

/*
 * The histogram of one object of m (the one named, else the main
 * program) as gmon.out to out.  0, or -1 after one line saying why.
 */
int export_gmon(const struct model *m, const char *name, const char *out);

#endif
