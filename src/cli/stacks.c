/*
 * stacks.c - the call stacks of a model (stacks.h): the files' stack
 * tables read into the model, and resolved into stacks of functions.
 * The views made from them (totals, callers, callees, the tree) are in
 * stackviews.c.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "../format/profile.h"
#include "cli.h"
#include "model.h"
#include "rows.h"
#include "stacks.h"
#include "symbols.h"

/* ---- Reading the files' tables. ---- */

int stacks_present(const struct model *m)
{
	return m->stacks && m->stacks->files;
}

/* The row of each thread entry of p, as model_add_threads made them
 * from rows on: an entry has a row if it is in use (entry 0: if it has
 * samples), in the order of the entries; unattributed rows between. */
static size_t *entry_rows(const struct model *m, const struct profile *p, size_t rows)
{
	uint32_t n = p->nthreads ? p->nthreads : 1;
	size_t *row = xmalloc(n * sizeof *row);
	size_t j = rows;
	for (uint32_t i = 0; i < n; i++) {
		row[i] = SIZE_MAX;
		if (!p->nthreads) {	/* the one row of the whole file */
			row[i] = j < m->nthread_rows ? j : SIZE_MAX;
			continue;
		}
		const struct profile_thread *e = &p->threads[i];
		if (i == 0 ? !e->samples : !e->tid)
			continue;
		while (j < m->nthread_rows && m->thread_rows[j].tid == THREAD_UNATTRIBUTED)
			j++;
		if (j < m->nthread_rows && m->thread_rows[j].tid == (i ? e->tid : THREAD_OTHERS))
			row[i] = j++;
	}
	return row;
}

/* The segment of p that holds runtime pc: one still mapped first (an
 * object closed may have left its addresses to another), the latest. */
size_t stacks_segment_of(const struct profile *p, uint64_t pc, size_t *hint)
{
	/* The pcs of a stack are mostly in the segment of the one before. */
	if (*hint < p->nsegs) {
		const struct profile_segment *s = p->segs[*hint].head;
		if (pc - s->bias - s->vaddr < s->length && !(s->flags & PROFILE_SEG_UNMAPPED))
			return *hint;
	}
	size_t found = SIZE_MAX;
	for (size_t i = p->nsegs; i-- > 0;) {
		const struct profile_segment *s = p->segs[i].head;
		if (pc - s->bias - s->vaddr >= s->length)
			continue;
		if (!(s->flags & PROFILE_SEG_UNMAPPED))
			return *hint = i;
		if (found == SIZE_MAX)
			found = i;
	}
	return found;
}

void stacks_add_file(struct model *m, const struct profile *p, const size_t *objs,
		     size_t rows)
{
	const struct profile_ext *x = p->ext;
	if (!x || !x->stacks_at)
		return;
	if (!m->stacks) {
		m->stacks = xmalloc(sizeof *m->stacks);
		memset(m->stacks, 0, sizeof *m->stacks);
	}
	struct model_stacks *ms = m->stacks;
	ms->files++;
	ms->unplaced += x->stacks_unplaced;
	/* A file its process did not complete (a crash, a kill) has the
	   statistics it last published, up to half a second old, and its
	   slots as they were at the end: the slots say more. */
	int live = p->header->state != PROFILE_COMPLETE;
	uint64_t slot_stacks = 0, slot_stop[PROFILE_STOP_COUNT] = { 0 };
	size_t *row = entry_rows(m, p, rows), hint = 0;
	/* Only the slots the file holds: a table of 65536 slots with a
	   hundred stacks is mostly holes, and each page of one read costs
	   a fault. */
	for (uint64_t k = 0, end; (k = profile_data(p, p->stacks, sizeof *p->stacks, p->nstacks, k,
						    &end)) < p->nstacks;)
	for (; k < end; k++) {
		const struct profile_stack *st = &p->stacks[k];
		const uint64_t *pcs = profile_stack_pcs(p, st);
		if (!pcs)
			continue;
		slot_stacks += st->count;
		if (st->stop < PROFILE_STOP_COUNT)
			slot_stop[st->stop] += st->count;
		size_t r = row[st->entry];
		if (m->filter && (r == SIZE_MAX || !thread_kept(m->filter, m->thread_rows[r].tid,
							       m->thread_rows[r].comm)))
			continue;
		if (ms->nlocs + st->depth > ms->caplocs) {
			ms->caplocs = ms->caplocs ? 2 * ms->caplocs : 4096;
			while (ms->caplocs < ms->nlocs + st->depth)
				ms->caplocs *= 2;
			ms->locs = xrealloc(ms->locs, ms->caplocs * sizeof *ms->locs);
		}
		if (ms->n == ms->cap) {
			ms->cap = ms->cap ? 2 * ms->cap : 256;
			ms->v = xrealloc(ms->v, ms->cap * sizeof *ms->v);
		}
		ms->v[ms->n++] = (struct raw_stack){ r, st->count,
						     st->system < st->count ? st->system : st->count,
						     ms->nlocs, st->depth, st->stop };
		for (uint32_t d = 0; d < st->depth; d++) {
			size_t seg = stacks_segment_of(p, pcs[d], &hint);
			ms->locs[ms->nlocs++] = seg == SIZE_MAX
				? (struct stack_loc){ objs[p->nsegs] == SIZE_MAX ? STACK_NO_OBJECT
										  : objs[p->nsegs], pcs[d] }
				: (struct stack_loc){ objs[seg], pcs[d] - p->segs[seg].head->bias };
		}
		ms->samples += st->count;
	}
	free(row);
	int slots_say_more = live && slot_stacks > x->stacks;
	ms->recorded += slots_say_more ? slot_stacks : x->stacks;
	for (int i = 0; i < PROFILE_STOP_COUNT; i++)
		ms->stop[i] += slots_say_more ? slot_stop[i] : x->stop[i];
}

void model_stacks_free(struct model_stacks *s)
{
	if (!s)
		return;
	free(s->locs);
	free(s->v);
	memset(s, 0, sizeof *s);
}

void stacks_open_symbols(const struct model *m, struct symbols **syms)
{
	if (!m->stacks)
		return;
	char *used = xmalloc(m->nobjects + 1);
	memset(used, 0, m->nobjects + 1);
	for (size_t i = 0; i < m->stacks->nlocs; i++)
		if (m->stacks->locs[i].object < m->nobjects)
			used[m->stacks->locs[i].object] = 1;
	for (size_t i = 0; i < m->nobjects; i++) {
		char why[1024];
		if (used[i] && !syms[i] && !(m->objects[i].flags & PROFILE_SEG_VDSO))
			syms[i] = symbols_open(&m->objects[i], why, sizeof why);
	}
	free(used);
}

/* ---- Resolving pcs to functions. ---- */

#define LINES_MAX 64	/* functions inlined into each other at one pc, kept */

static size_t resolve(const struct model *m, struct symbols **syms, const struct stack_loc *l,
		      int leaf, struct stack_line *out, size_t max, int lines)
{
	if (l->object == STACK_NO_OBJECT || l->object >= m->nobjects) {
		out[0] = (struct stack_line){ MODEL_ANON_NAME, 0, NULL, 0 };
		return 1;
	}
	const struct object *o = &m->objects[l->object];
	struct symbols *s = syms[l->object];
	/* A return address is the instruction after the call: the call's
	   own function, line and inlines are those of the byte before. */
	uint64_t a = leaf || !l->addr ? l->addr : l->addr - 1;
	uint64_t start;
	const char *outer = rows_function(o, s, a, 0, &start);
	/* No call is one byte long, so a function that starts at the byte
	   before is a signal trampoline's: glibc puts a nop before
	   __restore_rt, which a handler returns to, and starts its unwind
	   entry there so that unwinders looking at pc - 1 find it.  It is
	   named for what it is, as gdb does, whether or not the object has
	   a symbol there (Debian's libc has __restore_rt in its debug file
	   only): the same stacks read alike on every machine. */
	if (a != l->addr && start == a) {
		a = l->addr;
		rows_function(o, s, a, 0, &start);
		outer = STACK_SIGNAL_NAME;
	}
	const char *file = NULL;
	int line = 0;
	if (s && lines)
		symbols_line(s, a, &file, &line);
	struct inline_frame chain[LINES_MAX];
	size_t k = s && max > 1 && symbols_inlined(s, a)
			   ? symbols_inline_chain(s, a, chain, max - 1 < LINES_MAX ? max - 1 : LINES_MAX)
			   : 0;
	for (size_t i = 0; i < k; i++) {
		out[i] = (struct stack_line){ chain[i].name, 0, file, line };
		file = chain[i].call_file;
		line = chain[i].call_line;
	}
	out[k] = (struct stack_line){ outer, start, file, line };
	return k + 1;
}

size_t stacks_lines(const struct model *m, struct symbols **syms, const struct stack_loc *l,
		    int leaf, struct stack_line *out, size_t max)
{
	return max ? resolve(m, syms, l, leaf, out, max, 1) : 0;
}

int stacks_exact_pc(const struct model *m, struct symbols **syms, const struct stack_loc *locs,
		    uint32_t d)
{
	if (d == 0)
		return 1;
	struct stack_line line;
	return resolve(m, syms, &locs[d - 1], d - 1 == 0, &line, 1, 0) == 1
	       && strcmp(line.name, STACK_SIGNAL_NAME) == 0;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	return (h ^ v) * UINT64_C(0x100000001b3) + (h >> 29);
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	for (; *s; s++)
		h = mix(h, (unsigned char)*s);
	return h;
}

/* An open-addressed table of indices (SIZE_MAX: empty), grown at half. */
struct itable {
	size_t *v;
	size_t cap, n;
};

static void itable_init(struct itable *t, size_t cap)
{
	t->cap = cap;
	t->n = 0;
	t->v = xmalloc(cap * sizeof *t->v);
	memset(t->v, 0xff, cap * sizeof *t->v);
}

static struct stack_func *funcs_grow(struct stacks *s)
{
	if (!(s->nfuncs & (s->nfuncs - 1)) || !s->nfuncs) {
		size_t cap = s->nfuncs ? 2 * s->nfuncs : 64;
		s->funcs = xrealloc(s->funcs, cap * sizeof *s->funcs);
		s->names = xrealloc(s->names, cap * sizeof *s->names);
	}
	return &s->funcs[s->nfuncs];
}

static uint64_t func_hash(const struct object *o, const char *name)
{
	return mix(str_hash(name), (uintptr_t)o);
}

size_t stacks_func(const struct stacks *s, const struct object *o, const char *name)
{
	if (!s->capindex)
		return SIZE_MAX;
	for (size_t j = func_hash(o, name) & (s->capindex - 1); s->index[j] != SIZE_MAX;
	     j = (j + 1) & (s->capindex - 1)) {
		const struct stack_func *f = &s->funcs[s->index[j]];
		if (f->object == o && strcmp(f->name, name) == 0)
			return s->index[j];
	}
	return SIZE_MAX;
}

/* The function of that object and name, entered if new. */
static size_t intern(struct stacks *s, const struct object *o, const char *name, uint64_t start,
		     int inlined)
{
	size_t f = stacks_func(s, o, name);
	if (f != SIZE_MAX) {
		if (!s->funcs[f].start)
			s->funcs[f].start = start;
		s->funcs[f].inlined &= inlined;
		return f;
	}
	if (2 * (s->nfuncs + 1) > s->capindex) {
		size_t cap = s->capindex ? 2 * s->capindex : 1024;
		free(s->index);
		s->index = xmalloc(cap * sizeof *s->index);
		memset(s->index, 0xff, cap * sizeof *s->index);
		s->capindex = cap;
		for (size_t i = 0; i < s->nfuncs; i++) {
			size_t j = func_hash(s->funcs[i].object, s->funcs[i].name) & (cap - 1);
			while (s->index[j] != SIZE_MAX)
				j = (j + 1) & (cap - 1);
			s->index[j] = i;
		}
	}
	struct stack_func *nf = funcs_grow(s);
	s->names[s->nfuncs] = xstrdup(name);
	*nf = (struct stack_func){ s->names[s->nfuncs], o, start, inlined };
	size_t j = func_hash(o, name) & (s->capindex - 1);
	while (s->index[j] != SIZE_MAX)
		j = (j + 1) & (s->capindex - 1);
	s->index[j] = s->nfuncs;
	return s->nfuncs++;
}

/* What each distinct (loc, leaf) resolved to: functions innermost first
   in a pool of their own. */
struct locmemo {
	struct itable t;
	struct {
		struct stack_loc loc;
		int leaf;
		size_t first, n;
	} *v;
	size_t n, cap;
	size_t *pool;
	size_t npool, cappool;
};

static uint64_t loc_hash(const struct stack_loc *l, int leaf)
{
	return mix(mix(l->addr * UINT64_C(0x9e3779b97f4a7c15), l->object), (uint64_t)leaf);
}

static size_t memo_get(struct locmemo *c, struct stacks *s, const struct model *m,
		       struct symbols **syms, const struct stack_loc *l, int leaf)
{
	size_t j = loc_hash(l, leaf) & (c->t.cap - 1);
	for (; c->t.v[j] != SIZE_MAX; j = (j + 1) & (c->t.cap - 1)) {
		size_t i = c->t.v[j];
		if (c->v[i].loc.object == l->object && c->v[i].loc.addr == l->addr
		    && c->v[i].leaf == leaf)
			return i;
	}
	struct stack_line lines[LINES_MAX + 1];
	size_t k = resolve(m, syms, l, leaf, lines, LINES_MAX + 1, 0);
	const struct object *o = l->object == STACK_NO_OBJECT || l->object >= m->nobjects
					 ? NULL : &m->objects[l->object];
	if (c->npool + k > c->cappool) {
		c->cappool = 2 * (c->cappool + k);
		c->pool = xrealloc(c->pool, c->cappool * sizeof *c->pool);
	}
	size_t first = c->npool;
	for (size_t i = 0; i < k; i++)
		c->pool[c->npool++] = intern(s, o, lines[i].name, lines[i].start, i + 1 < k);
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 1024;
		c->v = xrealloc(c->v, c->cap * sizeof *c->v);
	}
	c->v[c->n].loc = *l;
	c->v[c->n].leaf = leaf;
	c->v[c->n].first = first;
	c->v[c->n].n = k;
	c->t.v[j] = c->n;
	if (2 * ++c->t.n > c->t.cap) {	/* grow: enter every one again */
		free(c->t.v);
		itable_init(&c->t, 2 * c->t.cap);
		for (size_t i = 0; i <= c->n; i++) {
			size_t h = loc_hash(&c->v[i].loc, c->v[i].leaf) & (c->t.cap - 1);
			while (c->t.v[h] != SIZE_MAX)
				h = (h + 1) & (c->t.cap - 1);
			c->t.v[h] = i;
			c->t.n++;
		}
	}
	return c->n++;
}

static uint64_t stack_hash(size_t thread, const size_t *f, size_t n)
{
	uint64_t h = mix(UINT64_C(0x84222325cbf29ce4), thread);
	for (size_t i = 0; i < n; i++)
		h = mix(h, f[i] * UINT64_C(0x9e3779b97f4a7c15));
	return h;
}

static int hotter(const void *a, const void *b)
{
	const struct stack *x = a, *y = b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	size_t n = x->depth < y->depth ? x->depth : y->depth;
	for (size_t i = 0; i < n; i++)
		if (x->funcs[i] != y->funcs[i])
			return x->funcs[i] < y->funcs[i] ? -1 : 1;
	return (x->depth > y->depth) - (x->depth < y->depth);
}

void stacks_build(struct stacks *s, const struct model *m, struct symbols **syms)
{
	memset(s, 0, sizeof *s);
	const struct model_stacks *ms = m->stacks;
	if (!ms || !ms->n)
		return;
	struct locmemo c;
	memset(&c, 0, sizeof c);
	itable_init(&c.t, 1024);
	size_t truncated = SIZE_MAX;
	struct itable seen;
	itable_init(&seen, 1024);
	/* Stack i's functions, outermost first, at offsets into s->pool
	   (the pool moves as it grows: pointers are set at the end). */
	size_t *at = xmalloc(ms->n * sizeof *at);
	s->v = xmalloc(ms->n * sizeof *s->v);
	for (size_t i = 0; i < ms->n; i++) {
		const struct raw_stack *r = &ms->v[i];
		size_t first = s->npool;
		if (r->stop != PROFILE_STOP_COMPLETE) {
			if (truncated == SIZE_MAX)
				truncated = intern(s, NULL, STACK_TRUNCATED, 0, 0);
			if (s->npool == s->cappool) {
				s->cappool = 2 * s->cappool + 64;
				s->pool = xrealloc(s->pool, s->cappool * sizeof *s->pool);
			}
			s->pool[s->npool++] = truncated;
		}
		for (uint32_t d = r->depth; d-- > 0;) {
			size_t e = memo_get(&c, s, m, syms, &ms->locs[r->locs + d],
					    stacks_exact_pc(m, syms, &ms->locs[r->locs], d));
			size_t k = c.v[e].n;
			if (s->npool + k > s->cappool) {
				s->cappool = 2 * (s->cappool + k);
				s->pool = xrealloc(s->pool, s->cappool * sizeof *s->pool);
			}
			for (size_t q = k; q-- > 0;)	/* the outer function first */
				s->pool[s->npool++] = c.pool[c.v[e].first + q];
		}
		size_t depth = s->npool - first;
		uint64_t h = stack_hash(r->thread, s->pool + first, depth);
		size_t j = h & (seen.cap - 1), dup = SIZE_MAX;
		for (; seen.v[j] != SIZE_MAX; j = (j + 1) & (seen.cap - 1)) {
			struct stack *o = &s->v[seen.v[j]];
			if (o->thread == r->thread && o->depth == depth
			    && memcmp(s->pool + at[seen.v[j]], s->pool + first, depth * sizeof *s->pool)
				       == 0) {
				dup = seen.v[j];
				break;
			}
		}
		if (dup != SIZE_MAX) {	/* the same functions: added up */
			s->v[dup].count += r->count;
			s->v[dup].system += r->system;
			s->npool = first;
		} else {
			at[s->n] = first;
			s->v[s->n] = (struct stack){ r->thread, r->count, r->system, NULL, depth };
			seen.v[j] = s->n++;
			if (2 * ++seen.n > seen.cap) {
				free(seen.v);
				itable_init(&seen, 2 * seen.cap);
				for (size_t q = 0; q < s->n; q++) {
					uint64_t hq = stack_hash(s->v[q].thread, s->pool + at[q], s->v[q].depth);
					size_t p = hq & (seen.cap - 1);
					while (seen.v[p] != SIZE_MAX)
						p = (p + 1) & (seen.cap - 1);
					seen.v[p] = q;
					seen.n++;
				}
			}
		}
		s->samples += r->count;
	}
	for (size_t i = 0; i < s->n; i++)
		s->v[i].funcs = s->pool + at[i];
	qsort(s->v, s->n, sizeof *s->v, hotter);
	free(at);
	free(seen.v);
	free(c.t.v);
	free(c.v);
	free(c.pool);
}

void stacks_free(struct stacks *s)
{
	for (size_t i = 0; i < s->nfuncs; i++)
		free(s->names[i]);
	free(s->names);
	free(s->funcs);
	free(s->v);
	free(s->pool);
	free(s->index);
	memset(s, 0, sizeof *s);
}
