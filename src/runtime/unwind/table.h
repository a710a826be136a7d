/*
 * table.h - compact unwind tables of the loaded objects.
 *
 * unwind_tables_update() builds them outside signal handlers (it calls
 * dl_iterate_phdr, which takes the loader lock); unwind_tables_get() and
 * unwind_table_find() are async-signal-safe and lock-free: a reader sees
 * one immutable set through one atomic pointer, and a replaced set is
 * freed only once no walk can be reading it (unwind_read_enter).
 */
#ifndef PROFIL_UNWIND_TABLE_H
#define PROFIL_UNWIND_TABLE_H

#include <stddef.h>
#include <stdint.h>

/*
 * "sp" and "fp" are rsp and rbp on x86-64, sp and x29 on arm64: the
 * processor's walk (walk_x86_64.c, walk_aarch64.c) reads the rules of
 * its own CFI (cfi_x86_64.c, cfi_aarch64.c).
 */
enum unwind_kind {
	UNWIND_RULE_NOINFO = 0,	/* no usable CFI here: the walk stops */
	UNWIND_RULE_SP,		/* CFA = sp + cfa_off */
	UNWIND_RULE_FP,		/* CFA = fp + cfa_off */
	UNWIND_RULE_PLT,	/* x86-64 .plt: CFA = rsp + cfa_off (+8 past plt_threshold) */
	UNWIND_RULE_STOP,	/* return address undefined: the outermost frame */
	UNWIND_RULE_SIGNAL,	/* a signal trampoline ('S' CIE): registers in the ucontext */
};

/*
 * 8 bytes, so that a rule is hashed and compared as one word.  On x86-64
 * the return address is always at CFA-8 (other rules are NOINFO) and
 * byte 1 is the PLT's threshold.  On arm64 .plt has no CFI; offsets are
 * in 8-byte words (a frame of 4 KiB of locals has its frame record below
 * them, 32 KiB is not rare), and byte 1 says where x30 is: 0 still in
 * the register, as in a leaf or any function before its prologue; else
 * saved ra_off8 words from x29's slot if x29 is saved (stp x29, x30:
 * both compilers save them as a pair, whatever the frame's size), or
 * from the CFA if not.
 */
struct unwind_rule {
	uint8_t kind;
	union {
		uint8_t plt_threshold;	/* x86-64 PLT: (pc & 15) >= this means 8 more bytes pushed */
		int8_t ra_off8;		/* arm64: where x30 is saved, see above; 0: in x30 */
	};
	union {
		int16_t fp_off;		/* x86-64: rbp saved at CFA + fp_off; 0: rbp keeps its value */
		int16_t fp_off8;	/* arm64: x29 saved at CFA + 8 * fp_off8; 0: x29 keeps its value */
	};
	int32_t cfa_off;
};

/* One object: rows sorted by pc, each row good until the next one. */
struct unwind_object {
	uintptr_t lo, hi;		/* [lo, hi): pcs covered by rows */
	const uint32_t *row_pc;		/* offsets from lo, ascending */
	const uint16_t *row_rule;	/* index into rules */
	const struct unwind_rule *rules;
	uint32_t nrows, nrules;
	uintptr_t bias;			/* dlpi_addr, to match an object across rebuilds */
	size_t bytes;			/* rows + rules, for reports */
	size_t mapped;			/* 0: rows from malloc; else a read-only mapping
					   of this many bytes from row_pc's page (a
					   table of the run's, unwind_cache) */
	char name[64];			/* tail of dlpi_name, for reports and tests */
};

/* An immutable set, sorted by lo. */
struct unwind_set {
	uint32_t nobjects;
	struct unwind_set *older;	/* retired sets, freed at release */
	void *owned;			/* tables this set built (freed with it) */
	const struct unwind_object *objects;
};

/* Build-time counts, for statistics and tests (summed over updates). */
struct unwind_build_stats {
	uint64_t objects, fdes, rows, noinfo_rows, bad_fdes, bytes;
};

/*
 * Rebuild the set if dl_iterate_phdr's dlpi_adds/dlpi_subs changed since
 * the last call (always on the first).  Objects already built are reused.
 * Not async-signal-safe; thread-safe.  Returns 0, or -1 with errno.
 */
int unwind_tables_update(void);

/*
 * Where tables built by other processes can be found and this one's left
 * (preload: the run's directory, as every process of a run maps the same
 * libc): load fills out for the object dl_iterate_phdr describes at info,
 * 0 or -1; save keeps a table just built.  Outside signal handlers, under
 * update's lock.  NULL: every table is built.
 */
struct unwind_cache {
	int (*load)(const void *info, struct unwind_object *out);
	void (*save)(const void *info, const struct unwind_object *obj);
};
void unwind_tables_set_cache(const struct unwind_cache *cache);

/* Build one object's table from its program headers (used by update and by tests). */
struct unwind_build_stats;
int unwind_table_build(uintptr_t bias, const void *phdr, unsigned phnum, const char *name,
		       struct unwind_object *out, struct unwind_build_stats *st);
void unwind_table_free(struct unwind_object *obj);

/*
 * A walk reads the set between these two (unwind_walk does): an update
 * frees a replaced set only once the walks that may have seen it have
 * left.  Async-signal-safe and lock-free.
 */
unsigned unwind_read_enter(void);
void unwind_read_leave(unsigned token);

/* The current set or NULL.  Async-signal-safe. */
const struct unwind_set *unwind_tables_get(void);

/* The object covering pc, or NULL.  Async-signal-safe. */
const struct unwind_object *unwind_set_find(const struct unwind_set *set, uintptr_t pc);

/* The rule for pc in obj (NOINFO if none).  Async-signal-safe. */
const struct unwind_rule *unwind_object_rule(const struct unwind_object *obj, uintptr_t pc);

void unwind_build_stats_get(struct unwind_build_stats *out);

/* Free every set, current and retired: only when no reader can run. */
void unwind_tables_release(void);

#endif
