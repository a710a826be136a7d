/*
 * table.c - the set of unwind tables, one per loaded object, published
 * by one atomic pointer.
 *
 * unwind_tables_update() runs outside signal handlers (dl_iterate_phdr
 * takes the loader lock) and is serialised by a mutex.  The lookups,
 * unwind_tables_get, unwind_set_find and unwind_object_rule, are
 * async-signal-safe and lock-free: they read immutable memory, and a
 * replaced set is only retired (kept on a list) until
 * unwind_tables_release() at session end.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include "unwind/table.h"

static _Atomic(struct unwind_set *) current;
static pthread_mutex_t update_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long seen_adds, seen_subs;
static bool seen_any;
static struct unwind_build_stats build_stats;

enum { MAX_OBJECTS = 1024 };

struct scan {
	const struct unwind_set *old;
	struct unwind_object *objs;
	uint32_t n;
	bool *built;		/* objs[i] was built now (owned by the new set) */
	unsigned long long adds, subs;
	bool first, unchanged;
	int error;
};

/* Does a table of the old set belong to this same object? */
static bool same_object(const struct unwind_object *prev, const struct dl_phdr_info *info)
{
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	size_t n = strlen(name);
	if (n >= sizeof prev->name)
		name += n - (sizeof prev->name - 1);
	return prev->bias == info->dlpi_addr && prev->nrows && strcmp(prev->name, name) == 0;
}

static int each_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct scan *s = arg;
	if (s->first) {
		s->first = false;
		if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
			s->adds = info->dlpi_adds;
			s->subs = info->dlpi_subs;
			if (seen_any && s->adds == seen_adds && s->subs == seen_subs) {
				s->unchanged = true;
				return 1;
			}
		}
	}
	if (s->n >= MAX_OBJECTS)
		return 0;
	struct unwind_object *o = &s->objs[s->n];
	/* An object already in the set keeps its table: rebuilding it would
	 * give the same rows, at a cost of milliseconds. */
	const ElfW(Phdr) *eh = NULL;
	for (unsigned i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
			eh = &info->dlpi_phdr[i];
	if (!eh)
		return 0;
	for (uint32_t i = 0; s->old && i < s->old->nobjects; i++) {
		const struct unwind_object *prev = &s->old->objects[i];
		if (same_object(prev, info)) {
			*o = *prev;
			s->built[s->n++] = false;
			return 0;
		}
	}
	if (unwind_table_build(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum, info->dlpi_name,
			       o, &build_stats) == 0 && o->nrows) {
		s->built[s->n++] = true;
	} else if (errno == ENOMEM) {
		s->error = ENOMEM;
	}
	return 0;
}

static void sort_objects(struct unwind_object *o, bool *built, uint32_t n)
{
	for (uint32_t i = 1; i < n; i++) {
		struct unwind_object t = o[i];
		bool tb = built[i];
		uint32_t j = i;
		for (; j > 0 && o[j - 1].lo > t.lo; j--) {
			o[j] = o[j - 1];
			built[j] = built[j - 1];
		}
		o[j] = t;
		built[j] = tb;
	}
}

/*
 * One mapping per set: the header, the object array, then a flag per
 * object saying which tables the set owns.
 */
static size_t set_bytes(uint32_t n)
{
	return sizeof(struct unwind_set) + n * (sizeof(struct unwind_object) + sizeof(bool));
}

int unwind_tables_update(void)
{
	pthread_mutex_lock(&update_lock);
	struct unwind_set *old = atomic_load_explicit(&current, memory_order_acquire);
	size_t scratch = set_bytes(MAX_OBJECTS);
	void *mem = mmap(NULL, scratch, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		pthread_mutex_unlock(&update_lock);
		return -1;
	}
	struct scan s = { .old = old, .first = true };
	s.objs = (struct unwind_object *)((struct unwind_set *)mem + 1);
	s.built = (bool *)(s.objs + MAX_OBJECTS);
	dl_iterate_phdr(each_object, &s);
	if (s.unchanged) {
		munmap(mem, scratch);
		pthread_mutex_unlock(&update_lock);
		return 0;
	}
	sort_objects(s.objs, s.built, s.n);
	struct unwind_set *set = mmap(NULL, set_bytes(s.n), PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (set == MAP_FAILED) {
		for (uint32_t i = 0; i < s.n; i++)
			if (s.built[i])
				unwind_table_free(&s.objs[i]);
		munmap(mem, scratch);
		pthread_mutex_unlock(&update_lock);
		return -1;
	}
	struct unwind_object *objs = (struct unwind_object *)(set + 1);
	bool *owned = (bool *)(objs + s.n);
	memcpy(objs, s.objs, s.n * sizeof *objs);
	memcpy(owned, s.built, s.n * sizeof *owned);
	set->nobjects = s.n;
	set->objects = objs;
	set->owned = owned;
	set->older = old;
	munmap(mem, scratch);
	seen_adds = s.adds;
	seen_subs = s.subs;
	seen_any = true;
	atomic_store_explicit(&current, set, memory_order_release);
	pthread_mutex_unlock(&update_lock);
	if (s.error) {
		errno = s.error;
		return -1;
	}
	return 0;
}

const struct unwind_set *unwind_tables_get(void)
{
	return atomic_load_explicit(&current, memory_order_acquire);
}

const struct unwind_object *unwind_set_find(const struct unwind_set *set, uintptr_t pc)
{
	if (!set)
		return NULL;
	uint32_t lo = 0, hi = set->nobjects;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (set->objects[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	const struct unwind_object *o = &set->objects[lo - 1];
	return pc < o->hi ? o : NULL;
}

const struct unwind_rule *unwind_object_rule(const struct unwind_object *o, uintptr_t pc)
{
	if (pc < o->lo || pc >= o->hi || o->nrows == 0)
		return &o->rules[0];
	uint32_t off = (uint32_t)(pc - o->lo);
	uint32_t lo = 0, hi = o->nrows;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (o->row_pc[mid] <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return &o->rules[lo ? o->row_rule[lo - 1] : 0];
}

void unwind_build_stats_get(struct unwind_build_stats *out)
{
	pthread_mutex_lock(&update_lock);
	*out = build_stats;
	pthread_mutex_unlock(&update_lock);
}

void unwind_tables_release(void)
{
	pthread_mutex_lock(&update_lock);
	struct unwind_set *set = atomic_exchange(&current, NULL);
	while (set) {
		struct unwind_set *older = set->older;
		const bool *owned = set->owned;
		for (uint32_t i = 0; i < set->nobjects; i++)
			if (owned[i])
				unwind_table_free((struct unwind_object *)&set->objects[i]);
		munmap(set, set_bytes(set->nobjects));
		set = older;
	}
	seen_any = false;
	pthread_mutex_unlock(&update_lock);
}
