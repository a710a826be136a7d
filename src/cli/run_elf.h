/*
 * run_elf.h - can profil run profile this program (run_elf.c)?
 */
#ifndef PROFIL_RUN_ELF_H
#define PROFIL_RUN_ELF_H

#include <stddef.h>

/*
 * 0 if the file at path can be profiled by preloading libprofil (or
 * cannot be read: exec will say why), or -1 with why in why (to
 * follow the program's name: "statically linked (...)").
 */
int program_profilable(const char *path, char *why, size_t size);

#endif
