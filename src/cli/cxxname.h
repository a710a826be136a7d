/*
 * cxxname.h - the parts of a demangled C++ (or Rust) function name:
 * where its return type ends, where its parameters begin, its template
 * arguments; for naming a function to --annotate without them, and for
 * shortening long names in the text report.
 */
#ifndef PROFIL_CLI_CXXNAME_H
#define PROFIL_CLI_CXXNAME_H

#include <stddef.h>

/*
 * The function's qualified name within name: from *start (after a
 * return type, as template functions have one) to the returned end
 * (before its parameters, "const", "[clone .cold]").  Operators and
 * "(anonymous namespace)" are part of the name.
 */
size_t cxxname_span(const char *name, size_t *start);

/*
 * Does want name the function name: the whole of it, its qualified
 * name (cxxname_span), or that without the template arguments it ends
 * with ("work" for "int work<int>(int)")?
 */
int cxxname_matches(const char *name, const char *want);

/*
 * name shortened to about max characters if longer, as a text column
 * can show it: each template argument list becomes "<...>", then, if
 * still too long, each parameter list "(...)".  Into buf of len bytes;
 * returns buf, or name itself if it is short enough.
 */
const char *cxxname_short(const char *name, size_t max, char *buf, size_t len);

#endif
