/*
 * merge.c - profil merge: sum profiles of the same binaries into one
 * profile file with 64-bit counters.
 *
 * Segments are matched by object (path and build ID) and executable
 * range; their counters cover the same addresses whatever the load
 * address, so they add index by index.  The statistics add up too.  The
 * output is written sparse (pages of zeros are left as holes) under a
 * temporary name, then renamed into place.  gmon.out files are summed
 * into a gmon.out by merge_gmon.c.
 *
 * Thread tables are kept: each thread of each input is a thread of the
 * output (the same pid and tid twice, as when a file is merged with
 * itself, are summed), and its pc slots are keyed again by the output's
 * segments.  Samples of an input without a thread table, or that a
 * killed process's table had not caught up with, are unattributed.
 *
 * The outside table (samples outside every segment, keyed by pc) is
 * kept: the pcs of every input, summed where they repeat.  JIT pcs of
 * two processes name different code, so the output keeps the process
 * id only when every input has the same one (a file merged with
 * itself, or one file): the report then still finds its perf map.
 *
 * Call stacks are summed by merge_stacks.c into an extension page and
 * stack table before the segments.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../format/gmon.h"
#include "../format/profile.h"
#include "cli.h"
#include "merge_stacks.h"
#include "opts.h"

struct mseg {
	struct profile_segment head;
	uint64_t *counts;
	uint64_t *system;	/* system counts, if an input had them */
};

static struct mseg *find(struct mseg **segs, size_t *n, const struct profile_segment *s)
{
	for (size_t i = 0; i < *n; i++) {
		const struct profile_segment *h = &(*segs)[i].head;
		if (h->vaddr == s->vaddr && h->length == s->length && h->scale == s->scale
		    && h->ncounters == s->ncounters && h->start - h->bias == s->start - s->bias
		    && h->build_id_len == s->build_id_len
		    && memcmp(h->build_id, s->build_id, s->build_id_len) == 0
		    && strcmp(h->path, s->path) == 0)
			return &(*segs)[i];
	}
	*segs = xrealloc(*segs, (*n + 1) * sizeof **segs);
	struct mseg *m = &(*segs)[(*n)++];
	memcpy(&m->head, s, sizeof m->head);
	m->head.width = 8;
	m->head.size = profile_segment_size(s->ncounters, 8);
	m->head.flags &= ~PROFILE_SEG_UNMAPPED;
	m->counts = calloc(s->ncounters ? s->ncounters : 1, sizeof *m->counts);
	m->system = NULL;
	if (!m->counts) {
		error_line("out of memory");
		exit(2);
	}
	return m;
}

/* The output's threads (entry 0: the other threads) and pc slots. */
struct mthreads {
	struct profile_thread *v;
	size_t n;
	struct profile_pc *pcs;	/* keys of the output; may repeat */
	uint64_t *pc_counts;	/* uncut counts of pcs */
	size_t npcs;
	uint64_t unattributed;
};

static uint32_t merged_thread(struct mthreads *t, const struct profile_thread *e, int32_t pid)
{
	if (!t->v) {
		t->v = xmalloc(sizeof *t->v);
		memset(t->v, 0, sizeof *t->v);
		t->n = 1;
	}
	if (!e)
		return 0;
	for (size_t i = 1; i < t->n; i++)
		if (t->v[i].tid == e->tid && t->v[i].owner == e->owner)
			return (uint32_t)i;
	if (t->n >= PROFILE_THREADS_MAX)
		return 0;
	t->v = xrealloc(t->v, (t->n + 1) * sizeof *t->v);
	struct profile_thread *m = &t->v[t->n];
	memset(m, 0, sizeof *m);
	m->tid = e->tid;
	m->owner = e->owner ? e->owner : (uint32_t)pid;
	memcpy(m->comm, e->comm, sizeof m->comm);
	return (uint32_t)t->n++;
}

/* The threads of input p, whose segment i is the output's seg_of[i];
   into to[], the output's entry of each of its entries (UINT32_MAX: none). */
static void add_threads(struct mthreads *t, const struct profile *p, const uint32_t *seg_of,
			uint32_t *to)
{
	merged_thread(t, NULL, 0);
	uint64_t held = p->header->unattributed;
	to[0] = UINT32_MAX;
	if (!p->nthreads) {
		t->unattributed += p->counted;
		return;
	}
	for (uint32_t i = 0; i < p->nthreads; i++) {
		const struct profile_thread *e = &p->threads[i];
		to[i] = UINT32_MAX;
		if (i && !e->tid)
			continue;
		to[i] = i ? merged_thread(t, e, p->header->pid) : 0;
		t->v[to[i]].samples += e->samples;
		t->v[to[i]].system += e->system;
		held += e->samples;
	}
	/* A running file's counters went on after its table: unattributed. */
	t->unattributed += p->header->unattributed + (p->counted > held ? p->counted - held : 0);
	for (uint64_t k = 0; k < p->npcs; k++) {
		const struct profile_pc *s = &p->pcs[k];
		uint32_t e = PROFILE_PC_ENTRY(s->key), seg = PROFILE_PC_SEG(s->key);
		uint64_t index = PROFILE_PC_INDEX(s->key);
		if (!s->key || e >= p->nthreads || to[e] == UINT32_MAX || seg >= p->nsegs
		    || index >= p->segs[seg].head->ncounters
		    || !profile_pc_keyable(to[e], seg_of[seg], index))
			continue;	/* unplaced, in the output too */
		t->pcs = xrealloc(t->pcs, (t->npcs + 1) * sizeof *t->pcs);
		t->pc_counts = xrealloc(t->pc_counts, (t->npcs + 1) * sizeof *t->pc_counts);
		t->pcs[t->npcs] = (struct profile_pc){ profile_pc_key(to[e], seg_of[seg], index), 0,
						       s->system };
		t->pc_counts[t->npcs++] = s->count;
	}
}

/* The inputs' outside pcs, keys repeated. */
struct moutside {
	struct profile_pc *pcs;
	uint64_t *counts;	/* uncut counts of pcs */
	size_t n;
};

static void add_outside(struct moutside *o, const struct profile *p)
{
	uint64_t placed = 0;
	for (uint64_t k = 0; k < p->noutside; k++) {
		const struct profile_pc *s = &p->outside[k];
		if (!s->key || !s->count || placed + s->count > p->header->outside)
			continue;	/* a running file's table may be ahead: as report */
		placed += s->count;
		o->pcs = xrealloc(o->pcs, (o->n + 1) * sizeof *o->pcs);
		o->counts = xrealloc(o->counts, (o->n + 1) * sizeof *o->counts);
		o->pcs[o->n] = (struct profile_pc){ s->key, 0, s->system };
		o->counts[o->n++] = s->count;
	}
}

/* A pool of the keys of pcs, every key once, in a table twice their
   number (at most max slots), counts summed. */
static struct profile_pc *pool_of(const struct profile_pc *pcs, const uint64_t *counts, size_t npcs,
				  uint64_t max, uint64_t *nslots)
{
	uint64_t n = 1;
	while (n < 2 * npcs && n < max)
		n *= 2;
	struct profile_pc *pool = calloc(n, sizeof *pool);
	if (!pool) {
		error_line("out of memory");
		exit(2);
	}
	uint64_t used = 0;
	for (size_t i = 0; i < npcs; i++) {
		uint64_t key = pcs[i].key, at = profile_pc_hash(key, n);
		while (pool[at].key && pool[at].key != key)
			at = (at + 1) & (n - 1);
		if (!pool[at].key) {
			if (used + 1 == n)	/* full (the cap): left unplaced */
				continue;
			used++;
			pool[at].key = key;
		}
		uint64_t c = pool[at].count + counts[i];
		uint64_t sys = pool[at].system + pcs[i].system;
		pool[at].count = c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
		pool[at].system = sys > pool[at].count ? pool[at].count : (uint32_t)sys;
	}
	*nslots = n;
	return pool;
}

/* Write len bytes at off unless they are all zero (a hole reads as zeros). */
static int put(int fd, const void *data, size_t len, uint64_t off)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < len; i++)
		if (p[i]) {
			ssize_t w = pwrite(fd, data, len, (off_t)off);
			return w == (ssize_t)len ? 0 : -1;
		}
	return 0;
}

/* Write n slots of pool at off, page by page (pages of zeros left as holes). */
static int put_pool(int fd, const struct profile_pc *pool, uint64_t n, uint64_t off)
{
	const uint64_t per_page = PROFILE_PAGE / sizeof *pool;
	for (uint64_t k = 0; k < n; k += per_page)
		if (put(fd, pool + k, (n - k < per_page ? n - k : per_page) * sizeof *pool,
			off + k * sizeof *pool) != 0)
			return -1;
	return 0;
}

static int put_segment(int fd, const struct profile_segment *head, const uint64_t *counts,
		       uint64_t at)
{
	if (put(fd, head, PROFILE_PAGE, at) != 0)
		return -1;
	const size_t per_page = PROFILE_PAGE / sizeof(uint64_t);
	for (uint64_t k = 0; k < head->ncounters; k += per_page) {
		size_t cnt = head->ncounters - k < per_page ? head->ncounters - k : per_page;
		if (put(fd, counts + k, cnt * sizeof(uint64_t),
			at + PROFILE_PAGE + k * sizeof(uint64_t)) != 0)
			return -1;
	}
	return 0;
}

static int write_merged(int fd, struct profile_header *h, struct mseg *segs, size_t n,
			const struct mthreads *t, const struct moutside *o, const struct mstacks *ms)
{
	uint64_t npcs, nout = 0;
	struct profile_pc *pool = pool_of(t->pcs, t->pc_counts, t->npcs, PROFILE_PCS_MAX, &npcs);
	struct profile_pc *out = o->n ? pool_of(o->pcs, o->counts, o->n, PROFILE_OUTSIDE_MAX, &nout)
				      : NULL;
	h->threads_at = PROFILE_PAGE;
	h->thread_entries = (uint32_t)t->n;
	h->thread_pcs = npcs;
	h->threads_size = profile_threads_size(t->n, npcs);
	h->unattributed = t->unattributed;
	h->outside_at = nout ? PROFILE_PAGE + h->threads_size : 0;
	h->outside_pcs = nout;
	uint64_t end = PROFILE_PAGE + h->threads_size + profile_outside_size(nout);
	h->ext_at = mstacks_size(ms) ? end : 0;
	end += mstacks_size(ms);
	uint32_t nfile = 0;
	for (size_t i = 0; i < n; i++) {
		end += segs[i].head.size * (segs[i].system ? 2 : 1);
		nfile += segs[i].system ? 2 : 1;
	}
	h->end = end;
	h->nsegments = nfile;
	static unsigned char page[PROFILE_PAGE];
	memset(page, 0, sizeof page);
	memcpy(page, h, sizeof *h);
	uint64_t at = PROFILE_PAGE + t->n * sizeof *t->v;
	int bad = ftruncate(fd, (off_t)end) != 0 || put(fd, page, PROFILE_PAGE, 0) != 0
		  || put(fd, t->v, t->n * sizeof *t->v, PROFILE_PAGE) != 0
		  || put_pool(fd, pool, npcs, at) != 0
		  || (nout && put_pool(fd, out, nout, h->outside_at) != 0)
		  || mstacks_write(fd, ms, h->ext_at) != 0;
	free(pool);
	free(out);
	if (bad)
		return -1;
	at = PROFILE_PAGE + h->threads_size + profile_outside_size(nout) + mstacks_size(ms);
	for (size_t i = 0; i < n; i++) {
		struct mseg *s = &segs[i];
		if (put_segment(fd, &s->head, s->counts, at) != 0)
			return -1;
		at += s->head.size;
		if (s->system) {
			struct profile_segment head = s->head;
			head.flags |= PROFILE_SEG_SYSTEM;
			head.counted = 0;
			for (uint64_t k = 0; k < head.ncounters; k++)
				head.counted += s->system[k];
			if (put_segment(fd, &head, s->system, at) != 0)
				return -1;
			at += head.size;
		}
	}
	return 0;
}

int cmd_merge(int argc, char **argv)
{
	static const struct opt merge_opts[] = {
		{ "output", 'o', 'o', "FILE", "the file to write (never a profile or an input)" },
		{ "help", 'h', 'h', NULL, "this list" },
		{ NULL, 0, 0, NULL, NULL },
	};
	struct opts o = { .cmd = "merge", .operands = "[FILE...]",
			  .about = "Sum FILEs, by default those of the last profil run, into one "
				   "profile.", .v = merge_opts };
	const char *out = NULL, *v;
	int c;
	optind = 0;	/* all of getopt's state afresh */
	while ((c = opts_next(&o, argc, argv, &v)) != -1) {
		switch (c) {
		case 'o': out = v; break;
		case 'h':
			opts_help(&o, stdout);
			return 0;
		default:
			return 2;
		}
	}
	if (!out) {
		error_line("merge: no -o FILE given");
		return 2;
	}
	char **files = input_files(argc - optind, argv + optind);
	if (!files)
		return 1;
	if (output_refused("-o", out, files, NULL, NULL)) {
		free_files(files);
		return 2;
	}
	if (gmon_is_file(files[0])) {
		int st = merge_gmon(files, out);
		free_files(files);
		return st;
	}
	struct profile_header h;
	memset(&h, 0, sizeof h);
	memcpy(h.magic, PROFILE_MAGIC, 8);
	h.version = PROFILE_VERSION;
	h.state = PROFILE_COMPLETE;
	h.byte_order = 0x01020304;
	h.flags = PROFILE_F_MERGED;
	struct mseg *segs = NULL;
	size_t nsegs = 0;
	struct mthreads threads = { 0 };
	struct moutside outside = { 0 };
	struct mstacks stacks = { 0 };
	int one_pid = 1;
	struct origins origins = { 0 };
	int status = 0;
	for (char **f = files; *f && !status; f++) {
		struct profile p;
		char why[512];
		if (profile_open(&p, *f, why, sizeof why) != 0) {
			error_line("%s: %s", *f, why);
			status = 1;
			break;
		}
		const struct profile_header *in = p.header;
		if (f == files)
			h.pid = in->pid;
		one_pid &= in->pid == h.pid;
		if (!h.start_ns || in->start_ns < h.start_ns)
			h.start_ns = in->start_ns;
		if (in->update_ns > h.update_ns)
			h.update_ns = in->update_ns;
		if (!h.command[0])
			memcpy(h.command, in->command, sizeof h.command);
		if (!h.cmdline_len && in->cmdline_len) {	/* the first one recorded */
			memcpy(h.cmdline, in->cmdline, in->cmdline_len);
			h.cmdline_len = in->cmdline_len;
			h.flags |= in->flags & PROFILE_F_CMDLINE_CUT;
		}
		if (in->hz > h.hz)
			h.hz = in->hz;
		if (in->backend)
			h.backend = in->backend;
		h.flags |= in->flags & (PROFILE_F_NO_KERNEL | PROFILE_F_WRITE_LOST);
		if (in->perf_errno)
			h.perf_errno = in->perf_errno;
		h.threads += in->threads;
		h.threads_unsampled += in->threads_unsampled;
		h.threads_fallback += in->threads_fallback;
		h.system += in->system;
		h.outside += in->outside;
		h.saturated += in->saturated;
		h.lost += in->lost;
		h.observed += in->observed;
		h.cpu_ns += in->cpu_ns;
		h.counted += p.counted;	/* a running file counted past its header */
		origins_note_profile(&origins, &p);
		uint32_t *seg_of = xmalloc((p.nsegs + 1) * sizeof *seg_of);
		for (size_t i = 0; i < p.nsegs; i++) {
			struct mseg *m = find(&segs, &nsegs, p.segs[i].head);
			seg_of[i] = (uint32_t)(m - segs);
			for (uint64_t k = 0; k < m->head.ncounters; k++)
				m->counts[k] += profile_count(&p.segs[i], k);
			if (!p.segs[i].system)
				continue;
			if (!m->system)
				m->system = calloc(m->head.ncounters ? m->head.ncounters : 1,
						   sizeof *m->system);
			if (!m->system) {
				error_line("out of memory");
				exit(2);
			}
			for (uint64_t k = 0; k < m->head.ncounters; k++)
				m->system[k] += profile_system(&p.segs[i], k);
		}
		uint32_t *to = xmalloc((p.nthreads + 1) * sizeof *to);
		uint64_t *out_bias = xmalloc((p.nsegs + 1) * sizeof *out_bias);
		for (size_t i = 0; i < p.nsegs; i++)
			out_bias[i] = segs[seg_of[i]].head.bias;
		add_threads(&threads, &p, seg_of, to);
		add_outside(&outside, &p);
		mstacks_add(&stacks, &p, to, out_bias);
		free(to);
		free(out_bias);
		free(seg_of);
		profile_close(&p);
	}
	free_files(files);
	if (!status)
		origins_warn(&origins, "merged into one file");
	origins_free(&origins);
	if (!one_pid)
		h.pid = 0;
	if (!status) {
		h.taken = h.counted + h.outside + h.saturated + h.lost;
		uint64_t hz = h.cpu_ns ? sat_u64(h.observed * 1e9 / h.cpu_ns + 0.5) : 0;
		h.achieved_hz = hz < UINT32_MAX ? (uint32_t)hz : UINT32_MAX;
		for (size_t i = 0; i < nsegs; i++) {
			segs[i].head.counted = 0;
			for (uint64_t k = 0; k < segs[i].head.ncounters; k++)
				segs[i].head.counted += segs[i].counts[k];
		}
		char tmp[PATH_MAX + 32];
		int fd = temp_open(out, tmp, sizeof tmp, 0600);
		if (fd < 0) {
			status = 1;
		} else {
			int ok = write_merged(fd, &h, segs, nsegs, &threads, &outside, &stacks) == 0;
			if (!ok)
				error_line("%s: %s", out, strerror(errno));
			if (temp_finish(fd, tmp, out, ok) != 0)
				status = 1;
		}
	}
	for (size_t i = 0; i < nsegs; i++) {
		free(segs[i].counts);
		free(segs[i].system);
	}
	free(segs);
	free(threads.v);
	free(threads.pcs);
	free(threads.pc_counts);
	free(outside.pcs);
	free(outside.counts);
	mstacks_free(&stacks);
	return status;
}
