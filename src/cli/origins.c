/*
 * origins.c - which runs of which programs the files given are (cli.h).
 * Files of one run add up by design (the processes of a tree); files of
 * different runs of the same program add up too (several runs for more
 * samples); files of runs of different programs summed into one flat
 * profile are most likely a slip of a glob, and are said so.
 *
 * A run is profil run's run_id; a file without one (gmon.out, a merged
 * file, the preload set by hand) is taken for a run of its program of
 * its own.  The runs are "of different programs" when some program has
 * files in one run and none in another.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../format/profile.h"
#include "cli.h"

static size_t intern(char ***v, size_t *n, const char *s)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*v)[i], s) == 0)
			return i;
	*v = xrealloc(*v, (*n + 1) * sizeof **v);
	(*v)[*n] = xstrdup(s);
	return (*n)++;
}

void origins_note(struct origins *o, uint64_t run_id, const char *program)
{
	if (!program || !*program)
		return;	/* a file that does not say (pcsample, mon.out) */
	size_t prog = intern(&o->programs, &o->nprograms, program);
	/* The run's key: its id, or "#program" for a file of no run. */
	char key[32];
	if (run_id)
		snprintf(key, sizeof key, "%llu", (unsigned long long)run_id);
	else
		snprintf(key, sizeof key, "#%zu", prog);
	size_t run = intern(&o->runs, &o->nruns, key);
	for (size_t i = 0; i < o->npairs; i++)
		if (o->pairs[i].run == run && o->pairs[i].program == prog)
			return;
	o->pairs = xrealloc(o->pairs, (o->npairs + 1) * sizeof *o->pairs);
	o->pairs[o->npairs++] = (struct origin_pair){ run, prog };
}

const char *profile_program(const struct profile *p, char *buf, size_t len)
{
	for (size_t i = 0; i < p->nsegs; i++)
		if (p->segs[i].head->flags & PROFILE_SEG_MAIN)
			return p->segs[i].head->path;
	snprintf(buf, len, "%.*s", (int)sizeof p->header->command, p->header->command);
	return buf;
}

void origins_note_profile(struct origins *o, const struct profile *p)
{
	char command[sizeof p->header->command + 1];
	origins_note(o, p->header->run_id, profile_program(p, command, sizeof command));
}

int origins_mixed(const struct origins *o)
{
	if (o->nruns < 2 || o->nprograms < 2)
		return 0;
	/* The pairs are unique: every program is in every run iff each
	   program has as many pairs as there are runs. */
	size_t *per = xmalloc(o->nprograms * sizeof *per);
	memset(per, 0, o->nprograms * sizeof *per);
	for (size_t i = 0; i < o->npairs; i++)
		per[o->pairs[i].program]++;
	int mixed = 0;
	for (size_t i = 0; i < o->nprograms; i++)
		mixed |= per[i] != o->nruns;
	free(per);
	return mixed;
}

const char *origins_describe(const struct origins *o, char *buf, size_t len)
{
	snprintf(buf, len, "%zu run%s of %zu program%s", o->nruns, o->nruns == 1 ? "" : "s",
		 o->nprograms, o->nprograms == 1 ? "" : "s");
	return buf;
}

void origins_warn(const struct origins *o, const char *what)
{
	if (!origins_mixed(o))
		return;
	char names[200] = "", d[64];
	size_t used = 0;
	for (size_t i = 0; i < o->nprograms && used < sizeof names; i++) {
		const char *base = strrchr(o->programs[i], '/');
		base = base ? base + 1 : o->programs[i];
		int w = i == 3 ? snprintf(names + used, sizeof names - used, ", ...")
			       : snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "",
					  base);
		if (w < 0 || (size_t)w >= sizeof names - used || i == 3)
			break;
		used += (size_t)w;
	}
	error_line("warning: the files are %s (%s), %s", origins_describe(o, d, sizeof d),
		   names, what);
}

void origins_free(struct origins *o)
{
	for (size_t i = 0; i < o->nprograms; i++)
		free(o->programs[i]);
	for (size_t i = 0; i < o->nruns; i++)
		free(o->runs[i]);
	free(o->programs);
	free(o->runs);
	free(o->pairs);
	memset(o, 0, sizeof *o);
}
