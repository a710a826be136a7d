/*
 * model.c - reading profile files into the model (model.h).
 *
 * Objects are matched across files by path and build ID, so that the
 * processes of a tree, or many runs, add up.  Counters become bins of
 * link-time addresses through the exact inverse of the bin formula
 * (src/common/bins.h), never rounded into a neighbour.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../include/profil.h"
#include "../common/bins.h"
#include "../format/gmon.h"
#include "../format/gmon_stats.h"
#include "../format/profile.h"
#include "cli.h"
#include "model.h"
#include "stacks.h"

const char *backend_name(int id)
{
	switch (id) {
	case PROFIL_BACKEND_PERF: return "perf";
	case PROFIL_BACKEND_TIMER: return "timer";
	default: return "none";
	}
}

const char *perf_refusal(int err)
{
	switch (err) {
	case EACCES: return "EACCES, as under perf_event_paranoid 3";
	case EPERM: return "EPERM, as from a seccomp filter";
	case ENOSYS: return "ENOSYS: no perf events in this kernel, or a seccomp filter";
	case EMFILE: return "EMFILE: no file descriptor to spare (RLIMIT_NOFILE)";
	default: return strerror(err);
	}
}

static struct object *find_object(struct model *m, const char *path, const uint8_t *build_id,
				  unsigned build_id_len, uint64_t bias, int flags)
{
	for (size_t i = 0; i < m->nobjects; i++) {
		struct object *o = &m->objects[i];
		if (strcmp(o->path, path) == 0 && o->build_id_len == build_id_len
		    && (!build_id_len || memcmp(o->build_id, build_id, build_id_len) == 0))
			return o;
	}
	struct object *grown = xrealloc(m->objects, (m->nobjects + 1) * sizeof *grown);
	/* Arcs point into the array: move them with it. */
	for (size_t i = 0; i < m->narcs; i++) {
		struct arc *a = &m->arcs[i];
		if (a->from)
			a->from = grown + (a->from - m->objects);
		a->to = grown + (a->to - m->objects);
	}
	m->objects = grown;
	struct object *o = &m->objects[m->nobjects++];
	memset(o, 0, sizeof *o);
	o->path = xstrdup(path);
	if (build_id_len)
		memcpy(o->build_id, build_id, build_id_len);
	o->build_id_len = build_id_len;
	o->bias = bias;
	o->flags = flags & ~PROFILE_SEG_UNMAPPED;
	return o;
}

static void add_range(struct object *o, uint64_t vaddr, uint64_t length, uint64_t offset)
{
	for (size_t i = 0; i < o->nranges; i++)
		if (o->ranges[i].vaddr == vaddr)
			return;
	o->ranges = xrealloc(o->ranges, (o->nranges + 1) * sizeof *o->ranges);
	o->ranges[o->nranges++] = (struct range){ vaddr, length, offset };
}

static void add_bin(struct object *o, uint64_t first, uint64_t last, uint64_t count,
		    uint64_t system)
{
	if (o->nbins == o->capbins) {
		o->capbins = o->capbins ? o->capbins * 2 : 256;
		o->bins = xrealloc(o->bins, o->capbins * sizeof *o->bins);
	}
	o->bins[o->nbins++] = (struct bin){ first, last, count, system };
	o->total += count;
}

/* For the other input modules (classic.c): see model.h. */
struct object *model_object(struct model *m, const char *path, const uint8_t *build_id,
			    unsigned build_id_len, uint64_t bias)
{
	return find_object(m, path, build_id, build_id_len, bias, 0);
}

void model_range(struct object *o, uint64_t vaddr, uint64_t length, uint64_t file_offset)
{
	add_range(o, vaddr, length, file_offset);
}

void model_bin(struct object *o, uint64_t first, uint64_t last, uint64_t count)
{
	add_bin(o, first, last, count, 0);
}

void model_arc(struct model *m, struct object *from, struct object *to, uint64_t from_pc,
	       uint64_t to_pc, uint64_t count)
{
	if (m->narcs == m->caparcs) {
		m->caparcs = m->caparcs ? m->caparcs * 2 : 256;
		m->arcs = xrealloc(m->arcs, m->caparcs * sizeof *m->arcs);
	}
	m->arcs[m->narcs++] = (struct arc){ from, to, from_pc, to_pc, count };
}

static int in_ranges(const struct object *o, uint64_t pc)
{
	for (size_t i = 0; i < o->nranges; i++)
		if (pc - o->ranges[i].vaddr < o->ranges[i].length)
			return 1;
	return 0;
}

void model_bin_system(struct object *o, uint64_t first, uint64_t last, uint64_t count,
		      uint64_t system)
{
	add_bin(o, first, last, count, system);
}

uint64_t model_samples(const struct model *m)
{
	return m->filter ? m->kept : m->counted + m->outside;
}

/* The program a gmon.out file profiled: --exe, the NAME of
 * gmon.NAME.PID.out beside it, or a.out as gprof guesses. */
static int gmon_program(const struct model *m, const char *path, char *out, size_t len)
{
	if (m->exe) {
		snprintf(out, len, "%s", m->exe);
		return access(out, R_OK) == 0 ? 0 : -1;
	}
	const char *base = strrchr(path, '/');
	size_t dirlen = base ? (size_t)(base - path) + 1 : 0;
	base = base ? base + 1 : path;
	const char *dot = strchr(base + 5, '.');
	if (strncmp(base, "gmon.", 5) == 0 && dot && dot > base + 5) {
		snprintf(out, len, "%.*s%.*s", (int)dirlen, path, (int)(dot - base - 5), base + 5);
		if (access(out, R_OK) == 0)
			return 0;
	}
	snprintf(out, len, "a.out");
	return access(out, R_OK) == 0 ? 0 : -1;
}

/* A gmon.out file (src/format/gmon.h): one object, its histograms. */
static int add_gmon(struct model *m, const char *path)
{
	struct gmon_profile g;
	char why[1024], exe[PATH_MAX], real[PATH_MAX];
	if (gmon_read_file(path, &g, why, sizeof why) != 0) {
		error_line("%s", why);
		return -1;
	}
	if (gmon_program(m, path, exe, sizeof exe) != 0) {
		error_line("%s: a gmon.out file: cannot read the program it profiled, %s "
			   "(name it with --exe)", path, exe);
		gmon_free(&g);
		return -1;
	}
	struct object *o = find_object(m, realpath(exe, real) ? real : exe, NULL, 0, 0,
				       PROFILE_SEG_MAIN);
	uint64_t sum = 0;
	uint32_t rate = 0;
	for (size_t i = 0; i < g.nhist; i++) {
		const struct gmon_hist *h = &g.hist[i];
		if (h->high_pc <= h->low_pc || !h->nbins)
			continue;
		rate = h->rate;
		add_range(o, h->low_pc, h->high_pc - h->low_pc, 0);
		unsigned __int128 span = h->high_pc - h->low_pc;
		for (uint64_t k = 0; k < h->nbins; k++) {
			if (!h->counts[k])
				continue;
			uint64_t first = h->low_pc + (uint64_t)(span * k / h->nbins);
			uint64_t next = h->low_pc + (uint64_t)(span * (k + 1) / h->nbins);
			add_bin(o, first, next > first ? next - 1 : first, h->counts[k], 0);
			sum += h->counts[k];
		}
	}
	/* Arcs into the program's text; a call site outside it is a
	   spontaneous caller, kept as such. */
	for (size_t i = 0; i < g.narcs; i++) {
		const struct gmon_arc *a = &g.arcs[i];
		if (a->count)
			model_arc(m, in_ranges(o, a->from_pc) ? o : NULL, o, a->from_pc, a->self_pc,
				  a->count);
	}
	gmon_free(&g);
	if (!m->hz && rate)
		m->hz = rate;
	/* The companion libprofil writes: CPU time and the samples the
	   histogram cannot hold.  Without it (glibc's runtime) they are
	   not known, and the report says so rather than 0. */
	struct gmon_stats st;
	int r = gmon_stats_read(path, &st, why, sizeof why);
	if (r < 0)
		error_line("%s; its statistics are left out", why);
	if (r == 0) {
		m->outside += st.outside;
		m->system += st.system;	/* of taken: samples of kernel time */
		m->saturated += st.saturated;
		m->lost += st.lost;
		m->lost_unsplit += st.lost;
		m->taken += st.outside + st.saturated + st.lost;
		m->observed += sum + st.outside + st.saturated;
		/* By the samples, 1/rate each as gprof counts them, so that
		   seconds agree with gprof's; the clock's figure is the
		   check on it (gmon_outside.sh). */
		m->cpu_ns += rate ? sat_u64((sum + st.outside + st.saturated + st.lost)
					    * (1e9 / rate)) : st.cpu_ns;
	} else {
		m->gmon_unrecorded++;
		m->cpu_ns += rate ? sat_u64(sum * (1e9 / rate)) : 0;
	}
	m->taken += sum;
	m->counted += sum;
	if (!m->nfiles)
		snprintf(m->command, sizeof m->command, "%.255s", exe);
	m->nfiles++;
	m->gmon_files++;
	origins_note(&m->origins, 0, o->path);
	return 0;
}

/*
 * A gmon.out, pcsample or mon.out file (add returns 1 if it is not of
 * its kind): no thread table, so its samples are one row of m->thread_rows,
 * and a filter of threads leaves its bins out.
 */
static int add_unthreaded(struct model *m, const char *path,
			  int (*add)(struct model *, const char *))
{
	size_t nobjects = m->nobjects;
	size_t *nbins = xmalloc((nobjects + 1) * sizeof *nbins);
	uint64_t *totals = xmalloc((nobjects + 1) * sizeof *totals);
	for (size_t i = 0; i < nobjects; i++) {
		nbins[i] = m->objects[i].nbins;
		totals[i] = m->objects[i].total;
	}
	uint64_t counted = m->counted;
	int r = add(m, path);
	if (r == 0) {
		const char *base = strrchr(path, '/');
		model_thread_whole(m, 0, base ? base + 1 : path, m->counted - counted, 0);
	}
	for (size_t i = 0; r == 0 && m->filter && i < m->nobjects; i++) {
		m->objects[i].nbins = i < nobjects ? nbins[i] : 0;
		m->objects[i].total = i < nobjects ? totals[i] : 0;
	}
	free(nbins);
	free(totals);
	return r;
}

static void add_outside(struct model *m, const struct profile *p);
static int perf_map(const struct profile_header *h, char *path, size_t len);

static void add_profile(struct model *m, const struct profile *p);

int model_add_file(struct model *m, const char *path)
{
	return model_add_file2(m, NULL, path);
}

int model_add_file2(struct model *m, struct model *also, const char *path)
{
	int classic = add_unthreaded(m, path, model_add_classic);
	if (classic == 1 && gmon_is_file(path))
		classic = add_unthreaded(m, path, add_gmon);
	if (classic != 1)
		return classic || !also ? classic : model_add_file(also, path);
	struct profile p;
	char why[512];
	if (profile_open(&p, path, why, sizeof why) != 0) {
		error_line("%s: %s", path, why);
		return -1;
	}
	add_profile(m, &p);
	if (also)
		add_profile(also, &p);
	profile_close(&p);
	return 0;
}

/* A profile file (src/format/profile.h) into m. */
static void add_profile(struct model *m, const struct profile *p)
{
	const struct profile_header *h = p->header;
	if (m->nfiles == 0 || h->hz > m->hz)
		m->hz = h->hz;
	if (h->backend)
		m->backend = h->backend;
	if (h->perf_errno)
		m->perf_errno = (int)h->perf_errno;
	m->write_lost += !!(h->flags & PROFILE_F_WRITE_LOST);
	m->no_kernel |= !!(h->flags & PROFILE_F_NO_KERNEL);
	m->unfinished += h->state != PROFILE_COMPLETE;
	char command[sizeof h->command + 1];
	const char *program = profile_program(p, command, sizeof command);
	if (h->state != PROFILE_COMPLETE && (h->end_status & PROFILE_END_SEEN)) {
		m->end_status = m->ended ? m->end_status : h->end_status & 0xffff;
		m->ended++;
	} else if (h->state != PROFILE_COMPLETE && process_running(h->pid, h->start_ns, program)) {
		m->running_pid = m->running ? m->running_pid : h->pid;
		m->running++;
	}
	/* A running file's counters went on after its statistics. */
	uint64_t extra = p->counted - h->counted;
	m->taken += h->taken + extra;
	m->counted += h->counted + extra;
	m->outside += h->outside;
	m->saturated += h->saturated;
	m->lost += h->lost;
	model_ext_stats(m, p->ext, h->lost);
	m->observed += h->observed;
	m->cpu_ns += h->cpu_ns;
	if (extra && h->hz)	/* at the period asked: the best guess there is */
		m->cpu_ns += sat_u64(extra * (1e9 / h->hz));
	m->threads += h->threads;
	m->threads_unsampled += h->threads_unsampled;
	m->threads_fallback += h->threads_fallback;
	m->system += h->system;
	m->system_files += p->has_system;
	if (!m->start_ns || h->start_ns < m->start_ns)
		m->start_ns = h->start_ns;
	if (h->update_ns > m->end_ns)
		m->end_ns = h->update_ns;
	if (!m->nfiles) {
		m->pid = h->pid;
		m->ppid = h->ppid;
		snprintf(m->command, sizeof m->command, "%.*s", (int)sizeof h->command - 1,
			 h->command);
		if (h->cmdline_len) {
			m->cmdline = xmalloc(h->cmdline_len);
			memcpy(m->cmdline, h->cmdline, h->cmdline_len);
			m->cmdline_len = h->cmdline_len;
			m->cmdline_cut = !!(h->flags & PROFILE_F_CMDLINE_CUT);
		}
	}
	m->nfiles++;
	origins_note(&m->origins, h->run_id, program);
	size_t *objs = xmalloc((p->nsegs + 1) * sizeof *objs);
	for (size_t i = 0; i < p->nsegs; i++) {
		const struct profile_segment *s = p->segs[i].head;
		struct object *o = find_object(m, s->path, s->build_id, s->build_id_len, s->bias,
					       (int)s->flags);
		add_range(o, s->vaddr, s->length, s->file_offset);
		objs[i] = (size_t)(o - m->objects);
	}
	/* A stack's frames in JIT code are named by the process's perf
	   map, as its flat samples there are. */
	char map[64];
	objs[p->nsegs] = p->nstacks && perf_map(h, map, sizeof map)
				? (size_t)(find_object(m, map, NULL, 0, 0, OBJECT_ANON) - m->objects)
				: SIZE_MAX;
	size_t rows = m->nthread_rows;
	model_add_threads(m, p, objs);
	stacks_add_file(m, p, objs, rows);
	free(objs);
	for (size_t i = 0; i < p->nsegs && !m->filter; i++) {
		const struct profile_seg_view *v = &p->segs[i];
		const struct profile_segment *s = v->head;
		struct object *o = find_object(m, s->path, s->build_id, s->build_id_len, s->bias,
					       (int)s->flags);
		/* Only the counters the file holds: most of a big object's
		   are holes, never sampled. */
		for (uint64_t k = 0, end; (k = profile_data(p, v->counters, s->width, s->ncounters,
							      k, &end)) < s->ncounters;) {
			for (; (k = profile_nonzero(v->counters, s->width, k, end)) < end; k++) {
				uint64_t c = profile_count(v, k), first, last;
				if (!bins_first_pc(k, s->start, s->scale, &first)
				    || !bins_last_pc(k, s->start, s->scale, &last))
					continue;
				add_bin(o, first - s->bias, last - s->bias, c, profile_system(v, k));
			}
		}
	}
	if (!m->filter && h->outside)
		add_outside(m, p);
}

void model_outside(struct model *m, uint64_t first, uint64_t last, uint64_t n)
{
	add_bin(find_object(m, MODEL_ANON_NAME, NULL, 0, 0, OBJECT_ANON), first, last, n, 0);
}

/*
 * The perf map the process wrote, /tmp/perf-PID.map, as perf reads it:
 * 1 if there is one written since the process started (an older one is
 * another process's of the same pid).
 */
static int perf_map(const struct profile_header *h, char *path, size_t len)
{
	struct stat st;
	snprintf(path, len, "/tmp/perf-%d.map", (int)h->pid);
	return h->pid > 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode)
	       && (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec
		  + 1000000000u >= h->start_ns;
}

/* A file's samples outside every segment: at the pcs its outside table
 * kept, named by the process's perf map if it has one; the rest at no pc. */
static void add_outside(struct model *m, const struct profile *p)
{
	const struct profile_header *h = p->header;
	char path[64];
	struct object *o = find_object(m, p->noutside && perf_map(h, path, sizeof path) ? path
						   : MODEL_ANON_NAME, NULL, 0, 0, OBJECT_ANON);
	uint64_t placed = 0;
	for (uint64_t k = 0; k < p->noutside; k++) {
		const struct profile_pc *s = &p->outside[k];
		if (!s->key || !s->count || placed + s->count > h->outside)
			continue;	/* a running file's table may be ahead */
		add_bin(o, s->key, s->key, s->count, s->system < s->count ? s->system : s->count);
		placed += s->count;
	}
	if (h->outside > placed)
		add_bin(o, 0, 0, h->outside - placed, 0);
}

static int by_first(const void *a, const void *b)
{
	const struct bin *x = a, *y = b;
	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return x->last < y->last ? -1 : x->last > y->last;
}

static int arc_order(const void *a, const void *b)
{
	const struct arc *x = a, *y = b;
	if (x->to != y->to)
		return x->to < y->to ? -1 : 1;
	if (x->to_pc != y->to_pc)
		return x->to_pc < y->to_pc ? -1 : 1;
	if (x->from != y->from)
		return (uintptr_t)x->from < (uintptr_t)y->from ? -1 : 1;
	return (x->from_pc > y->from_pc) - (x->from_pc < y->from_pc);
}

/* Arcs of several files of one program add up, as gprof sums records. */
static void finish_arcs(struct model *m)
{
	if (!m->narcs)
		return;
	qsort(m->arcs, m->narcs, sizeof *m->arcs, arc_order);
	size_t k = 0;
	for (size_t j = 1; j < m->narcs; j++) {
		if (arc_order(&m->arcs[k], &m->arcs[j]) == 0)
			m->arcs[k].count = m->arcs[k].count > UINT64_MAX - m->arcs[j].count
						   ? UINT64_MAX : m->arcs[k].count + m->arcs[j].count;
		else
			m->arcs[++k] = m->arcs[j];
	}
	m->narcs = k + 1;
}

void model_finish(struct model *m)
{
	finish_arcs(m);
	for (size_t i = 0; i < m->nobjects; i++) {
		struct object *o = &m->objects[i];
		if (!o->nbins)
			continue;
		qsort(o->bins, o->nbins, sizeof *o->bins, by_first);
		size_t k = 0;
		for (size_t j = 1; j < o->nbins; j++) {
			if (o->bins[j].first == o->bins[k].first && o->bins[j].last == o->bins[k].last)
				o->bins[k].count += o->bins[j].count, o->bins[k].system += o->bins[j].system;
			else
				o->bins[++k] = o->bins[j];
		}
		o->nbins = k + 1;
	}
}

double model_seconds_each(const struct model *m)
{
	if (m->taken && m->cpu_ns)
		return m->cpu_ns / 1e9 / m->taken;
	return m->hz ? 1.0 / m->hz : 0.001;
}

void model_free(struct model *m)
{
	for (size_t i = 0; i < m->nthread_rows; i++)
		free(m->thread_rows[i].program);
	free(m->thread_rows);
	for (size_t i = 0; i < m->nobjects; i++) {
		free(m->objects[i].path);
		free(m->objects[i].ranges);
		free(m->objects[i].bins);
	}
	free(m->objects);
	free(m->arcs);
	free(m->cmdline);
	origins_free(&m->origins);
	model_stacks_free(m->stacks);
	free(m->stacks);
	memset(m, 0, sizeof *m);
}
