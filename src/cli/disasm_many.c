/*
 * disasm_many.c - many functions disassembled with few objdump runs.
 *
 * Most of an objdump run is not the function asked for: objdump reads
 * the whole section that holds it (cc1's 25 MB of .text) and, with -l,
 * the object's line tables, whatever the range.  A build's page asks for
 * 40 functions, most of them in cc1 and libc, many a few kilobytes
 * apart, so functions of one object close enough together are
 * disassembled by one run over the range that holds them all, and that
 * run's output is cut into one part per function.
 *
 * A part must be what a run of that function alone prints (the page must
 * not depend on how its functions were grouped).  What objdump carries
 * from one function to the next in one run is the function and line it
 * printed last (-l prints "name():" and "file:line" only when they
 * change), where it stopped reading bytes (an instruction crossing the
 * function's end is cut short in a run that stops there), and runs of
 * zero bytes ("...", which depend on where the range ends).  A part is
 * taken only if none of these can differ: its first instruction is
 * preceded by both "name():" and "file:line" (or the run printed no line
 * at all), no instruction crosses its end, and no zeros were skipped or
 * disassembled at its end.  Its own run's banner ends with a header
 * ("<name>:" or "<symbol+0x10>:"), not kept, so the part starts after
 * the previous instruction or after its own header.  Any
 * other function of the group is disassembled by a run of its own.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rows.h"

#define GROUP_GAP (32u << 10)	/* bytes between two functions of one run: objdump
				   disassembles about 1.5 MB/s with -l, a run
				   costs 40-80 ms before its first instruction */
#define GROUP_SPAN (256u << 10)	/* bytes a run disassembles at most */

struct run {
	FILE *p;
	size_t first, n;	/* of order[] */
};

static int by_object_start(const void *a, const void *b, void *arg)
{
	const struct disasm_job *v = arg;
	const struct disasm_job *x = &v[*(const size_t *)a], *y = &v[*(const size_t *)b];
	if (x->key != y->key)
		return (uintptr_t)x->key < (uintptr_t)y->key ? -1 : 1;
	if (x->fn.start != y->fn.start)
		return x->fn.start < y->fn.start ? -1 : 1;
	return 0;
}

/* "0000000000778a50 <name>:\n": a symbol's header; its address, or
   UINT64_MAX. */
static uint64_t header_address(const char *line)
{
	char *end;
	uint64_t a = strtoull(line, &end, 16);
	size_t len = strlen(line);
	if (end == line || *end != ' ' || end[1] != '<' || len < 3 || strcmp(line + len - 3, ">:\n"))
		return UINT64_MAX;
	return a;
}

static int skipped_zeros(const char *line)
{
	return strcmp(line, "\t...\n") == 0;
}

/* Zero bytes disassembled: what a run that ends there may print as
   "..." instead. */
static int zero_bytes(const char *line)
{
	return strstr(line, "(bad)") || strstr(line, "add    %al,(%rax)");
}

/*
 * Part of all (a run's output from the first job's start) for job j:
 * lines [*from, *to), looked for from *from on, or -1 if it cannot be
 * known to be what a run of j alone prints.  first: j is the run's first
 * function; last_of_run: its last (the run stops at j's end, as j's own
 * would).
 */
static int part(const struct disasm *all, const struct disasm_job *j, int first, int last_of_run,
		int lines_seen, size_t *from, size_t *to)
{
	size_t ins = *from;	/* j's first instruction */
	while (ins < all->n && all->addrs[ins] != j->fn.start)
		ins++;
	if (ins == all->n)
		return -1;
	size_t begin = ins;
	if (first) {	/* printed as by its own run, up to its end */
		begin = 0;
		for (size_t k = 0; k < ins; k++)
			if (all->addrs[k] != UINT64_MAX)
				return -1;
	} else {	/* what -l printed before it, after its header if it has one */
		while (begin > *from && all->addrs[begin - 1] == UINT64_MAX
		       && header_address(all->lines[begin - 1]) == UINT64_MAX
		       && strcmp(all->lines[begin - 1], "\n"))
			begin--;
		if (begin > *from && all->addrs[begin - 1] == UINT64_MAX
		    && header_address(all->lines[begin - 1]) != j->fn.start)
			return -1;
		size_t pre = ins - begin;
		if (lines_seen ? pre != 2 || !strstr(all->lines[begin], "():\n") : pre != 0)
			return -1;
	}
	uint64_t end = j->fn.start + j->fn.size;
	size_t last = ins;
	for (size_t k = ins; k < all->n && (all->addrs[k] == UINT64_MAX || all->addrs[k] < end);
	     k++) {
		if (skipped_zeros(all->lines[k]))
			return -1;
		if (all->addrs[k] != UINT64_MAX)
			last = k;
	}
	size_t next = last + 1;	/* the next instruction: where the last one ends */
	while (next < all->n && all->addrs[next] == UINT64_MAX) {
		if (skipped_zeros(all->lines[next]))
			return -1;
		next++;
	}
	if (next < all->n ? all->addrs[next] > end : !last_of_run)
		return -1;
	if (zero_bytes(all->lines[last]))
		return -1;
	*from = begin;
	*to = last + 1;
	return 0;
}

/* The lines of all that a run prints for -l: neither instructions nor
   headers nor blank. */
static int printed_lines(const struct disasm *all)
{
	for (size_t k = 0; k < all->n; k++)
		if (all->addrs[k] == UINT64_MAX && header_address(all->lines[k]) == UINT64_MAX
		    && strcmp(all->lines[k], "\n") && strncmp(all->lines[k], "Disassembly of ", 15))
			return 1;
	return 0;
}

static void split(struct disasm_job *v, const size_t *order, const struct run *r,
		  struct disasm *all)
{
	int seen = printed_lines(all);
	size_t at = 0;	/* where the parts already taken end */
	for (size_t g = 0; g < r->n; g++) {
		struct disasm_job *j = &v[order[r->first + g]];
		size_t from = at, to;
		if (part(all, j, g == 0, g + 1 == r->n, seen, &from, &to) != 0)
			continue;	/* left to a run of its own */
		at = to;
		struct disasm *d = &j->d;
		memset(d, 0, sizeof *d);
		d->n = to - from;
		d->lines = xmalloc((d->n ? d->n : 1) * sizeof *d->lines);
		d->addrs = xmalloc((d->n ? d->n : 1) * sizeof *d->addrs);
		for (size_t k = from; k < to; k++) {
			d->lines[k - from] = all->lines[k];
			all->lines[k] = NULL;
			d->addrs[k - from] = all->addrs[k];
		}
		disasm_count(j->o, &j->fn, d);
		j->ok = 1;
	}
	for (size_t k = 0; k < all->n; k++)
		free(all->lines[k]);
	free(all->lines);
	free(all->addrs);
	memset(all, 0, sizeof *all);
}

static void finish(struct disasm_job *v, const size_t *order, const struct run *r)
{
	struct disasm all;
	if (r->n == 1) {
		struct disasm_job *j = &v[order[r->first]];
		j->ok = disasm_end(r->p, j->o, &j->fn, &j->d, 1) == 0;
		return;
	}
	if (disasm_read(r->p, &all) == 0)
		split(v, order, r, &all);
}

/* The runs of order[] in turn, ahead at once. */
static void run_all(struct disasm_job *v, const size_t *order, const struct run *runs, size_t n,
		    int ahead)
{
	struct run *on = xmalloc((size_t)ahead * sizeof *on);
	size_t started = 0, ended = 0;
	for (size_t i = 0; i < n; i++) {
		if (started - ended == (size_t)ahead) {	/* the oldest first */
			finish(v, order, &on[ended % (size_t)ahead]);
			ended++;
		}
		struct run *r = &on[started++ % (size_t)ahead];
		*r = runs[i];
		const struct disasm_job *a = &v[order[r->first]], *z = &v[order[r->first + r->n - 1]];
		uint64_t end = r->n == 1 ? a->fn.start + (a->fn.size ? a->fn.size : 1)
					 : z->fn.start + z->fn.size;
		r->p = disasm_popen(a->o, a->fn.name, a->fn.start, end, 1);
	}
	for (; ended < started; ended++)
		finish(v, order, &on[ended % (size_t)ahead]);
	free(on);
}

void disasm_many(struct disasm_job *v, size_t n, int ahead)
{
	if (!n)
		return;
	size_t *order = xmalloc(n * sizeof *order);
	struct run *runs = xmalloc(n * sizeof *runs);
	for (size_t i = 0; i < n; i++) {
		order[i] = i;
		v[i].ok = 0;
		memset(&v[i].d, 0, sizeof v[i].d);
	}
	qsort_r(order, n, sizeof *order, by_object_start, v);
	size_t nruns = 0;
	for (size_t i = 0; i < n;) {
		size_t k = i + 1;
		const struct disasm_job *a = &v[order[i]];
		while (k < n && a->fn.size) {
			const struct disasm_job *p = &v[order[k - 1]], *q = &v[order[k]];
			if (q->key != a->key || !q->fn.size || q->fn.start < p->fn.start + p->fn.size
			    || q->fn.start - (p->fn.start + p->fn.size) > GROUP_GAP
			    || q->fn.start + q->fn.size - a->fn.start > GROUP_SPAN)
				break;
			k++;
		}
		runs[nruns++] = (struct run){ NULL, i, k - i };
		i = k;
	}
	run_all(v, order, runs, nruns, ahead);
	/* What a group's run could not stand for: each alone. */
	size_t nalone = 0;
	for (size_t r = 0; r < nruns; r++)
		for (size_t g = 0; runs[r].n > 1 && g < runs[r].n; g++)
			if (!v[order[runs[r].first + g]].ok)
				order[nalone++] = order[runs[r].first + g];
	/* order[] now holds those first; the runs of one each */
	for (size_t i = 0; i < nalone; i++)
		runs[i] = (struct run){ NULL, i, 1 };
	run_all(v, order, runs, nalone, ahead);
	free(runs);
	free(order);
}
