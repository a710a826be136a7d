/*
 * stackcheck.c - what tests/integration/stacks.sh asserts of the stack
 * table of a profile of tests/cli/stacks.c.
 *
 *	stackcheck PROFILE NMFILE calls|calls-nozlib|any
 *
 * NMFILE is `nm -S --defined-only` of the program: its functions are
 * named, every other pc goes by the base name of its object.  Prints the
 * completeness by stop reason; with calls, checks the callers the
 * program really has (see stacks.c) and exits 1 with a line for each
 * check that fails; calls-nozlib, for a program built without libz
 * (where it is not installed for the processor), leaves libz out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/profile.h"

struct sym { uint64_t lo, hi; char name[64]; };
static struct sym *syms;
static size_t nsyms;
static const struct profile *prof;
static uint64_t main_bias;
static int fail;

static void no(const char *what, double got, double want)
{
	printf("not ok: %s: %.2f%% (want at least %.2f%%)\n", what, got, want);
	fail = 1;
}

/* A share of fewer than 20 samples says nothing either way. */
static void share(const char *what, const uint64_t a[2], double want)
{
	double got = a[0] ? 100.0 * a[1] / a[0] : 0;
	if (a[0] < 20) {
		printf("not ok: %s: %llu samples, want at least 20\n", what, (unsigned long long)a[0]);
		fail = 1;
	} else if (got < want) {
		no(what, got, want);
	}
}

static void read_nm(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		perror(path);
		exit(2);
	}
	char line[512];
	while (fgets(line, sizeof line, f)) {
		unsigned long long a, s;
		char type, name[64];
		if (sscanf(line, "%llx %llx %c %63s", &a, &s, &type, name) != 4
		    || (type != 't' && type != 'T') || !s)
			continue;
		syms = realloc(syms, (nsyms + 1) * sizeof *syms);
		syms[nsyms].lo = a;
		syms[nsyms].hi = a + s;
		snprintf(syms[nsyms].name, sizeof syms[nsyms].name, "%s", name);
		char *dot = strchr(syms[nsyms].name, '.');	/* rec_leaf.constprop.0 */
		if (dot)
			*dot = '\0';
		nsyms++;
	}
	fclose(f);
}

/* The function of pc in the program, or its object's base name, or "?". */
static const char *name_of(uint64_t pc, int exact)
{
	uint64_t at = exact ? pc : pc - 1;
	for (size_t i = 0; i < prof->nsegs; i++) {
		const struct profile_segment *h = prof->segs[i].head;
		if (h->flags & PROFILE_SEG_SYSTEM || at < h->start || at - h->start >= h->length)
			continue;
		if (h->flags & PROFILE_SEG_MAIN) {
			for (size_t k = 0; k < nsyms; k++)
				if (at - main_bias >= syms[k].lo && at - main_bias < syms[k].hi)
					return syms[k].name;
			return "main?";
		}
		const char *b = strrchr(h->path, '/');
		return b ? b + 1 : h->path;
	}
	return "?";
}

static int is_main(const char *n)
{
	return strcmp(n, "?") && !strstr(n, ".so") && strcmp(n, "[vdso]");
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: stackcheck PROFILE NMFILE calls|calls-nozlib|any\n");
		return 2;
	}
	struct profile p;
	char why[256];
	if (profile_open(&p, argv[1], why, sizeof why) != 0) {
		fprintf(stderr, "%s: %s\n", argv[1], why);
		return 2;
	}
	prof = &p;
	read_nm(argv[2]);
	for (size_t i = 0; i < p.nsegs; i++)
		if (p.segs[i].head->flags & PROFILE_SEG_MAIN)
			main_bias = p.segs[i].head->bias;
	if (!p.ext || !p.nstacks) {
		printf("not ok: no stack table\n");
		return 1;
	}
	uint64_t total = 0, by_stop[PROFILE_STOP_COUNT] = { 0 };
	/* calls: [0] samples, [1] of them right */
	uint64_t cmp[2] = { 0 }, rec[2] = { 0 }, zl[2] = { 0 }, outer[2] = { 0 }, thr[2] = { 0 };
	int64_t main_entry = -1, thread_entry = -1;
	int entries_apart = 1;
	for (uint64_t i = 0; i < p.nstacks; i++) {
		const struct profile_stack *s = &p.stacks[i];
		const uint64_t *pcs = profile_stack_pcs(&p, s);
		if (!pcs)
			continue;
		total += s->count;
		by_stop[s->stop < PROFILE_STOP_COUNT ? s->stop : 0] += s->count;
		if (s->stop != PROFILE_STOP_COMPLETE)
			continue;
		const char *names[PROFILE_DEPTH_MAX];
		for (unsigned k = 0; k < s->depth; k++)
			names[k] = name_of(pcs[k], k == 0);
		const char *leaf = names[0], *last = names[s->depth - 1];
		int in_thread = 0, in_main = 0;
		for (unsigned k = 0; k < s->depth; k++) {
			in_thread |= !strcmp(names[k], "thread_main");
			in_main |= !strcmp(names[k], "main");
		}
		/* Outermost: _start in the program, or clone3 in libc.  The
		   main thread's stacks need not have main: _start's first
		   call may go through the loader's lazy binding, and the
		   constructors (libprofil's own, once its timer runs) are
		   called from the loader's entry; and a thread's, thread_main:
		   libc starts and ends it.  Under qemu-user each of those
		   takes a few samples. */
		outer[0] += s->count;
		if ((!in_thread && (!strcmp(last, "_start") || strstr(last, "ld-linux")))
		    || (!in_main && strstr(last, "libc.so")))
			outer[1] += s->count;
		if (in_thread || in_main) {
			thr[0] += s->count;
			int64_t *mine = in_thread ? &thread_entry : &main_entry;
			if (*mine < 0)
				*mine = s->entry;
			if (*mine == s->entry)
				thr[1] += s->count;
		}
		if (!strcmp(leaf, "cmp_work")) {
			/* cmp_work, qsort's frames (libc's, or ASan's
			   interceptor's), then sort_work */
			cmp[0] += s->count;
			unsigned k = 1;
			while (k < s->depth && !is_main(names[k]))
				k++;
			if (k > 1 && k < s->depth && !strcmp(names[k], "sort_work"))
				cmp[1] += s->count;
		}
		if (!strcmp(leaf, "rec_leaf")) {
			rec[0] += s->count;
			unsigned k = 1, n = 0;
			while (k < s->depth && !strcmp(names[k], "recurse"))
				k++, n++;
			if (n == 12 && k < s->depth && !strcmp(names[k], "recursion_work"))
				rec[1] += s->count;
		}
		if (strstr(leaf, "libz.so")) {
			zl[0] += s->count;
			unsigned k = 1;
			while (k < s->depth && !is_main(names[k]))
				k++;
			if (k < s->depth && !strcmp(names[k], "zlib_work"))
				zl[1] += s->count;
		}
	}
	if (main_entry >= 0 && main_entry == thread_entry)
		entries_apart = 0;
	static const char *why_names[] = { "complete", "no-object", "no-cfi", "bad-read",
					   "depth", "not-increasing", "copy", "no-room" };
	printf("stacks %llu (ext: %llu kept, %llu unplaced; counted %llu, outside %llu)\n",
	       (unsigned long long)total, (unsigned long long)p.ext->stacks,
	       (unsigned long long)p.ext->stacks_unplaced, (unsigned long long)p.header->counted,
	       (unsigned long long)p.header->outside);
	for (int i = 0; i < 8; i++)
		if (by_stop[i])
			printf("  %-15s %8llu %7.3f%%\n", why_names[i], (unsigned long long)by_stop[i],
			       total ? 100.0 * by_stop[i] / total : 0);
	int with_zlib = !strcmp(argv[3], "calls");
	if (!with_zlib && strcmp(argv[3], "calls-nozlib") != 0)
		return total ? 0 : 1;
	double pc = total ? 100.0 * by_stop[0] / total : 0;
	printf("complete %.3f%%; qsort callback %llu/%llu, recursion %llu/%llu, zlib %llu/%llu, "
	       "outermost %llu/%llu\n", pc, (unsigned long long)cmp[1], (unsigned long long)cmp[0],
	       (unsigned long long)rec[1], (unsigned long long)rec[0], (unsigned long long)zl[1],
	       (unsigned long long)zl[0], (unsigned long long)outer[1], (unsigned long long)outer[0]);
	if (pc < 99.5)
		no("complete stacks", pc, 99.5);
#define SHARE(a) ((a)[0] ? 100.0 * (a)[1] / (a)[0] : 0)
	share("cmp_work under qsort under sort_work", cmp, 99.5);
	share("rec_leaf under recurse x12 under recursion_work", rec, 99.5);
	if (with_zlib)
		share("libz under zlib_work", zl, 99.5);
	if (SHARE(outer) < 99.5)
		no("outermost frame _start (main) or libc (thread)", SHARE(outer), 99.5);
	if (SHARE(thr) < 100 || !entries_apart || thread_entry < 0 || main_entry < 0) {
		printf("not ok: thread entries: main %lld, thread %lld, %llu/%llu consistent\n",
		       (long long)main_entry, (long long)thread_entry, (unsigned long long)thr[1],
		       (unsigned long long)thr[0]);
		fail = 1;
	}
	uint64_t sum_kept = p.ext->stacks;
	if (sum_kept != total) {
		printf("not ok: the slots hold %llu samples, the page says %llu\n",
		       (unsigned long long)total, (unsigned long long)sum_kept);
		fail = 1;
	}
	profile_close(&p);
	return fail;
}
