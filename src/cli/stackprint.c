/*
 * stackprint.c - report's views of the call stacks (stackprint.h): the
 * statistics line, the total column of the flat profile, --callers and
 * --callees, --tree, and folded stacks for export.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cxxname.h"
#include "jsonout.h"
#include "rows.h"
#include "stackprint.h"
#include "stacks.h"

#define NAME_MAX_TEXT 60

/* enum profile_stop, as the statistics line names them. */
static const char *const stop_names[PROFILE_STOP_COUNT] = {
	[PROFILE_STOP_NO_OBJECT] = "no unwind tables",
	[PROFILE_STOP_NO_CFI] = "no rule for a pc",
	[PROFILE_STOP_BAD_READ] = "read outside the stack",
	[PROFILE_STOP_DEPTH] = "too deep",
	[PROFILE_STOP_NOT_INCREASING] = "frame address backwards",
	[PROFILE_STOP_COPY] = "past perf's copy",
};

void stacks_note(const struct model *m)
{
	if (!stacks_present(m))
		return;
	const struct model_stacks *s = m->stacks;
	uint64_t walks = 0;
	for (int i = 0; i < PROFILE_STOP_COUNT; i++)
		walks += s->stop[i];
	/* Of the samples counted in an object: those outside every object
	   (JIT code) never have a stack, and the header says how many. */
	printf("stacks: %" PRIu64 " samples with a stack (%.1f%% of those counted), %.1f%% of them "
	       "complete", s->recorded, m->counted ? 100.0 * s->recorded / m->counted : 0.0,
	       walks ? 100.0 * s->stop[PROFILE_STOP_COMPLETE] / walks : 0.0);
	const char *sep = " (ended: ";
	for (int i = 1; i < PROFILE_STOP_COUNT; i++) {
		if (!s->stop[i])
			continue;
		printf("%s%s %" PRIu64, sep, stop_names[i] ? stop_names[i] : "other", s->stop[i]);
		sep = ", ";
	}
	if (*sep == ',')
		putchar(')');
	if (s->unplaced)
		printf("; %" PRIu64 " not kept (the table was full)", s->unplaced);
	putchar('\n');
}

void stacks_json(const struct model *m)
{
	if (!stacks_present(m)) {
		printf("\"stacks\":null,");
		return;
	}
	const struct model_stacks *s = m->stacks;
	printf("\"stacks\":{\"samples\":%" PRIu64 ",\"not_kept\":%" PRIu64 ",\"complete\":%" PRIu64,
	       s->recorded, s->unplaced, s->stop[PROFILE_STOP_COMPLETE]);
	static const char *const keys[PROFILE_STOP_COUNT] = {
		[PROFILE_STOP_NO_OBJECT] = "no_object", [PROFILE_STOP_NO_CFI] = "no_cfi",
		[PROFILE_STOP_BAD_READ] = "bad_read", [PROFILE_STOP_DEPTH] = "depth",
		[PROFILE_STOP_NOT_INCREASING] = "not_increasing", [PROFILE_STOP_COPY] = "copy",
	};
	for (int i = 1; i < PROFILE_STOP_COUNT; i++)
		if (keys[i])
			printf(",\"%s\":%" PRIu64, keys[i], s->stop[i]);
	printf("},");
}

static int hotter_func(const void *a, const void *b, void *arg)
{
	const uint64_t *total = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	if (total[x] != total[y])
		return total[x] < total[y] ? 1 : -1;
	return (x > y) - (x < y);
}

/* The function of a row: an object's anonymous code is of no object in
   the stacks (their pcs were in no segment). */
static size_t row_func(const struct stacks *s, const struct row *x)
{
	size_t f = stacks_func(s, x->object, x->name);
	if (f == SIZE_MAX && (x->object->flags & OBJECT_ANON))
		f = stacks_func(s, NULL, x->name);
	return f;
}

uint64_t *stacks_row_totals(const struct stacks *s, struct rows *r, int inlines)
{
	uint64_t *total = xmalloc((s->nfuncs + 1) * sizeof *total);
	uint64_t *self = xmalloc((s->nfuncs + 1) * sizeof *self);
	stacks_totals(s, total, self);
	char *has_row = xmalloc(s->nfuncs + 1);
	memset(has_row, 0, s->nfuncs + 1);
	for (size_t i = 0; i < r->n; i++) {
		size_t f = row_func(s, &r->v[i]);
		if (f != SIZE_MAX)
			has_row[f] = 1;
	}
	/* The functions that only call others: rows of their own. */
	size_t *order = xmalloc((s->nfuncs + 1) * sizeof *order), n = 0;
	for (size_t f = 0; f < s->nfuncs; f++)
		if (!has_row[f] && total[f] && s->funcs[f].object && (inlines || !s->funcs[f].inlined))
			order[n++] = f;
	qsort_r(order, n, sizeof *order, hotter_func, total);
	if (r->n + n > r->cap) {
		r->cap = r->n + n;
		r->v = xrealloc(r->v, r->cap * sizeof *r->v);
	}
	for (size_t i = 0; i < n; i++) {
		const struct stack_func *sf = &s->funcs[order[i]];
		r->v[r->n++] = (struct row){ xstrdup(sf->name), NULL, sf->object, sf->start, 0, 0, 0, 0 };
	}
	/* By symbol (not --inline), a row's samples in code inlined into it
	   have the inlined function as their innermost frame: what the
	   stacks hold of the row is then the samples whose innermost frame
	   not inlined is the row's function. */
	if (!inlines) {
		memset(self, 0, s->nfuncs * sizeof *self);
		for (size_t i = 0; i < s->n; i++) {
			const struct stack *st = &s->v[i];
			size_t d = st->depth;
			while (d > 1 && s->funcs[st->funcs[d - 1]].inlined)
				d--;
			if (d)
				self[st->funcs[d - 1]] += st->count;
		}
	}
	/* A sample counted without a stack (the perf backend's kernel time,
	   a walk that could not start) is a stack of its function alone:
	   a total is never below the row's own samples. */
	uint64_t *out = xmalloc((r->n + 1) * sizeof *out);
	for (size_t i = 0; i < r->n; i++) {
		size_t f = row_func(s, &r->v[i]);
		uint64_t stacked = f == SIZE_MAX ? 0 : self[f];
		out[i] = (f == SIZE_MAX ? 0 : total[f])
			 + (r->v[i].count > stacked ? r->v[i].count - stacked : 0);
	}
	free(self);
	free(order);
	free(has_row);
	free(total);
	return out;
}

static const char *func_label(const struct stacks *s, size_t f, int full, char *buf, size_t len)
{
	if (f == STACK_ROOT)
		return "[outermost]";
	if (f == STACK_SELF)
		return "[self]";
	const struct stack_func *sf = &s->funcs[f];
	char shortened[1024];
	const char *name = full ? sf->name : cxxname_short(sf->name, NAME_MAX_TEXT, shortened,
							   sizeof shortened);
	if (sf->object)
		snprintf(buf, len, "%s (%s)", name, base_name(sf->object->path));
	else
		snprintf(buf, len, "%s", name);
	return buf;
}

/* The functions want names: as --annotate matches them, and a C
   function's clones by gcc (want.constprop.0, want.part.0, want.cold). */
static size_t matching(const struct stacks *s, const char *want, size_t **out)
{
	*out = xmalloc((s->nfuncs + 1) * sizeof **out);
	size_t n = 0, len = strlen(want);
	for (size_t f = 0; f < s->nfuncs; f++) {
		const char *name = s->funcs[f].name;
		if (strcmp(name, want) == 0 || cxxname_matches(name, want)
		    || (strncmp(name, want, len) == 0 && name[len] == '.'))
			(*out)[n++] = f;
	}
	return n;
}

int stacks_print_neighbours(const struct model *m, const struct stacks *s, const char *want,
			    int callees, int json, int full)
{
	const char *opt = callees ? "--callees" : "--callers";
	if (!stacks_present(m)) {
		error_line("%s: the profile has no call stacks (profil run records them)", opt);
		return 1;
	}
	size_t *fs, n = matching(s, want, &fs);
	if (!n) {
		error_line("%s '%s': no function of that name in the stacks", opt, want);
		free(fs);
		return 1;
	}
	uint64_t *total = xmalloc((s->nfuncs + 1) * sizeof *total);
	stacks_totals(s, total, NULL);
	uint64_t all = model_samples(m) ? model_samples(m) : 1;
	char label[2048];
	if (json)
		printf("{\"samples\":%" PRIu64 ",\"stack_samples\":%" PRIu64 ",\"functions\":[", all,
		       s->samples);
	for (size_t i = 0; i < n; i++) {
		size_t f = fs[i];
		struct stack_edge *e;
		size_t k = callees ? stacks_callees(s, f, &e) : stacks_callers(s, f, &e);
		const struct stack_func *sf = &s->funcs[f];
		if (json) {
			printf("%s{\"function\":", i ? "," : "");
			json_string(stdout, sf->name, 0);
			printf(",\"object\":");
			json_string(stdout, sf->object ? sf->object->path : "", 0);
			printf(",\"total_samples\":%" PRIu64 ",\"total_percent\":%.4f,\"%s\":[",
			       total[f], 100.0 * total[f] / all, callees ? "callees" : "callers");
			for (size_t j = 0; j < k; j++) {
				const char *name = e[j].func == STACK_ROOT ? "[outermost]"
						   : e[j].func == STACK_SELF ? "[self]"
									     : s->funcs[e[j].func].name;
				const struct object *o = e[j].func < s->nfuncs ? s->funcs[e[j].func].object
									       : NULL;
				printf("%s{\"function\":", j ? "," : "");
				json_string(stdout, name, 0);
				printf(",\"object\":");
				json_string(stdout, o ? o->path : "", 0);
				printf(",\"samples\":%" PRIu64 ",\"share_percent\":%.4f}", e[j].count,
				       total[f] ? 100.0 * e[j].count / total[f] : 0.0);
			}
			printf("]}");
		} else {
			if (i)
				putchar('\n');
			printf("%s of %s: %" PRIu64 " samples in its stacks (%.2f%% of all)\n",
			       callees ? "Callees" : "Callers", func_label(s, f, full, label, sizeof label),
			       total[f], 100.0 * total[f] / all);
			printf("%7s %9s  %s\n", "share", "samples", callees ? "callee" : "caller");
			for (size_t j = 0; j < k; j++)
				printf("%6.2f%% %9" PRIu64 "  %s\n",
				       total[f] ? 100.0 * e[j].count / total[f] : 0.0, e[j].count,
				       func_label(s, e[j].func, full, label, sizeof label));
		}
		free(e);
	}
	if (json)
		printf("]}\n");
	free(total);
	free(fs);
	return 0;
}

static void tree_text(const struct stacks *s, const struct stack_tree *t, size_t node,
		      unsigned level, uint64_t all, double threshold, int full)
{
	char label[2048];
	for (size_t c = t->v[node].child; c != STACK_NONE; c = t->v[c].next) {
		const struct stack_node *x = &t->v[c];
		double pct = 100.0 * x->total / all;
		if (pct < threshold)
			continue;	/* the rest are colder still */
		printf("%6.2f%% %6.2f%% %9" PRIu64 "  %*s%s\n", pct, 100.0 * x->self / all, x->total,
		       (int)(2 * (level < 64 ? level : 64)), "",
		       func_label(s, x->func, full, label, sizeof label));
		tree_text(s, t, c, level + 1, all, threshold, full);
	}
}

static void tree_json(const struct stacks *s, const struct stack_tree *t, size_t node,
		      uint64_t all, double threshold)
{
	int first = 1;
	for (size_t c = t->v[node].child; c != STACK_NONE; c = t->v[c].next) {
		const struct stack_node *x = &t->v[c];
		if (100.0 * x->total / all < threshold)
			continue;
		const struct stack_func *sf = &s->funcs[x->func];
		printf("%s{\"function\":", first ? "" : ",");
		json_string(stdout, sf->name, 0);
		printf(",\"object\":");
		json_string(stdout, sf->object ? sf->object->path : "", 0);
		printf(",\"total_samples\":%" PRIu64 ",\"self_samples\":%" PRIu64 ",\"children\":[",
		       x->total, x->self);
		tree_json(s, t, c, all, threshold);
		printf("]}");
		first = 0;
	}
}

int stacks_print_tree(const struct model *m, const struct stacks *s, double threshold, int json,
		      int full)
{
	if (!stacks_present(m)) {
		error_line("--tree: the profile has no call stacks (profil run records them)");
		return 1;
	}
	struct stack_tree t;
	stacks_tree(s, STACK_ALL_THREADS, 0, &t);
	uint64_t all = model_samples(m) ? model_samples(m) : 1;
	if (json) {
		printf("{\"samples\":%" PRIu64 ",\"stack_samples\":%" PRIu64 ",\"tree\":[", all,
		       s->samples);
		tree_json(s, &t, 0, all, threshold);
		printf("]}\n");
	} else {
		printf("Call tree: %" PRIu64 " samples with stacks of %" PRIu64 "; calls below %.2f%% "
		       "of all left out\n\n", s->samples, model_samples(m), threshold);
		printf("%7s %7s %9s  %s\n", "total%", "self%", "samples", "function");
		tree_text(s, &t, 0, 0, all, threshold, full);
	}
	stack_tree_free(&t);
	return 0;
}

/* A name as folded stacks can hold it: no ';' (the separator), no
   newline; the count is after the last space, so spaces may stay. */
static void folded_name(FILE *f, const char *name)
{
	for (; *name; name++)
		putc(*name == ';' ? ':' : *name == '\n' ? ' ' : *name, f);
}

int stacks_write_folded(const struct stacks *s, FILE *f)
{
	/* Per thread apart in the model: summed here, by their functions. */
	struct stack_tree t;
	stacks_tree(s, STACK_ALL_THREADS, 0, &t);
	size_t *path = xmalloc((t.n + 1) * sizeof *path);
	/* Depth first, a line for each node with samples of its own. */
	size_t depth = 0, node = t.v[0].child;
	while (node != STACK_NONE) {
		path[depth] = node;
		if (t.v[node].self) {
			for (size_t d = 0; d <= depth; d++) {
				if (d)
					putc(';', f);
				folded_name(f, s->funcs[t.v[path[d]].func].name);
			}
			fprintf(f, " %" PRIu64 "\n", t.v[node].self);
		}
		if (t.v[node].child != STACK_NONE) {
			node = t.v[node].child;
			depth++;
			continue;
		}
		while (node != STACK_NONE && t.v[node].next == STACK_NONE) {
			node = t.v[node].parent;
			if (node == 0)
				node = STACK_NONE;
			else
				depth--;
		}
		if (node != STACK_NONE)
			node = t.v[node].next;
	}
	free(path);
	stack_tree_free(&t);
	return ferror(f) ? -1 : 0;
}
