/*
 * symtab.h - which function of one object holds an address: the symbol
 * libdwfl's dwfl_module_addrinfo() would name, answered from a table
 * made once per object (not from a walk of the whole symbol table at
 * each address), and where no symbol with a size holds it, the function
 * range that the object's call frame information (.eh_frame, else
 * .debug_frame) gives: every function of Debian's stripped libraries
 * has one.
 */
#ifndef PROFIL_CLI_SYMTAB_H
#define PROFIL_CLI_SYMTAB_H

#include <elfutils/libdwfl.h>
#include <stdint.h>

struct symtab;

struct symtab *symtab_make(Dwfl_Module *mod);
void symtab_free(struct symtab *t);

struct symhit {
	const char *raw;	/* the symbol's name (libdwfl's), NULL for none */
	uint64_t start;
	uint64_t size;		/* 0: a symbol without a size */
};

/* dwfl_module_addrinfo()'s symbol for addr: 1, or 0 if it names none. */
int symtab_symbol(struct symtab *t, uint64_t addr, struct symhit *h);

/* The function range of the call frame information that holds addr
   ([*start, *end)): 1, or 0 if none does. */
int symtab_frame(struct symtab *t, uint64_t addr, uint64_t *start, uint64_t *end);

#endif
