/*
 * symbols.c - libdwfl for one object at a time (see symbols.h).
 *
 * Each object is reported to its own offline Dwfl at base 0, so that
 * module addresses are the object's link-time addresses, which is what
 * the model holds.  libdwfl finds separate debug files (debuglink,
 * /usr/lib/debug/.build-id) by itself.
 */
#define _GNU_SOURCE
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "symbols.h"

/* libstdc++'s demangler, a C-callable function: the command links it. */
extern char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

struct name {
	char *raw, *demangled;
};

struct symbols {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	const char *path;
	struct name *names;	/* demangled names handed out, kept */
	size_t nnames;
	uint64_t last_start, last_size;	/* the last function found */
	const char *last_name;
};

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

char *demangle(const char *name)
{
	if (name[0] == '_' && name[1] == 'Z') {
		int status;
		char *d = __cxa_demangle(name, NULL, NULL, &status);
		if (d && status == 0)
			return d;
		free(d);
	}
	return xstrdup(name);
}

struct symbols *symbols_open(const struct object *o, char *why, size_t len)
{
	if (access(o->path, R_OK) != 0) {
		snprintf(why, len, "%s: cannot read: %m (it was profiled there)", o->path);
		return NULL;
	}
	struct symbols *s = calloc(1, sizeof *s);
	if (!s) {
		snprintf(why, len, "out of memory");
		return NULL;
	}
	s->path = o->path;
	s->dwfl = dwfl_begin(&callbacks);
	const char *base = strrchr(o->path, '/');
	if (s->dwfl)
		s->mod = dwfl_report_elf(s->dwfl, base ? base + 1 : o->path, o->path, -1, 0, false);
	if (!s->mod) {
		snprintf(why, len, "%s: not an ELF file libdwfl can read: %s", o->path,
			 dwfl_errmsg(-1));
		symbols_close(s);
		return NULL;
	}
	dwfl_report_end(s->dwfl, NULL, NULL);
	const unsigned char *bits;
	GElf_Addr vaddr;
	int n = dwfl_module_build_id(s->mod, &bits, &vaddr);
	if (o->build_id_len && (n != (int)o->build_id_len || memcmp(bits, o->build_id, (size_t)n))) {
		snprintf(why, len, "%s: changed since the run (its build ID differs)", o->path);
		symbols_close(s);
		return NULL;
	}
	return s;
}

void symbols_close(struct symbols *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nnames; i++) {
		free(s->names[i].raw);
		free(s->names[i].demangled);
	}
	free(s->names);
	if (s->dwfl)
		dwfl_end(s->dwfl);
	free(s);
}

const char *symbols_path(const struct symbols *s)
{
	return s->path;
}

/* The demangled form of raw, made once. */
static const char *pretty(struct symbols *s, const char *raw)
{
	if (raw[0] != '_' || raw[1] != 'Z')
		return raw;	/* libdwfl keeps it as long as the Dwfl */
	for (size_t i = s->nnames; i-- > 0;)
		if (strcmp(s->names[i].raw, raw) == 0)
			return s->names[i].demangled;
	s->names = xrealloc(s->names, (s->nnames + 1) * sizeof *s->names);
	s->names[s->nnames] = (struct name){ xstrdup(raw), demangle(raw) };
	return s->names[s->nnames++].demangled;
}

int symbols_function(struct symbols *s, uint64_t addr, struct function *f)
{
	if (s->last_name && addr >= s->last_start && addr - s->last_start < s->last_size) {
		*f = (struct function){ s->last_name, s->last_start, s->last_size };
		return 1;
	}
	GElf_Off off;
	GElf_Sym sym;
	const char *name = dwfl_module_addrinfo(s->mod, addr, &off, &sym, NULL, NULL, NULL);
	if (!name)
		return 0;
	f->name = pretty(s, name);
	f->start = addr - off;
	f->size = sym.st_size ? sym.st_size : off + 1;
	s->last_name = f->name;
	s->last_start = f->start;
	s->last_size = sym.st_size;
	return 1;
}

struct find {
	struct symbols *s;
	const char *want;
	struct function *f;
	int found;
};

int symbols_find(struct symbols *s, const char *want, struct function *f)
{
	int n = dwfl_module_getsymtab(s->mod);
	for (int i = 0; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(s->mod, i, &sym, &addr, NULL, NULL, NULL);
		if (!name || GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF)
			continue;
		const char *p = pretty(s, name);
		size_t wl = strlen(want);
		if (strcmp(name, want) == 0 || strcmp(p, want) == 0
		    || (strncmp(p, want, wl) == 0 && p[wl] == '(')) {
			*f = (struct function){ p, addr, sym.st_size };
			return 1;
		}
	}
	return 0;
}

int symbols_line(struct symbols *s, uint64_t addr, const char **file, int *line)
{
	Dwfl_Line *l = dwfl_module_getsrc(s->mod, addr);
	if (!l)
		return 0;
	Dwarf_Addr a;
	const char *src = dwfl_lineinfo(l, &a, line, NULL, NULL, NULL);
	if (!src)
		return 0;
	*file = src;
	return 1;
}

const char *symbols_comp_dir(struct symbols *s, uint64_t addr)
{
	Dwfl_Line *l = dwfl_module_getsrc(s->mod, addr);
	return l ? dwfl_line_comp_dir(l) : NULL;
}

const char *symbols_inlined(struct symbols *s, uint64_t addr)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(s->mod, addr, &bias);
	if (!cu)
		return NULL;
	Dwarf_Die *scopes = NULL;
	int n = dwarf_getscopes(cu, addr - bias, &scopes);
	const char *name = NULL;
	for (int i = 0; i < n && !name; i++) {
		if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
			continue;
		Dwarf_Attribute attr;
		const char *link = dwarf_formstring(dwarf_attr_integrate(&scopes[i],
							DW_AT_linkage_name, &attr));
		name = link ? pretty(s, link) : dwarf_diename(&scopes[i]);
	}
	free(scopes);
	return name;
}
