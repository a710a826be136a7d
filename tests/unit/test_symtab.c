/*
 * src/cli/symtab.c answers as libdwfl's dwfl_module_addrinfo() does,
 * address by address: over symbols made here to be awkward (aliases of
 * every binding, nested symbols, a local function with a global label
 * without a size at an address inside it, labels without a size after
 * sized symbols) and over real objects (libc, libstdc++ with its C++
 * aliases, this program, cc1 when installed).  And the call frame
 * information gives the range of a function without a symbol.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../src/cli/symtab.h"

/* Awkward symbols, in this program's own text. */
__asm__(".text\n"
	".p2align 4\n"
	".globl st_outer\n.type st_outer, @function\n"
	"st_outer:\n"
	".fill 16, 1, 0x90\n"
	"st_inner:\n"	/* local, nested in st_outer */
	".fill 16, 1, 0x90\n"
	".size st_inner, 16\n"
	".fill 16, 1, 0x90\n"
	".size st_outer, 48\n"
	/* Aliases: global, weak and local, of the same start and size. */
	".globl st_alias_g\n.type st_alias_g, @function\n"
	".weak st_alias_w\n.type st_alias_w, @function\n"
	".type st_alias_l, @function\n"
	"st_alias_l:\nst_alias_w:\nst_alias_g:\n"
	".fill 32, 1, 0x90\n"
	".size st_alias_g, 32\n.size st_alias_w, 32\n.size st_alias_l, 24\n"
	/* Same start, different sizes and bindings. */
	".weak st_long_w\n.type st_long_w, @function\n"
	".globl st_short_g\n.type st_short_g, @function\n"
	"st_long_w:\nst_short_g:\n"
	".fill 40, 1, 0x90\n"
	".size st_long_w, 40\n.size st_short_g, 12\n"
	/* A local function, a global label without a size inside it. */
	".type st_local, @function\n"
	"st_local:\n"
	".fill 8, 1, 0x90\n"
	".globl st_label_g\n"
	"st_label_g:\n"
	".fill 8, 1, 0x90\n"
	".size st_local, 16\n"
	/* Labels without a size after the sized symbols: libdwfl names
	   them only past the end of every sized symbol before them. */
	".globl st_bare\n"
	"st_bare:\n"
	".fill 24, 1, 0x90\n"
	"st_bare_local:\n"
	".fill 24, 1, 0x90\n"
	".globl st_end\n"
	"st_end:\n"
	"ret\n");

extern char st_outer[], st_end[];

struct object {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct symtab *tab;
};

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static int open_object(struct object *o, const char *path)
{
	o->dwfl = dwfl_begin(&callbacks);
	o->mod = o->dwfl ? dwfl_report_elf(o->dwfl, "x", path, -1, 0, false) : NULL;
	if (!o->mod) {
		if (o->dwfl)
			dwfl_end(o->dwfl);
		return -1;
	}
	dwfl_report_end(o->dwfl, NULL, NULL);
	o->tab = symtab_make(o->mod);
	return 0;
}

static void close_object(struct object *o)
{
	symtab_free(o->tab);
	dwfl_end(o->dwfl);
}

/* Does symtab answer for addr what libdwfl does? */
static void same(struct object *o, uint64_t addr)
{
	GElf_Off off;
	GElf_Sym sym;
	const char *want = dwfl_module_addrinfo(o->mod, addr, &off, &sym, NULL, NULL, NULL);
	struct symhit h;
	int got = symtab_symbol(o->tab, addr, &h);
	if (!want) {
		if (got)
			fail_msg("%#lx: libdwfl names nothing, symtab %s", (unsigned long)addr, h.raw);
		return;
	}
	if (!got || strcmp(want, h.raw) != 0 || h.start != addr - off || h.size != sym.st_size)
		fail_msg("%#lx: libdwfl %s at %#lx (%lu bytes), symtab %s at %#lx (%lu)",
			 (unsigned long)addr, want, (unsigned long)(addr - off),
			 (unsigned long)sym.st_size, got ? h.raw : "nothing",
			 got ? (unsigned long)h.start : 0ul, got ? (unsigned long)h.size : 0ul);
}

/* The link-time address of a pc of this program. */
static uint64_t link_time(const void *pc)
{
	Dl_info info;
	struct link_map *map;
	assert_true(dladdr1(pc, &info, (void **)&map, RTLD_DL_LINKMAP) != 0);
	return (uint64_t)(uintptr_t)pc - map->l_addr;
}

static void awkward_symbols(void **state)
{
	(void)state;
	struct object o;
	assert_int_equal(open_object(&o, "/proc/self/exe"), 0);
	uint64_t from = link_time(st_outer), to = link_time(st_end) + 2;
	for (uint64_t a = from - 16; a < to; a++)
		same(&o, a);
	/* And what libdwfl says there, so the region is awkward indeed. */
	struct symhit h;
	assert_true(symtab_symbol(o.tab, from + 16, &h));
	assert_string_equal(h.raw, "st_outer");	/* globals first */
	assert_true(symtab_symbol(o.tab, from + 48, &h));
	assert_string_equal(h.raw, "st_alias_g");
	close_object(&o);
}

/* Every boundary of every sized symbol, and addresses spread over the
 * executable segments, of a real object. */
/* spread: how many addresses; boundaries are checked up to as many. */
static void real_object(const char *path, unsigned spread)
{
	struct object o;
	if (open_object(&o, path) != 0) {
		printf("not on this machine: %s\n", path);
		return;
	}
	int n = dwfl_module_getsymtab(o.mod);
	unsigned checked = 0;
	for (int i = 1; i < n && checked < spread; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		if (!dwfl_module_getsym_info(o.mod, i, &sym, &addr, NULL, NULL, NULL)
		    || GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_size)
			continue;
		same(&o, addr - 1);
		same(&o, addr);
		same(&o, addr + sym.st_size - 1);
		same(&o, addr + sym.st_size);
		checked += 4;
	}
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(o.mod, &bias);
	size_t nph;
	assert_int_equal(elf_getphdrnum(elf, &nph), 0);
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		uint64_t step = ph.p_memsz / spread + 1;
		for (uint64_t a = ph.p_vaddr; a < ph.p_vaddr + ph.p_memsz; a += step + (a & 7))
			same(&o, a);
	}
	close_object(&o);
}

static const char *libc_path(void)
{
	static char path[4096];
	Dl_info info;
	assert_true(dladdr((void *)printf, &info) != 0);
	snprintf(path, sizeof path, "%s", info.dli_fname);
	return path;
}

static void real_objects(void **state)
{
	(void)state;
	real_object(libc_path(), 2000);
	real_object("/usr/lib/x86_64-linux-gnu/libstdc++.so.6", 2000);
	real_object("/proc/self/exe", 3000);
	real_object("/usr/lib/gcc/x86_64-linux-gnu/12/cc1", 300);
}

/* A static function of this program: its call frame information's
 * range is where its code is. */
__attribute__((noinline)) static int framed(int x)
{
	volatile int v = x;
	for (int i = 0; i < 10; i++)
		v += i * x;
	return v;
}

/* One that saves registers, so that its call frame table has several
 * rows: the range is still the whole function's. */
static int (*volatile call)(int) = framed;	/* any registers clobbered */
__attribute__((noinline)) static int pushes(int x)
{
	int a = call(x), b = call(a), c = call(b + a), d = call(c ^ b);
	return a + b * 3 + c * 5 + d * 7 + call(a + b + c + d);
}

static void frame_ranges(void **state)
{
	(void)state;
	struct object o;
	assert_int_equal(open_object(&o, "/proc/self/exe"), 0);
	uint64_t at = link_time((const void *)framed), start, end;
	assert_true(symtab_frame(o.tab, at, &start, &end));
	assert_true(start == at);
	struct symhit h;
	assert_true(symtab_symbol(o.tab, at, &h));
	/* As its symbol says, with the padding before the next function. */
	assert_true(h.start == at && end >= at + h.size && end < at + h.size + 16);
	assert_true(symtab_frame(o.tab, end - 1, &start, &end));	/* the cached one */
	assert_true(start == at);
	assert_false(symtab_frame(o.tab, 0, &start, &end));
	at = link_time((const void *)pushes);
	assert_true(symtab_symbol(o.tab, at, &h) && h.start == at && h.size > 16);
	for (uint64_t a = at; a < at + h.size; a++) {
		assert_true(symtab_frame(o.tab, a, &start, &end));
		assert_true(start == at && end >= at + h.size);
	}
	close_object(&o);
	assert_int_equal(framed(1), 46);
	assert_true(pushes(1) != 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(awkward_symbols),
		cmocka_unit_test(real_objects),
		cmocka_unit_test(frame_ranges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
