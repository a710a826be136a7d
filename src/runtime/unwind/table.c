/*
 * table.c - the set of unwind tables, one per loaded object, published
 * by one atomic pointer.
 *
 * unwind_tables_update() runs outside signal handlers (dl_iterate_phdr
 * takes the loader lock) and is serialised by a mutex.  The lookups,
 * unwind_tables_get, unwind_set_find and unwind_object_rule, are
 * async-signal-safe and lock-free: they read immutable memory.
 *
 * A replaced set is freed, with the tables of the objects gone, once no
 * walk can be reading it: walks announce themselves on the counter of
 * the current epoch (unwind_read_enter), and an update publishes the new
 * set, moves the epoch and waits for the old epoch's walks, which are
 * short and never block.  A program that dlopens and dlcloses in a loop
 * would otherwise keep every set it ever had.  The wait is bounded: a
 * walk abandoned for good (a handler of the program that jumped out of
 * ours) turns freeing off, and sets are kept from then on.  Sets and
 * tables come from malloc, so they never take the address range a
 * dlclose frees, where the library opened again would have gone.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include "unwind/table.h"

static _Atomic(struct unwind_set *) current;
static pthread_mutex_t update_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long seen_adds, seen_subs;
static bool seen_any;
static struct unwind_build_stats build_stats;
static atomic_uint epoch;
static atomic_uint walkers[2];
static bool keep_sets;		/* a wait timed out: sets are no longer freed */
static const struct unwind_cache *cache;

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
	if (cache && cache->load(info, o) == 0 && o->nrows) {
		s->built[s->n++] = true;
	} else if (unwind_table_build(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum,
				      info->dlpi_name, o, &build_stats) == 0 && o->nrows) {
		if (cache)
			cache->save(info, o);
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

unsigned unwind_read_enter(void)
{
	for (;;) {
		unsigned e = atomic_load(&epoch);
		atomic_fetch_add(&walkers[e & 1], 1);
		if (atomic_load(&epoch) == e)
			return e;
		atomic_fetch_sub(&walkers[e & 1], 1);
	}
}

void unwind_read_leave(unsigned token)
{
	atomic_fetch_sub(&walkers[token & 1], 1);
}

/* Move the epoch and wait, at most 100 ms, until no walk that may have
   seen the set before is left: true if none is. */
static bool wait_for_walks(void)
{
	unsigned e = atomic_fetch_add(&epoch, 1) & 1;
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (unsigned spins = 0; atomic_load(&walkers[e]); spins++) {
		if (spins % 64 == 63) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			if ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec)
			    > 100000000L)
				return false;
		}
		sched_yield();
	}
	return true;
}

/* Free old, and those of its tables that set does not have. */
static void free_set(struct unwind_set *old, const struct unwind_set *set)
{
	const bool *owned = old->owned;
	for (uint32_t i = 0; i < old->nobjects; i++) {
		if (!owned[i])
			continue;
		bool kept = false;
		for (uint32_t k = 0; set && k < set->nobjects && !kept; k++)
			kept = set->objects[k].row_pc == old->objects[i].row_pc;
		if (!kept)
			unwind_table_free((struct unwind_object *)&old->objects[i]);
	}
	free(old);
}

int unwind_tables_update(void)
{
	pthread_mutex_lock(&update_lock);
	struct unwind_set *old = atomic_load_explicit(&current, memory_order_acquire);
	size_t scratch = set_bytes(MAX_OBJECTS);
	void *mem = malloc(scratch);
	if (!mem) {
		pthread_mutex_unlock(&update_lock);
		return -1;
	}
	struct scan s = { .old = old, .first = true };
	s.objs = (struct unwind_object *)((struct unwind_set *)mem + 1);
	s.built = (bool *)(s.objs + MAX_OBJECTS);
	dl_iterate_phdr(each_object, &s);
	if (s.unchanged) {
		free(mem);
		pthread_mutex_unlock(&update_lock);
		return 0;
	}
	sort_objects(s.objs, s.built, s.n);
	struct unwind_set *set = malloc(set_bytes(s.n));
	if (!set) {
		for (uint32_t i = 0; i < s.n; i++)
			if (s.built[i])
				unwind_table_free(&s.objs[i]);
		free(mem);
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
	free(mem);
	seen_adds = s.adds;
	seen_subs = s.subs;
	seen_any = true;
	if (!keep_sets) {
		/* The new set owns every table it has: the old one goes. */
		memset(owned, 1, s.n * sizeof *owned);
		set->older = NULL;
	}
	atomic_store_explicit(&current, set, memory_order_seq_cst);
	if (old && !keep_sets) {
		if (wait_for_walks())
			free_set(old, set);
		else {
			/* From now on as if sets were never freed: each owns
			   the tables it built, and keeps the ones before. */
			keep_sets = true;
			memcpy(owned, s.built, s.n * sizeof *owned);
			set->older = old;
		}
	}
	pthread_mutex_unlock(&update_lock);
	if (s.error) {
		errno = s.error;
		return -1;
	}
	return 0;
}

void unwind_tables_set_cache(const struct unwind_cache *c)
{
	pthread_mutex_lock(&update_lock);
	cache = c;
	pthread_mutex_unlock(&update_lock);
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
	/* A table mapped from the run's cache is not read through at load
	   (unwcache.c): an index past the rules stops the walk here. */
	uint32_t rule = lo ? o->row_rule[lo - 1] : 0;
	return &o->rules[rule < o->nrules ? rule : 0];
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
		free(set);
		set = older;
	}
	seen_any = false;
	pthread_mutex_unlock(&update_lock);
}
