/*
 * classic.c - the files of the classic calls as input to report, merge
 * and export: pcsample files (pcsample(5), from profil_pcsample_save)
 * and mon.out (mon.out(5), from monitor).  Their own modules in
 * src/format read them; this turns raw addresses into link-time bins of
 * the objects their load maps name, a pc into a one-byte bin, a mon.out
 * counter into the pcs the exact inverse of the bin formula gives it.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/bins.h"
#include "../format/monout.h"
#include "../format/pcsfile.h"
#include "../format/profile.h"
#include "cli.h"
#include "model.h"

enum { NOT_CLASSIC, PCSAMPLE, MONOUT };

/* Which kind of file path is, from its first and last 8 bytes. */
static int kind_of(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NOT_CLASSIC;	/* profile_open says why */
	unsigned char head[8], tail[MONOUT_FOOTER];
	int kind = NOT_CLASSIC;
	off_t size = lseek(fd, 0, SEEK_END);
	if (pread(fd, head, sizeof head, 0) == (ssize_t)sizeof head && pcsfile_is(head, sizeof head))
		kind = PCSAMPLE;
	else if (size >= MONOUT_FOOTER
		 && pread(fd, tail, sizeof tail, size - MONOUT_FOOTER) == (ssize_t)sizeof tail
		 && monout_is(tail, sizeof tail))
		kind = MONOUT;
	close(fd);
	return kind;
}

/* The model's object for a load map entry, with its range.  The vDSO
   (named by the kernel, no file behind it) is marked as the profile
   file's segments mark it, so that no reader looks for its file. */
static struct object *object_of(struct model *m, const struct loadmap_entry *e)
{
	struct object *o = model_object(m, e->name, NULL, 0, e->bias);
	if (strncmp(e->name, "linux-vdso", 10) == 0 || strncmp(e->name, "linux-gate", 10) == 0)
		o->flags |= PROFILE_SEG_VDSO;
	model_range(o, e->start - e->bias, e->end - e->start, e->file_offset);
	return o;
}

static void add_stats(struct model *m, uint32_t hz, uint64_t counted, uint64_t outside,
		      uint64_t period_ns)
{
	if (m->nfiles == 0 || hz > m->hz)
		m->hz = hz;
	m->taken += counted + outside;
	m->counted += counted;
	m->outside += outside;
	m->observed += counted + outside;
	m->cpu_ns += (counted + outside) * period_ns;
	m->nfiles++;
}

static void add_pcsample(struct model *m, const struct pcs_file *f)
{
	uint64_t outside = 0;
	for (uint64_t i = 0; i < f->nsamples; i++) {
		uint64_t pc = f->samples[i];
		const struct loadmap_entry *e = loadmap_find(f->objects, f->nobjects, pc);
		if (!e) {	/* kept where it was: JIT code, say */
			model_outside(m, pc, pc, 1);
			outside++;
			continue;
		}
		model_bin(object_of(m, e), pc - e->bias, pc - e->bias, 1);
	}
	add_stats(m, f->hz, f->nsamples - outside, outside, f->period_ns);
}

static void add_monout(struct model *m, const struct monout *mo)
{
	uint64_t counted = 0, outside = 0;
	for (uint64_t i = 0; i < mo->nhist; i++) {
		uint64_t first, last, c = mo->hist[i];
		if (!c || !bins_first_pc(i, mo->lowpc, mo->scale, &first)
		    || !bins_last_pc(i, mo->lowpc, mo->scale, &last))
			continue;
		/* A counter lies in one object unless the range spans a gap. */
		const struct loadmap_entry *e = loadmap_find(mo->objects, mo->nobjects, first);
		if (!e)
			e = loadmap_find(mo->objects, mo->nobjects, last);
		if (!e) {
			model_outside(m, first, last, c);
			outside += c;
			continue;
		}
		if (first < e->start)
			first = e->start;
		if (last >= e->end)
			last = e->end - 1;
		model_bin(object_of(m, e), first - e->bias, last - e->bias, c);
		counted += c;
	}
	add_stats(m, mo->hz, counted, outside, mo->period_ns);
}

int model_add_classic(struct model *m, const char *path)
{
	int kind = kind_of(path);
	if (kind == NOT_CLASSIC)
		return 1;
	unsigned char *data;
	size_t len;
	const char *why;
	if (file_slurp(path, &data, &len, &why) != 0) {
		error_line("%s: %s", path, why);
		return -1;
	}
	int r;
	if (kind == PCSAMPLE) {
		struct pcs_file f;
		r = pcsfile_parse(data, len, &f, &why);
		if (r == 0) {
			add_pcsample(m, &f);
			pcsfile_free(&f);
		}
	} else {
		struct monout mo;
		r = monout_parse(data, len, &mo, &why);
		if (r == 0) {
			add_monout(m, &mo);
			monout_free(&mo);
		}
	}
	free(data);
	if (r != 0)
		error_line("%s: %s", path, why);
	return r;
}
