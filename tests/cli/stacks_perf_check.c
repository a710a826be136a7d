/*
 * stacks_perf_check PROFILE SYMS [--folded] - for stacks_perf.sh: the
 * stacks of stacks_perf_work's profile against the call structure the
 * program has.  Each pc is named from SYMS (the program's functions,
 * libc, libz; "other" for the rest: the loader, the vDSO, _start) and
 * every complete stack is checked frame by frame: the next function of
 * the program above each one is one that calls it (cmp: phase_sort, with
 * qsort's frames between; rec: rec or phase_rec; a phase: thread_main;
 * thread_main: run_work in the main thread, nothing in the other one).
 *
 * Prints "samples N complete C wrong W main M other O", the statistics'
 * stop counts, and exits 1 if the file cannot be read.  With --folded,
 * prints the complete stacks instead, outermost first, as "a;b;c COUNT",
 * library frames named by their library.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/format/profile.h"

struct range {
	char name[32];
	uint64_t lo, hi;
	int fn;		/* a function of the program, not a library */
};
static struct range ranges[32];
static int nranges;

static const char *name_of(uint64_t pc)
{
	for (int i = 0; i < nranges; i++)
		if (pc >= ranges[i].lo && pc < ranges[i].hi)
			return ranges[i].name;
	return "other";
}

static int is_fn(const char *name)
{
	for (int i = 0; i < nranges; i++)
		if (ranges[i].fn && strcmp(ranges[i].name, name) == 0)
			return 1;
	return 0;
}

/* May fn be called by caller (the next function of the program above
   it, NULL for none), with a library frame between or not, and with
   some frame between (ASan's qsort is its own, in libasan)? */
static int calls(const char *fn, const char *caller, int lib_between, int between)
{
#define IS(a, b) (strcmp(a, b) == 0)
	if (IS(fn, "cmp"))
		return caller && IS(caller, "phase_sort") && between;
	if (IS(fn, "rec"))
		return caller && (IS(caller, "rec") || IS(caller, "phase_rec")) && !lib_between;
	if (IS(fn, "phase_rec") || IS(fn, "phase_sort") || IS(fn, "phase_zlib"))
		return caller && IS(caller, "thread_main") && !lib_between;
	if (IS(fn, "thread_main"))
		return caller ? IS(caller, "run_work") && !lib_between : lib_between;
	if (IS(fn, "run_work"))
		return caller && IS(caller, "main") && !lib_between;
	if (IS(fn, "main"))
		return !caller;
	return 0;
#undef IS
}

/* A complete stack with the program's callers?  names innermost first. */
static int right(const char **names, unsigned n)
{
	/* A leaf in libz is zlib's work for phase_zlib. */
	if (strcmp(names[0], "libz") == 0) {
		unsigned k = 1;
		while (k < n && !is_fn(names[k]))
			k++;
		if (k == n || strcmp(names[k], "phase_zlib") != 0)
			return 0;
	}
	for (unsigned i = 0; i < n; i++) {
		if (!is_fn(names[i]))
			continue;
		unsigned k = i + 1;
		int lib = 0;
		while (k < n && !is_fn(names[k]))
			lib |= strcmp(names[k++], "other") != 0;
		if (!calls(names[i], k < n ? names[k] : NULL, lib, k > i + 1))
			return 0;
		/* A function's own recursion aside, one frame per call. */
		if (k < n && strcmp(names[i], names[k]) == 0 && strcmp(names[i], "rec") != 0)
			return 0;
	}
	return 1;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: stacks_perf_check PROFILE SYMS [--folded]\n");
		return 2;
	}
	int folded = argc > 3 && strcmp(argv[3], "--folded") == 0;
	FILE *f = fopen(argv[2], "r");
	if (!f) {
		perror(argv[2]);
		return 1;
	}
	char kind[8];
	while (nranges < 32 && fscanf(f, "%7s %31s %" SCNx64 " %" SCNx64, kind,
				      ranges[nranges].name, &ranges[nranges].lo,
				      &ranges[nranges].hi) == 4) {
		ranges[nranges].fn = strcmp(kind, "fn") == 0;
		nranges++;
	}
	fclose(f);

	struct profile p;
	char why[512];
	if (profile_open(&p, argv[1], why, sizeof why) != 0) {
		fprintf(stderr, "%s: %s\n", argv[1], why);
		return 1;
	}
	if (!p.ext || !p.nstacks) {
		fprintf(stderr, "%s: no stacks\n", argv[1]);
		profile_close(&p);
		return 1;
	}
	uint64_t samples = 0, complete = 0, wrong = 0, in_main = 0, in_other = 0;
	uint64_t by_stop[PROFILE_STOP_COUNT] = { 0 };
	for (uint64_t i = 0; i < p.nstacks; i++) {
		const struct profile_stack *s = &p.stacks[i];
		const uint64_t *pcs = profile_stack_pcs(&p, s);
		if (!pcs)
			continue;
		const char *names[PROFILE_DEPTH_MAX];
		/* A return address is one past its call: looked up at pc-1. */
		for (unsigned k = 0; k < s->depth; k++)
			names[k] = name_of(k ? pcs[k] - 1 : pcs[k]);
		samples += s->count;
		by_stop[s->stop < PROFILE_STOP_COUNT ? s->stop : 0] += s->count;
		if (folded && s->stop == PROFILE_STOP_COMPLETE) {
			for (unsigned k = s->depth; k-- > 0;)
				printf("%s%s", names[k], k ? ";" : "");
			printf(" %" PRIu32 "\n", s->count);
			continue;
		}
		if (s->stop != PROFILE_STOP_COMPLETE || folded)
			continue;
		complete += s->count;
		if (!right(names, s->depth)) {
			if (wrong < 10) {	/* the first few, to see why */
				fprintf(stderr, "wrong (%" PRIu32 "):", s->count);
				for (unsigned k = 0; k < s->depth; k++)
					fprintf(stderr, " %s@%#" PRIx64, names[k], pcs[k]);
				fprintf(stderr, "\n");
			}
			wrong += s->count;
			continue;
		}
		for (unsigned k = 0; k < s->depth; k++)
			if (strcmp(names[k], "thread_main") == 0) {
				if (k + 1 < s->depth && strcmp(names[k + 1], "run_work") == 0)
					in_main += s->count;
				else
					in_other += s->count;
				break;
			}
	}
	if (!folded) {
		const struct profile_ext *e = p.ext;
		printf("samples %" PRIu64 " complete %" PRIu64 " wrong %" PRIu64 " main %" PRIu64
		       " other %" PRIu64 "\n", samples, complete, wrong, in_main, in_other);
		printf("file: backend %" PRId32 " fallback %" PRIu32 " taken %" PRIu64
		       " lost %" PRIu64 " counted %" PRIu64
		       " system %" PRIu64 " stacks %" PRIu64 " unplaced %" PRIu64 " copy %" PRIu32
		       " depth %" PRIu32 "\n", p.header->backend, p.header->threads_fallback,
		       p.header->taken, p.header->lost, p.header->counted, p.system, e->stacks, e->stacks_unplaced, e->stack_copy,
		       e->max_depth);
		printf("stop:");
		for (int k = 0; k < PROFILE_STOP_COUNT; k++)
			printf(" %" PRIu64, e->stop[k]);
		printf("\nslots by stop:");
		for (int k = 0; k < PROFILE_STOP_COUNT; k++)
			printf(" %" PRIu64, by_stop[k]);
		printf("\n");
	}
	profile_close(&p);
	return 0;
}
