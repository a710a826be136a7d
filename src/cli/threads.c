/*
 * threads.c - the threads of a profile: the rows of profil(5)'s thread
 * table in the model (model.h), and the bins of the threads a filter
 * (report --tid, --comm) keeps, from the table's pc pool.
 *
 * A pc slot names the histogram counter its samples were counted in
 * (segment and index), so a thread's bins are made by the same inverse
 * of the bin formula as the process's, at the same addresses.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../common/bins.h"
#include "../format/profile.h"
#include "cli.h"
#include "model.h"

int thread_kept(const struct thread_filter *f, int32_t tid, const char *comm)
{
	if (!f)
		return 1;
	if (f->ntids) {
		size_t i = 0;
		while (i < f->ntids && f->tids[i] != tid)
			i++;
		if (i == f->ntids)
			return 0;
	}
	return !f->comm || fnmatch(f->comm, comm, 0) == 0;
}

/* --tid TID[,TID...]: the list, or -1 after one line saying what is wrong. */
int thread_filter_tids(struct thread_filter *f, const char *arg)
{
	int32_t *tids = NULL;
	size_t n = 0;
	const char *p = arg;
	for (;;) {
		char *end;
		errno = 0;
		long v = strtol(p, &end, 10);
		if (end == p || errno || v <= 0 || v > INT32_MAX || (*end && *end != ',')) {
			error_line("--tid '%s': not a list of thread ids (TID[,TID...])", arg);
			free(tids);
			free((void *)f->tids);	/* an earlier --tid's: the command stops */
			f->tids = NULL;
			f->ntids = 0;
			return -1;
		}
		tids = xrealloc(tids, (n + 1) * sizeof *tids);
		tids[n++] = (int32_t)v;
		if (!*end)
			break;
		p = end + 1;
	}
	free((void *)f->tids);
	f->tids = tids;
	f->ntids = n;
	return 0;
}

static struct thread *new_thread(struct model *m, int32_t pid, int32_t tid, const char *comm,
				 const char *program)
{
	m->thread_rows = xrealloc(m->thread_rows, (m->nthread_rows + 1) * sizeof *m->thread_rows);
	struct thread *t = &m->thread_rows[m->nthread_rows++];
	memset(t, 0, sizeof *t);
	t->pid = pid;
	t->tid = tid;
	memcpy(t->comm, comm, strnlen(comm, sizeof t->comm - 1));
	t->program = xstrdup(program);
	return t;
}

void model_thread_whole(struct model *m, int32_t pid, const char *program, uint64_t samples,
			uint64_t system)
{
	struct thread *t = new_thread(m, pid, THREAD_NO_TABLE, "", program);
	t->samples = t->unplaced = samples;
	t->system = system;
}

void model_add_threads(struct model *m, const struct profile *p, const size_t *objs)
{
	const struct profile_header *h = p->header;
	char program[sizeof h->command + 1];
	memcpy(program, h->command, sizeof h->command);
	program[sizeof h->command] = '\0';
	if (!p->nthreads) {
		model_thread_whole(m, h->pid, program, p->counted, p->system);
		return;
	}
	m->thread_files++;
	/* A running file's counters may be a sample or two ahead of its
	   table: those are unattributed too, so that the rows add up. */
	uint64_t held = h->unattributed;
	for (uint32_t i = 0; i < p->nthreads; i++)
		held += p->threads[i].samples;
	uint64_t none = h->unattributed + (p->counted > held ? p->counted - held : 0);
	m->unattributed += none;
	if (none) {
		struct thread *t = new_thread(m, h->pid, THREAD_UNATTRIBUTED, "", program);
		t->samples = t->unplaced = none;
	}
	/* Threads get an entry at their first sample: those sampled that
	   have none never had one, unless the table was full. */
	uint32_t present = 0;
	for (uint32_t i = 1; i < p->nthreads; i++)
		present += p->threads[i].tid != 0;
	if (p->threads[0].samples || h->unattributed)
		m->threads_silent_unknown = 1;
	else if (h->threads > present)
		m->threads_silent += h->threads - present;
	size_t *row = xmalloc(p->nthreads * sizeof *row);	/* entry to m->thread_rows */
	int *keep = xmalloc(p->nthreads * sizeof *keep);
	uint64_t *placed = xmalloc(p->nthreads * sizeof *placed);
	memset(placed, 0, p->nthreads * sizeof *placed);
	for (uint32_t i = 0; i < p->nthreads; i++) {
		const struct profile_thread *e = &p->threads[i];
		row[i] = SIZE_MAX;
		keep[i] = 0;
		if (i == 0 ? !e->samples : !e->tid)
			continue;
		struct thread *t = new_thread(m, i ? PROFILE_THREAD_PID(e->owner) : h->pid,
					      i ? e->tid : THREAD_OTHERS, e->comm, program);
		t->samples = e->samples;
		t->system = e->system;
		t->ended = !!(e->owner & PROFILE_THREAD_ENDED);
		row[i] = m->nthread_rows - 1;
		keep[i] = m->filter && thread_kept(m->filter, t->tid, t->comm);
	}
	/* Only the slots the file holds: the pool is mostly holes. */
	for (uint64_t k = 0, end; (k = profile_data(p, p->pcs, sizeof *p->pcs, p->npcs, k, &end))
				  < p->npcs;)
	for (; k < end; k++) {
		const struct profile_pc *s = &p->pcs[k];
		uint32_t e = PROFILE_PC_ENTRY(s->key), seg = PROFILE_PC_SEG(s->key);
		uint64_t index = PROFILE_PC_INDEX(s->key), first, last;
		if (!s->key || e >= p->nthreads || row[e] == SIZE_MAX || seg >= p->nsegs)
			continue;	/* what the entry's samples miss is unplaced */
		const struct profile_segment *head = p->segs[seg].head;
		if (index >= head->ncounters || !bins_first_pc(index, head->start, head->scale, &first)
		    || !bins_last_pc(index, head->start, head->scale, &last))
			continue;
		placed[e] += s->count;
		if (keep[e])
			model_bin_system(&m->objects[objs[seg]], first - head->bias, last - head->bias,
					 s->count, s->system);
	}
	for (uint32_t i = 0; i < p->nthreads; i++) {
		if (row[i] == SIZE_MAX)
			continue;
		struct thread *t = &m->thread_rows[row[i]];
		t->unplaced = t->samples > placed[i] ? t->samples - placed[i] : 0;
		if (keep[i]) {
			m->kept += t->samples;
			m->kept_unplaced += t->unplaced;
			m->kept_threads++;
		}
	}
	free(row);
	free(keep);
	free(placed);
}
