/*
 * srcpath.h - source file names as a line table gives them, made into
 * one name per file: relative names resolved against the compilation
 * directory, "//", "." and ".." taken out (lib//compress/../common/mem.h
 * is /build/zstd/lib/common/mem.h).
 */
#ifndef PROFIL_CLI_SRCPATH_H
#define PROFIL_CLI_SRCPATH_H

/*
 * file, if relative, under dir (NULL: none known), with empty and "."
 * components removed and each ".." taking out the one before it, as
 * text (symbolic links are not followed: the files may be gone).
 * Allocated; the caller frees it.
 */
char *srcpath_canonical(const char *dir, const char *file);

#endif
