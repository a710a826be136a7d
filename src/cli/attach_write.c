/*
 * attach_write.c - the profil(5) file of an attached process, written
 * whole at the end (profil run -p).
 *
 * Laid out as libprofil's own: the header page, the thread table, the
 * extension page (lost samples by cause) with, when stacks were taken,
 * the stack table and its frames (merge_stacks.c writes them, as for
 * profil merge), then a segment per executable range with, when the
 * kernel was seen, its companion of system counts.  Pages of counters
 * that hold nothing are left as holes, as the runtime leaves them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../include/profil.h"
#include "unwind/unwind.h"
#include "attach.h"
#include "cli.h"

static int put(int fd, const void *data, size_t len, uint64_t at)
{
	const char *p = data;
	while (len) {
		ssize_t w = pwrite(fd, p, len, (off_t)at);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = ENOSPC;
			return -1;
		}
		p += w;
		at += (uint64_t)w;
		len -= (size_t)w;
	}
	return 0;
}

/* The counters' pages that hold something. */
static int put_counters(int fd, const uint32_t *v, uint64_t n, uint64_t at)
{
	const uint64_t per = PROFILE_PAGE / sizeof *v;
	for (uint64_t i = 0; i < n; i += per) {
		uint64_t k = n - i < per ? n - i : per, j = 0;
		while (j < k && !v[i + j])
			j++;
		if (j < k && put(fd, v + i, k * sizeof *v, at + i * sizeof *v) != 0)
			return -1;
	}
	return 0;
}

static uint64_t pow2(uint64_t n)
{
	uint64_t p = 1;
	while (p < n)
		p <<= 1;
	return p;
}

/* The thread table: its entries and pc slots, in memory; each thread's
   entry in entry_of (0: the table's "other threads"). */
static void *thread_table(const struct attach_proc *p, uint32_t *nentries, uint64_t *npcs,
			  uint64_t *size, uint64_t *unattributed, uint32_t *entry_of)
{
	uint64_t keys = 0;
	for (size_t i = 0; i < p->nthreads; i++)
		keys += p->threads[i]->used;
	uint64_t n = 2 * (uint64_t)p->nthreads + 1;
	if (n > PROFILE_THREADS_MAX)
		n = PROFILE_THREADS_MAX;
	uint64_t slots = pow2(keys * 2 > 64 ? keys * 2 : 64);
	if (slots > PROFILE_PCS_MAX)
		slots = PROFILE_PCS_MAX;
	*size = profile_threads_size(n, slots);
	char *table = calloc(1, *size);
	if (!table)
		return NULL;
	struct profile_thread *e = (void *)table;
	struct profile_pc *pcs = (void *)(table + n * sizeof *e);
	e[0].owner = (uint32_t)p->pid;
	uint64_t now = 0;
	struct timespec ts;
	if (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) == 0)
		now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	for (size_t i = 0; i < p->nthreads; i++) {
		const struct attach_thread *t = p->threads[i];
		if (!t->samples && !t->clock_ns)
			continue;
		uint32_t entry = 0, at = profile_thread_hash(t->tid, (uint32_t)n);
		for (int probe = 0; probe < PROFILE_PROBES && n > 1; probe++) {
			if (!e[at].tid) {
				entry = at;
				break;
			}
			at = at + 1 < n ? at + 1 : 1;
		}
		e[entry].samples += t->samples;
		e[entry].system += t->system;
		entry_of[i] = entry;
		if (!entry)
			continue;
		e[entry].tid = t->tid;
		e[entry].owner = (uint32_t)p->pid | (t->ended ? PROFILE_THREAD_ENDED : 0);
		memcpy(e[entry].comm, t->comm, sizeof e[entry].comm);
		e[entry].named_ns = now;
		for (size_t k = 0; k < t->npcs; k++) {
			const struct attach_pc *s = &t->pcs[k];
			uint32_t obj = (uint32_t)(s->key >> 32) - 1;
			uint64_t index = (uint32_t)s->key;
			if (!s->key || !profile_pc_keyable(entry, obj, index))
				continue;
			uint64_t key = profile_pc_key(entry, obj, index);
			uint64_t slot = profile_pc_hash(key, slots);
			for (int probe = 0; probe < PROFILE_PROBES; probe++) {
				if (!pcs[slot].key) {
					pcs[slot] = (struct profile_pc){ key, s->count, s->system };
					break;
				}
				slot = (slot + 1) & (slots - 1);
			}
		}
	}
	*nentries = (uint32_t)n;
	*npcs = slots;
	*unattributed = 0;
	return table;
}

int attach_write(const struct attach_config *c, const struct attach_proc *p, const char *dir)
{
	char path[PATH_MAX + 300];
	snprintf(path, sizeof path, "%s/%s.%d.prof", dir, p->name, (int)p->pid);
	struct profile_header *h = calloc(1, PROFILE_PAGE);
	if (!h) {
		error_line("%s: out of memory", path);
		return -1;
	}
	memcpy(h->magic, PROFILE_MAGIC, 8);
	h->version = PROFILE_VERSION;
	h->state = PROFILE_COMPLETE;
	h->byte_order = 0x01020304;
	h->pid = p->pid;
	h->ppid = p->ppid;
	h->hz = c->hz;
	h->backend = PROFIL_BACKEND_PERF;
	h->flags = (c->user_only ? PROFILE_F_NO_KERNEL : 0) | (p->cmdline_cut ? PROFILE_F_CMDLINE_CUT : 0);
	h->start_ns = p->start_ns;
	h->update_ns = p->end_ns;
	h->run_id = c->run_id;
	snprintf(h->command, sizeof h->command, "%s", p->name);
	memcpy(h->cmdline, p->cmdline, p->cmdline_len);
	h->cmdline_len = p->cmdline_len;

	/*
	 * Every period of task clock that no sample stands for (a timer
	 * that fired late, the tail of the window, kernel time a user-only
	 * event does not sample) is lost: taken stands for the CPU time of
	 * the window, as in any run.
	 */
	struct mstacks ms;
	memset(&ms, 0, sizeof ms);
	ms.ext_files = 1;
	uint64_t observed = p->counted + p->outside + p->saturated, cpu = 0;
	uint32_t sampled = 0;
	for (size_t i = 0; i < p->nthreads; i++) {
		const struct attach_thread *t = p->threads[i];
		cpu += t->clock_ns;
		sampled++;
		ms.lost_by[PROFILE_LOST_RING] += t->lost_ring;
		ms.lost_by[PROFILE_LOST_THROTTLE] += t->lost_throttled;
		ms.lost_by[PROFILE_LOST_CORRUPT] += t->lost_corrupt;
	}
	uint64_t lost = ms.lost_by[PROFILE_LOST_RING] + ms.lost_by[PROFILE_LOST_THROTTLE]
			+ ms.lost_by[PROFILE_LOST_CORRUPT];
	uint64_t due = cpu / c->period_ns;
	if (due > observed + lost) {
		ms.lost_by[c->user_only ? PROFILE_LOST_KERNEL : PROFILE_LOST_LATE] +=
			due - observed - lost;
		lost = due - observed;
	}
	h->counted = p->counted;
	h->outside = p->outside;
	h->saturated = p->saturated;
	h->lost = lost;
	h->taken = p->counted + p->outside + p->saturated + lost;
	h->observed = observed;
	h->cpu_ns = cpu;
	h->achieved_hz = cpu ? (uint32_t)(observed * 1e9 / (double)cpu + 0.5) : 0;
	h->system = p->system;
	h->threads = sampled;
	h->threads_unsampled = p->unsampled;

	uint64_t table_size = 0, npcs = 0, unattributed = 0;
	uint32_t nentries = 0;
	uint32_t *entry_of = xmalloc((p->nthreads + 1) * sizeof *entry_of);
	memset(entry_of, 0, (p->nthreads + 1) * sizeof *entry_of);
	void *table = thread_table(p, &nentries, &npcs, &table_size, &unattributed, entry_of);
	if (table) {
		h->thread_entries = nentries;
		h->threads_at = PROFILE_PAGE;
		h->threads_size = table_size;
		h->thread_pcs = npcs;
		h->unattributed = unattributed;
	} else {
		h->unattributed = p->counted;
	}
	/* The stacks, by the thread entries just made. */
	if (c->stack_copy) {
		const struct mstacks *run = &p->stacks;
		ms.files = 1;
		ms.stacks = run->stacks;
		ms.unplaced = run->unplaced;
		memcpy(ms.stop, run->stop, sizeof ms.stop);
		ms.max_depth = UNWIND_MAX_DEPTH;
		ms.stack_copy = c->stack_copy;
		for (size_t i = 0; i < run->n; i++) {
			const struct mstack *v = &run->v[i];
			uint32_t entry = table ? entry_of[v->entry] : 0;
			if (mstacks_put(&ms, entry, run->pcs + v->first, v->depth, v->stop, v->count,
					v->system) != 0) {
				ms.unplaced += v->count;
				ms.stacks -= ms.stacks >= v->count ? v->count : ms.stacks;
			}
		}
	}
	free(entry_of);
	h->ext_at = PROFILE_PAGE + table_size;
	uint64_t end = h->ext_at + mstacks_size(&ms);
	for (size_t i = 0; i < p->nobjs; i++)
		end += p->objs[i]->head.size * (p->objs[i]->system ? 2 : 1);
	h->end = end;

	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		error_line("%s: %s", path, strerror(errno));
		free(h);
		free(table);
		mstacks_free(&ms);
		return -1;
	}
	int bad = ftruncate(fd, (off_t)end) != 0;
	if (!bad && table)
		bad = put(fd, table, table_size, PROFILE_PAGE) != 0;
	if (!bad)
		bad = mstacks_write(fd, &ms, h->ext_at) != 0;
	uint64_t at = h->ext_at + mstacks_size(&ms);
	uint32_t nsegs = 0;
	struct profile_segment *head = malloc(PROFILE_PAGE);
	bad |= !head;
	for (size_t i = 0; i < p->nobjs && !bad; i++) {
		const struct attach_obj *o = p->objs[i];
		memcpy(head, &o->head, PROFILE_PAGE);
		if (o->unmapped)
			head->flags |= PROFILE_SEG_UNMAPPED;
		uint64_t sum = 0;
		for (uint64_t k = 0; k < o->head.ncounters; k++)
			sum += o->counts[k];
		head->counted = sum;
		bad = put(fd, head, PROFILE_PAGE, at) != 0
		      || put_counters(fd, o->counts, o->head.ncounters, at + PROFILE_PAGE) != 0;
		at += o->head.size;
		nsegs++;
		if (bad || !o->system)
			continue;
		head->flags |= PROFILE_SEG_SYSTEM;
		head->counted = 0;
		bad = put(fd, head, PROFILE_PAGE, at) != 0
		      || put_counters(fd, o->system, o->head.ncounters, at + PROFILE_PAGE) != 0;
		at += o->head.size;
		nsegs++;
	}
	h->nsegments = nsegs;
	if (!bad)
		bad = put(fd, h, PROFILE_PAGE, 0) != 0;
	int err = errno;
	if (close(fd) != 0 && !bad) {
		bad = 1;
		err = errno;
	}
	free(head);
	free(h);
	free(table);
	mstacks_free(&ms);
	if (bad) {
		error_line("%s: cannot write: %s", path, strerror(err));
		unlink(path);
		return -1;
	}
	return 0;
}
