/*
 * symbols.h - addresses of an object to functions, source lines and
 * inlined functions, through elfutils' libdwfl (.symtab, .dynsym, DWARF,
 * build IDs, separate debug files), and C++, Rust and D names demangled.
 */
#ifndef PROFIL_CLI_SYMBOLS_H
#define PROFIL_CLI_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

struct symbols;

/*
 * Open the object's file and check that it is the one profiled (same
 * build ID).  NULL, with a reason in why, if it is missing or changed.
 * JIT or anonymous code (OBJECT_ANON) has the names of its perf map, if
 * its path is one, or none; never NULL.
 */
struct symbols *symbols_open(const struct object *o, char *why, size_t len);
void symbols_close(struct symbols *s);

/* The function that holds addr (link-time): its name, start and size. */
struct function {
	const char *name;	/* demangled; owned by symbols */
	uint64_t start, size;
};
int symbols_function(struct symbols *s, uint64_t addr, struct function *f);

/*
 * The functions of that name, for --annotate: raw or demangled, or as
 * cxxname_matches() names them (without return type, parameters, clone
 * suffix, final template arguments), one for each address.  Their
 * number; *out allocated (the caller frees it), names owned by s.
 */
size_t symbols_find_all(struct symbols *s, const char *name, struct function **out);

/* Source file and line of addr; 0 if the object has no line table.
   The file's name is absolute (under the compilation directory if the
   table's is relative) and canonical (srcpath.h). */
int symbols_line(struct symbols *s, uint64_t addr, const char **file, int *line);

/* The compilation directory of addr's line (relative source file names
 * are relative to it), or NULL. */
const char *symbols_comp_dir(struct symbols *s, uint64_t addr);

/* The innermost function inlined at addr, or NULL if none is. */
const char *symbols_inlined(struct symbols *s, uint64_t addr);

/*
 * Every function inlined at addr, innermost first (at most max of them):
 * its name (owned by s), and the file and line of its caller it was
 * inlined at (NULL, 0 if unknown).  Their number; 0 if none is.
 */
struct inline_frame {
	const char *name;
	const char *call_file;
	int call_line;
};
size_t symbols_inline_chain(struct symbols *s, uint64_t addr, struct inline_frame *out,
			    size_t max);

/* The file the symbols came from. */
const char *symbols_path(const struct symbols *s);

/* A C++, Rust (legacy or v0) or D name demangled (malloc'd), or a copy
   of name. */
char *demangle(const char *name);

#endif
