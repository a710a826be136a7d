/*
 * export.c - profil export: the model written in the formats other tools
 * read.
 *
 *   pprof  gzipped profile.proto (src/format/pprof.proto) through
 *          protobuf-c and zlib: a mapping for each executable range of
 *          each object (with its build ID), a location for each counted
 *          bin, with its function, line and inlined function, and
 *          sample types samples/count and cpu/nanoseconds.
 *   gmon   gmon.out for GNU gprof, through src/format/gmon.h: the
 *          histogram of one object (the program unless --object says
 *          otherwise) at link-time addresses, 2-byte bins, and the call
 *          arcs into it (from gmon.out input).
 *
 * Files are written under a temporary name and renamed into place, so
 * that no half-written file is ever left under the name asked for.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "../format/gmon.h"
#include "../format/profile.h"
#include "bidcache.h"
#include "cli.h"
#include "export.h"
#include "model.h"
#include "opts.h"
#include "pprof.pb-c.h"
#include "rows.h"
#include "stackprint.h"
#include "stacks.h"
#include "symbols.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__ValueType ValueType;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Mapping Mapping;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;

/* ---- Strings and functions, made unique with a small hash table. ---- */

struct table {
	char **keys;
	uint64_t *values;
	size_t n, cap;		/* cap: a power of two */
};

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* The value of key, or (if new) value, entered. */
static uint64_t table_get(struct table *t, const char *key, uint64_t value, int *is_new)
{
	if (2 * (t->n + 1) > t->cap) {
		struct table g = { 0 };
		g.cap = t->cap ? t->cap * 2 : 1024;
		g.keys = calloc(g.cap, sizeof *g.keys);
		g.values = calloc(g.cap, sizeof *g.values);
		if (!g.keys || !g.values) {
			error_line("out of memory");
			exit(2);
		}
		for (size_t i = 0; i < t->cap; i++) {
			if (!t->keys[i])
				continue;
			size_t j = hash(t->keys[i]) & (g.cap - 1);
			while (g.keys[j])
				j = (j + 1) & (g.cap - 1);
			g.keys[j] = t->keys[i];
			g.values[j] = t->values[i];
		}
		g.n = t->n;
		free(t->keys);
		free(t->values);
		*t = g;
	}
	size_t j = hash(key) & (t->cap - 1);
	while (t->keys[j]) {
		if (strcmp(t->keys[j], key) == 0) {
			*is_new = 0;
			return t->values[j];
		}
		j = (j + 1) & (t->cap - 1);
	}
	t->keys[j] = xstrdup(key);
	t->values[j] = value;
	t->n++;
	*is_new = 1;
	return value;
}

static void table_free(struct table *t)
{
	for (size_t i = 0; i < t->cap; i++)
		free(t->keys[i]);
	free(t->keys);
	free(t->values);
}

struct builder {
	Profile *p;
	struct table strings, functions, locations;
	size_t cap_strings, cap_functions, cap_locations, cap_samples;
};

static int64_t str(struct builder *b, const char *s)
{
	int is_new;
	uint64_t id = table_get(&b->strings, s, b->p->n_string_table, &is_new);
	if (is_new) {
		if (b->p->n_string_table == b->cap_strings) {
			b->cap_strings = b->cap_strings ? b->cap_strings * 2 : 1024;
			b->p->string_table = xrealloc(b->p->string_table,
						     b->cap_strings * sizeof *b->p->string_table);
		}
		b->p->string_table[b->p->n_string_table++] = xstrdup(s);
	}
	return (int64_t)id;
}

static uint64_t function(struct builder *b, const char *name, const char *file)
{
	char key[8192];
	snprintf(key, sizeof key, "%s\x01%s", name, file ? file : "");
	int is_new;
	uint64_t id = table_get(&b->functions, key, b->p->n_function + 1, &is_new);
	if (is_new) {
		if (b->p->n_function == b->cap_functions) {
			b->cap_functions = b->cap_functions ? b->cap_functions * 2 : 256;
			b->p->function = xrealloc(b->p->function, b->cap_functions * sizeof *b->p->function);
		}
		Function *f = xmalloc(sizeof *f);
		perftools__profiles__function__init(f);
		f->id = id;
		f->name = f->system_name = str(b, name);
		f->filename = str(b, file ? file : "");
		b->p->function[b->p->n_function++] = f;
	}
	return id;
}

static ValueType *value_type(struct builder *b, const char *type, const char *unit)
{
	ValueType *v = xmalloc(sizeof *v);
	perftools__profiles__value_type__init(v);
	v->type = str(b, type);
	v->unit = str(b, unit);
	return v;
}

static char *hex(const uint8_t *bytes, unsigned n, char *out)
{
	for (unsigned i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", bytes[i]);
	out[2 * n] = '\0';
	return out;
}

static void add_sample(struct builder *b, uint64_t *ids, size_t n, uint64_t count,
		       double period_ns);

/* A location for a bin's samples of count (the bin's, less those of its
   stacks), with a sample of its own if count is not 0. */
static void add_location(struct builder *b, const struct object *o, struct symbols *s,
			 uint64_t mapping_id, const struct bin *bin, uint64_t count,
			 double period_ns)
{
	Location *l = xmalloc(sizeof *l);
	perftools__profiles__location__init(l);
	l->id = b->p->n_location + 1;
	l->mapping_id = mapping_id;
	l->address = o->bias + bin->first;
	struct function f;
	const char *file = NULL;
	int line = 0;
	enum { DEPTH = 64 };
	Line *lines[DEPTH + 1];
	struct inline_frame inl[DEPTH];
	size_t n = 0;
	if (s && symbols_function(s, bin->first, &f)) {
		symbols_line(s, bin->first, &file, &line);
		/* The innermost inlined function first, at the sample's line;
		   each function it was inlined into at the line of that call;
		   the function of the symbol table last, as for stacks. */
		size_t ninl = symbols_inline_chain(s, bin->first, inl, DEPTH);
		for (size_t k = 0; k <= ninl; k++) {
			lines[n] = xmalloc(sizeof *lines[n]);
			perftools__profiles__line__init(lines[n]);
			const char *at = k ? inl[k - 1].call_file : file;
			lines[n]->function_id = function(b, k < ninl ? inl[k].name : f.name, at);
			lines[n]->line = k ? inl[k - 1].call_line : line;
			n++;
		}
	} else if (o->flags & OBJECT_ANON) {	/* a row of its own, as in report */
		lines[n] = xmalloc(sizeof *lines[n]);
		perftools__profiles__line__init(lines[n]);
		lines[n]->function_id = function(b, MODEL_ANON_NAME, NULL);
		n++;
	}
	if (n) {
		l->n_line = n;
		l->line = xmalloc(n * sizeof *l->line);
		memcpy(l->line, lines, n * sizeof *l->line);
	}
	if (b->p->n_location == b->cap_locations) {
		b->cap_locations = b->cap_locations ? b->cap_locations * 2 : 1024;
		b->p->location = xrealloc(b->p->location, b->cap_locations * sizeof *b->p->location);
	}
	b->p->location[b->p->n_location++] = l;
	if (count) {
		uint64_t *ids = xmalloc(sizeof *ids);
		ids[0] = l->id;
		add_sample(b, ids, 1, count, period_ns);
	}
}

static void add_sample(struct builder *b, uint64_t *ids, size_t n, uint64_t count,
		       double period_ns)
{
	if (b->p->n_sample == b->cap_samples) {
		b->cap_samples = b->cap_samples ? b->cap_samples * 2 : 1024;
		b->p->sample = xrealloc(b->p->sample, b->cap_samples * sizeof *b->p->sample);
	}
	Sample *sm = xmalloc(sizeof *sm);
	perftools__profiles__sample__init(sm);
	sm->n_location_id = n;
	sm->location_id = ids;
	sm->n_value = 2;
	sm->value = xmalloc(2 * sizeof *sm->value);
	sm->value[0] = (int64_t)count;
	sm->value[1] = sat_i64(count * period_ns + 0.5);
	b->p->sample[b->p->n_sample++] = sm;
}

/* The mapping of link-time addr in object i (first_id: its first), or 0. */
static uint64_t mapping_of(const struct object *o, uint64_t first_id, uint64_t addr)
{
	for (size_t r = 0; r < o->nranges; r++)
		if (addr - o->ranges[r].vaddr < o->ranges[r].length)
			return first_id + r;
	return o->nranges ? first_id : 0;
}

/* The location of a loc of the stacks, made if new: the frames of its
 * inlined functions as lines of one location, innermost first. */
static uint64_t stack_location(struct builder *b, const struct model *m, struct symbols **syms,
			       const uint64_t *first_ids, const struct stack_loc *l, int leaf)
{
	char key[64];
	snprintf(key, sizeof key, "%zx:%llx:%d", l->object, (unsigned long long)l->addr, leaf);
	int is_new;
	uint64_t id = table_get(&b->locations, key, b->p->n_location + 1, &is_new);
	if (!is_new)
		return id;
	int known = l->object < m->nobjects;
	const struct object *o = known ? &m->objects[l->object] : NULL;
	Location *loc = xmalloc(sizeof *loc);
	perftools__profiles__location__init(loc);
	loc->id = id;
	loc->mapping_id = known ? mapping_of(o, first_ids[l->object], l->addr) : 0;
	loc->address = known ? o->bias + l->addr : l->addr;
	struct stack_line lines[65];
	size_t n = stacks_lines(m, syms, l, leaf, lines, 65);
	loc->n_line = n;
	loc->line = xmalloc(n * sizeof *loc->line);
	for (size_t i = 0; i < n; i++) {
		loc->line[i] = xmalloc(sizeof *loc->line[i]);
		perftools__profiles__line__init(loc->line[i]);
		loc->line[i]->function_id = function(b, lines[i].name, lines[i].file);
		loc->line[i]->line = lines[i].line;
	}
	if (b->p->n_location == b->cap_locations) {
		b->cap_locations = b->cap_locations ? b->cap_locations * 2 : 1024;
		b->p->location = xrealloc(b->p->location, b->cap_locations * sizeof *b->p->location);
	}
	b->p->location[b->p->n_location++] = loc;
	return id;
}

static int raw_order(const void *a, const void *c, void *arg)
{
	const struct model_stacks *ms = arg;
	const struct raw_stack *x = &ms->v[*(const size_t *)a], *y = &ms->v[*(const size_t *)c];
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	for (uint32_t d = 0; d < x->depth; d++) {
		const struct stack_loc *p = &ms->locs[x->locs + d], *q = &ms->locs[y->locs + d];
		if (p->object != q->object)
			return p->object < q->object ? -1 : 1;
		if (p->addr != q->addr)
			return p->addr < q->addr ? -1 : 1;
	}
	return 0;
}

/* A sample's labels: its thread's name ("thread"), id and process id
   ("tid", "pid", where known), for pprof's -tagfocus and -tags. */
static void thread_labels(struct builder *b, Sample *sm, const struct thread *t)
{
	if (!t)
		return;
	sm->label = xmalloc(3 * sizeof *sm->label);
	const char *keys[3] = { "thread", "tid", "pid" };
	int64_t nums[3] = { 0, t->tid, t->pid };
	for (int i = 0; i < 3; i++) {
		if (i && nums[i] <= 0)
			continue;
		Perftools__Profiles__Label *l = xmalloc(sizeof *l);
		perftools__profiles__label__init(l);
		l->key = str(b, keys[i]);
		if (i)
			l->num = nums[i];
		else
			l->str = str(b, t->tid > 0 ? t->comm : t->tid == THREAD_OTHERS
							? "[other threads]" : "[no per-thread counts]");
		sm->label[sm->n_label++] = l;
	}
}

/* The bin of o that holds addr, or NULL. */
static struct bin *bin_of(struct object *o, uint64_t addr)
{
	size_t lo = 0, hi = o->nbins;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (o->bins[mid].first <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr <= o->bins[lo - 1].last ? &o->bins[lo - 1] : NULL;
}

/*
 * With stacks: a sample per distinct stack of each thread (labelled), its
 * locations innermost first as pprof has them; the samples counted
 * without a stack (none recorded, or no room for it) stay samples of
 * their address alone, so that the totals are the flat profile's.
 * left[o][k]: what bin k of object o has beyond its stacks.
 */
static void stack_samples(struct builder *b, const struct model *m, struct symbols **syms,
			  const uint64_t *first_ids, uint64_t **left, double period_ns)
{
	const struct model_stacks *ms = m->stacks;
	size_t *order = xmalloc((ms->n + 1) * sizeof *order);
	for (size_t i = 0; i < ms->n; i++)
		order[i] = i;
	qsort_r(order, ms->n, sizeof *order, raw_order, (void *)ms);
	for (size_t i = 0; i < ms->n;) {
		const struct raw_stack *r = &ms->v[order[i]];
		uint64_t count = 0;
		size_t j = i;
		for (; j < ms->n && raw_order(&order[i], &order[j], (void *)ms) == 0; j++)
			count += ms->v[order[j]].count;
		uint64_t *ids = xmalloc(r->depth * sizeof *ids);
		for (uint32_t d = 0; d < r->depth; d++)
			ids[d] = stack_location(b, m, syms, first_ids, &ms->locs[r->locs + d],
						stacks_exact_pc(m, syms, &ms->locs[r->locs], d));
		add_sample(b, ids, r->depth, count, period_ns);
		thread_labels(b, b->p->sample[b->p->n_sample - 1],
			      r->thread < m->nthread_rows ? &m->thread_rows[r->thread] : NULL);
		/* The leaf's bin holds these samples already. */
		const struct stack_loc *leaf = &ms->locs[r->locs];
		struct bin *bin = leaf->object < m->nobjects
					  ? bin_of(&m->objects[leaf->object], leaf->addr) : NULL;
		if (bin) {
			uint64_t *c = &left[leaf->object][bin - m->objects[leaf->object].bins];
			*c = *c > count ? *c - count : 0;
		}
		i = j;
	}
	free(order);
}

int export_pprof(const struct model *m, struct symbols **syms, const char *out)
{
	struct builder b;
	memset(&b, 0, sizeof b);
	b.p = xmalloc(sizeof *b.p);
	perftools__profiles__profile__init(b.p);
	str(&b, "");
	double period_ns = model_seconds_each(m) * 1e9;
	b.p->n_sample_type = 2;
	b.p->sample_type = xmalloc(2 * sizeof *b.p->sample_type);
	b.p->sample_type[0] = value_type(&b, "samples", "count");
	b.p->sample_type[1] = value_type(&b, "cpu", "nanoseconds");
	b.p->period_type = value_type(&b, "cpu", "nanoseconds");
	b.p->period = sat_i64(period_ns + 0.5);
	b.p->time_nanos = (int64_t)m->start_ns;
	b.p->duration_nanos = m->end_ns > m->start_ns ? (int64_t)(m->end_ns - m->start_ns) : 0;
	size_t nmap = 0;
	for (size_t i = 0; i < m->nobjects; i++)
		nmap += m->objects[i].nranges;
	b.p->mapping = xmalloc((nmap + 1) * sizeof *b.p->mapping);
	uint64_t *first_ids = xmalloc((m->nobjects + 1) * sizeof *first_ids);
	uint64_t **left = xmalloc((m->nobjects + 1) * sizeof *left);
	for (size_t i = 0; i < m->nobjects; i++) {
		first_ids[i] = b.p->n_mapping + 1;
		b.p->n_mapping += m->objects[i].nranges;
		left[i] = xmalloc((m->objects[i].nbins + 1) * sizeof *left[i]);
		for (size_t k = 0; k < m->objects[i].nbins; k++)
			left[i][k] = m->objects[i].bins[k].count;
	}
	b.p->n_mapping = 0;
	if (stacks_present(m))
		stack_samples(&b, m, syms, first_ids, left, period_ns);
	for (size_t i = 0; i < m->nobjects; i++) {
		const struct object *o = &m->objects[i];
		uint64_t first_id = b.p->n_mapping + 1;
		/* A gmon.out does not record its program's build ID: its file's. */
		uint8_t fid[64];
		int fidlen = 0;
		char file[PATH_MAX], why[PATH_MAX + 256];
		if (!o->build_id_len && syms[i] && !(o->flags & OBJECT_ANON)
		    && objfind_path(o, file, sizeof file, why, sizeof why))
			fidlen = bidcache_file_id(file, fid);
		for (size_t r = 0; r < o->nranges; r++) {
			Mapping *mp = xmalloc(sizeof *mp);
			perftools__profiles__mapping__init(mp);
			char id[2 * sizeof o->build_id + 1];
			mp->id = b.p->n_mapping + 1;
			mp->memory_start = o->bias + o->ranges[r].vaddr;
			mp->memory_limit = mp->memory_start + o->ranges[r].length;
			mp->file_offset = o->ranges[r].file_offset;
			mp->filename = str(&b, o->path);
			mp->build_id = str(&b, fidlen > 0 ? hex(fid, (unsigned)fidlen, id)
							  : hex(o->build_id, o->build_id_len, id));
			mp->has_functions = mp->has_filenames = mp->has_line_numbers =
				mp->has_inline_frames = syms[i] != NULL;
			b.p->mapping[b.p->n_mapping++] = mp;
		}
		for (size_t k = 0; k < o->nbins; k++) {
			uint64_t mid = first_id;
			for (size_t r = 0; r < o->nranges; r++)
				if (o->bins[k].first - o->ranges[r].vaddr < o->ranges[r].length)
					mid = first_id + r;
			if (left[i][k])
				add_location(&b, o, syms[i], o->nranges ? mid : 0, &o->bins[k],
					     left[i][k], period_ns);
		}
		free(left[i]);
	}
	free(left);
	free(first_ids);
	size_t size = perftools__profiles__profile__get_packed_size(b.p);
	uint8_t *buf = xmalloc(size);
	perftools__profiles__profile__pack(b.p, buf);

	char tmp[PATH_MAX + 32];
	int fd = temp_open(out, tmp, sizeof tmp, 0644);
	int ok = 0;
	if (fd >= 0) {
		gzFile gz = gzdopen(fd, "wb9");
		ok = gz && (size == 0 || gzwrite(gz, buf, (unsigned)size) == (int)size);
		if (gz) {
			ok &= gzclose(gz) == Z_OK;
		} else {
			close(fd);
		}
		if (!ok)
			error_line("%s: cannot write", out);
	}
	free(buf);
	perftools__profiles__profile__free_unpacked(b.p, NULL) ;
	table_free(&b.strings);
	table_free(&b.functions);
	table_free(&b.locations);
	return fd < 0 ? -1 : temp_finish(-1, tmp, out, ok);
}

/* ---- Folded stacks ---- */

int export_folded(const struct model *m, struct symbols **syms, const char *out)
{
	if (!stacks_present(m)) {
		error_line("--format folded: the profile has no call stacks (profil run records them)");
		return -1;
	}
	char tmp[PATH_MAX + 32];
	int fd = temp_open(out, tmp, sizeof tmp, 0644);
	if (fd < 0)
		return -1;
	FILE *f = fdopen(fd, "w");
	struct stacks s;
	stacks_build(&s, m, syms);
	int ok = f && stacks_write_folded(&s, f) == 0;
	stacks_free(&s);
	if (f)
		ok &= fclose(f) == 0;
	else
		close(fd);
	if (!ok)
		error_line("%s: cannot write: %s", out, strerror(errno));
	return temp_finish(-1, tmp, out, ok);
}

/* ---- gmon.out ---- */

/* Bounds of what export writes as gmon.out: 256 MiB of text in a range
   (larger than any program's), 1 GiB of file. */
#define GMON_EXPORT_TEXT_MAX (UINT64_C(1) << 28)
#define GMON_EXPORT_BYTES_MAX (UINT64_C(1) << 30)

static const struct object *choose(const struct model *m, const char *name)
{
	for (size_t i = 0; i < m->nobjects; i++) {
		const struct object *o = &m->objects[i];
		const char *base = strrchr(o->path, '/');
		if (name ? strcmp(o->path, name) == 0 || strcmp(base ? base + 1 : o->path, name) == 0
			 : (o->flags & PROFILE_SEG_MAIN) != 0)
			return o;
	}
	return NULL;
}

int export_gmon(const struct model *m, const char *name, const char *out)
{
	const struct object *o = choose(m, name);
	if (!o) {
		if (name)
			error_line("--object '%s': no such object in the profile", name);
		else
			error_line("no main program in the profile: name one with --object");
		return -1;
	}
	struct gmon_profile g;
	memset(&g, 0, sizeof g);
	g.hist = calloc(o->nranges ? o->nranges : 1, sizeof *g.hist);
	if (!g.hist) {
		error_line("out of memory");
		exit(2);
	}
	double each = model_seconds_each(m);
	uint64_t per_second = each > 0 ? sat_u64(1.0 / each + 0.5) : m->hz;
	uint32_t rate = per_second < UINT32_MAX ? (uint32_t)per_second : UINT32_MAX;
	uint64_t bytes = GMON_HEADER_SIZE;
	int fd = -1, ok = 0;
	char tmp[PATH_MAX + 32];
	for (size_t r = 0; r < o->nranges; r++) {
		struct gmon_hist *h = &g.hist[r];
		uint64_t vaddr = o->ranges[r].vaddr, length = o->ranges[r].length;
		/* What a hostile file could make too large to write, refused
		   before anything is allocated for it. */
		if (length > GMON_EXPORT_TEXT_MAX || vaddr > UINT64_MAX - GMON_EXPORT_TEXT_MAX) {
			error_line("%s: a text range of %#llx bytes at %#llx, too large for gmon.out",
				   o->path, (unsigned long long)length, (unsigned long long)vaddr);
			goto done;
		}
		/* 2-byte bins from an even address: gprof's bin edges are exact. */
		h->low_pc = vaddr & ~(uint64_t)1;
		h->high_pc = (vaddr + length + 1) & ~(uint64_t)1;
		h->nbins = (h->high_pc - h->low_pc) / 2;
		h->rate = rate ? rate : 1;
		snprintf(h->dimen, sizeof h->dimen, "seconds");
		h->dimen_abbrev = 's';
		h->counts = calloc(h->nbins ? h->nbins : 1, sizeof *h->counts);
		if (!h->counts) {
			error_line("out of memory");
			exit(2);
		}
		g.nhist++;
		for (size_t k = 0; k < o->nbins; k++)
			if (o->bins[k].first >= h->low_pc && o->bins[k].first < h->high_pc)
				h->counts[(o->bins[k].first - h->low_pc) / 2] += o->bins[k].count;
		/* gprof sums a bin in an int, from records of 65535 at most,
		   each the whole histogram. */
		uint64_t max = 0;
		for (uint64_t k = 0; k < h->nbins; k++)
			if (h->counts[k] > max)
				max = h->counts[k];
		if (max > INT32_MAX) {
			error_line("%s: %llu samples in one bin, more than gprof can count (%d)",
				   o->path, (unsigned long long)max, INT32_MAX);
			goto done;
		}
		bytes += (max / GMON_HIST_MAX + 1) * (1 + GMON_HIST_HEADER_SIZE + 2 * h->nbins);
	}
	/* The call arcs into the object.  A caller outside it keeps the
	   address it had (gprof makes it spontaneous); one in another object
	   has no address here, and becomes 0, outside every text too. */
	g.arcs = calloc(m->narcs ? m->narcs : 1, sizeof *g.arcs);
	if (!g.arcs) {
		error_line("out of memory");
		exit(2);
	}
	for (size_t i = 0; i < m->narcs; i++) {
		const struct arc *a = &m->arcs[i];
		if (a->to != o)
			continue;
		uint64_t from = a->from == o || !a->from ? a->from_pc : 0;
		g.arcs[g.narcs++] = (struct gmon_arc){ from, a->to_pc, a->count };
		/* A record holds 2^32 - 1 calls of an arc. */
		bytes += (a->count / GMON_ARC_MAX + 1) * (1 + GMON_ARC_SIZE);
	}
	/* In the order the reader and merge give them, so that gprof, which
	   orders equal arcs by their records, shows what it showed before. */
	qsort(g.arcs, g.narcs, sizeof *g.arcs, gmon_arc_order);
	if (bytes > GMON_EXPORT_BYTES_MAX) {
		error_line("%s: gmon.out would take %llu bytes (gprof's 16-bit counters): "
			   "more than %llu", out, (unsigned long long)bytes,
			   (unsigned long long)GMON_EXPORT_BYTES_MAX);
		goto done;
	}
	fd = temp_open(out, tmp, sizeof tmp, 0644);
	if (fd >= 0) {
		ok = gmon_write(fd, &g) == 0;
		if (!ok)
			error_line("%s: %s", out, strerror(errno));
	}
done:
	for (size_t r = 0; r < g.nhist; r++)
		free(g.hist[r].counts);
	free(g.hist);
	free(g.arcs);
	return fd < 0 ? -1 : temp_finish(fd, tmp, out, ok);
}

static const struct opt export_opts[] = {
	{ "format", 'f', 'f', "FORMAT", "pprof, gmon (gprof) or folded (flame graphs)" },
	{ "output", 'o', 'o', "FILE", "the file to write (- for standard output)" },
	{ "object", 'O', 'O', "NAME", "gmon: the object to export, by default the program" },
	{ "exe", 'e', 'e', "PROGRAM", "the program profiled, if no longer where it was" },
	{ "symfs", 0, 'S', "DIR", "look objects up under DIR first" },
	{ "tid", 0, 'I', "TID[,TID...]", "only the samples of those threads" },
	{ "comm", 0, 'C', "NAME", "only threads whose name matches NAME (fnmatch)" },
	{ "help", 'h', 'h', NULL, "this list" },
	{ NULL, 0, 0, NULL, NULL },
};

/* The spooled export to standard output. */
static int copy_out(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		error_line("%s: %s", path, strerror(errno));
		return -1;
	}
	char buf[65536];
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		if (fwrite(buf, 1, (size_t)n, stdout) != (size_t)n)
			break;
	int bad = n != 0 || fflush(stdout) != 0;
	if (bad)
		error_line("-o -: cannot write to standard output: %s", strerror(errno));
	close(fd);
	return bad ? -1 : 0;
}

int cmd_export(int argc, char **argv)
{
	struct opts o = { .cmd = "export", .operands = "[FILE...]",
			  .about = "Write FILEs, by default those of the last profil run, for pprof "
				   "or gprof.", .v = export_opts };
	const char *format = NULL, *out = NULL, *object = NULL, *exe = NULL, *tids = NULL, *v;
	struct thread_filter filter = { NULL, 0, NULL };
	int c;
	optind = 0;	/* all of getopt's state afresh */
	while ((c = opts_next(&o, argc, argv, &v)) != -1) {
		switch (c) {
		case 'f':
			if (strcmp(v, "pprof") && strcmp(v, "gmon") && strcmp(v, "folded")) {
				error_line("--format '%s': not one of pprof, gmon, folded", v);
				return 2;
			}
			format = v;
			break;
		case 'o': out = v; break;
		case 'O': object = v; break;
		case 'e': exe = v; objfind_exe(v); break;
		case 'S':
			if (objfind_symfs(v) != 0)
				return 2;
			break;
		case 'C': filter.comm = v; break;
		case 'I': tids = v; break;
		case 'h':
			opts_help(&o, stdout);
			return 0;
		default:
			return 2;
		}
	}
	if (!format || !out) {
		error_line(!format ? "export: no --format given (pprof, gmon or folded)"
				   : "export: no -o FILE given");
		return 2;
	}
	if (object && strcmp(format, "gmon") != 0) {
		error_line("export: --object and --format %s: only gmon.out is of one object", format);
		return 2;
	}
	if (tids && thread_filter_tids(&filter, tids) != 0)
		return 2;
	char **files = input_files(argc - optind, argv + optind);
	if (!files) {
		free((void *)filter.tids);
		return 1;
	}
	/* -o -: written whole to a file of our own first, as to any output,
	   then copied out, so that a reader never sees half an export. */
	char spool[PATH_MAX] = "";
	if (strcmp(out, "-") == 0) {
		const char *dir = getenv("TMPDIR");
		snprintf(spool, sizeof spool, "%s/profil-export.XXXXXX", dir && *dir ? dir : "/tmp");
		int fd = mkstemp(spool);
		if (fd < 0) {
			error_line("-o -: cannot make a file in %s: %s", dir && *dir ? dir : "/tmp",
				   strerror(errno));
			free_files(files);
			free((void *)filter.tids);
			return 1;
		}
		close(fd);
		out = spool;
	} else if (output_refused("-o", out, files, exe, NULL)) {
		free_files(files);
		free((void *)filter.tids);
		return 2;
	}
	struct model m = { 0 };
	m.exe = exe;
	if (filter.ntids || filter.comm)
		m.filter = &filter;	/* the samples of those threads only */
	int status = 0;
	for (char **f = files; *f && !status; f++)
		if (model_add_file(&m, *f) != 0)
			status = 1;
	/* The objects are known now: their files are not outputs either. */
	if (!status && !*spool && output_refused("-o", out, files, exe, &m))
		status = 2;
	free_files(files);
	struct symbols **syms = calloc(m.nobjects + 1, sizeof *syms);
	if (!status) {
		model_finish(&m);
		origins_warn(&m.origins, "summed into one profile");
		if (strcmp(format, "pprof") == 0) {
			for (size_t i = 0; i < m.nobjects && !status; i++) {
				const struct object *o = &m.objects[i];
				if (!o->total || (o->flags & PROFILE_SEG_VDSO))
					continue;
				char why[1024];
				syms[i] = symbols_open(o, why, sizeof why);
				if (!syms[i]) {
					error_line("%s", why);
					status = 1;
				}
			}
			stacks_open_symbols(&m, syms);
			if (!status && export_pprof(&m, syms, out) != 0)
				status = 1;
		} else if (strcmp(format, "folded") == 0) {
			if (rows_open_symbols(&m, syms) != 0 || export_folded(&m, syms, out) != 0)
				status = 1;
		} else if (export_gmon(&m, object, out) != 0) {
			status = 1;
		}
	}
	for (size_t i = 0; i < m.nobjects; i++)
		symbols_close(syms[i]);
	free(syms);
	model_free(&m);
	free((void *)filter.tids);
	if (*spool) {
		if (!status && copy_out(spool) != 0)
			status = 1;
		unlink(spool);
	}
	return status;
}
