/*
 * diff_flame.c - the differential flame graph of report --html --diff:
 * the new profile's call stacks as an icicle (outermost frame at the
 * top), each frame as wide as its share of the new profile's samples
 * and coloured by how that share changed from the base: redder where
 * the frame's stacks hold more of the samples, bluer where they hold
 * fewer, white where nothing changed.  A frame is matched to the base's
 * by its path from the outermost frame, each step a function and its
 * object's file name, as diff.c matches functions: across rebuilds.
 *
 * Plain SVG with a title on each frame and no script, as the rest of
 * the diff page: frames narrower than a pixel are left out, with their
 * callees, so that the size is bounded by width times depth.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "diff.h"
#include "stacks.h"

#define WIDTH 1200.0	/* px of the root frame */
#define LEVEL 17	/* px a level */
#define MAX_FRAMES 20000
#define GREY 225	/* each channel of an unchanged frame */
static const int grew[3] = { 235, 70, 60 }, fell[3] = { 80, 130, 235 };

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + UINT64_C(0x9e3779b97f4a7c15) + (h << 6) + (h >> 2);
	return h * UINT64_C(0xff51afd7ed558ccd);
}

static uint64_t str_hash(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * UINT64_C(0x100000001b3);
	return h;
}

static const char *file_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* Each function's key: its name and its object's file name. */
static uint64_t *func_keys(const struct stacks *s)
{
	uint64_t *k = xmalloc((s->nfuncs + 1) * sizeof *k);
	for (size_t i = 0; i < s->nfuncs; i++) {
		const struct stack_func *f = &s->funcs[i];
		uint64_t h = str_hash(UINT64_C(0xcbf29ce484222325), f->name);
		k[i] = str_hash(h * 31 + 1, f->object ? file_name(f->object->path) : "");
	}
	return k;
}

/* Each node's path key; a node's parent comes before it in the tree. */
static uint64_t *path_keys(const struct stack_tree *t, const uint64_t *fk)
{
	uint64_t *p = xmalloc((t->n + 1) * sizeof *p);
	p[0] = 1;
	for (size_t i = 1; i < t->n; i++)
		p[i] = mix(p[t->v[i].parent], fk[t->v[i].func]);
	return p;
}

/* The base's totals by path: open addressing on the path key. */
struct base_paths {
	uint64_t *key, *total;
	size_t cap;
};

static void base_paths_make(struct base_paths *b, const struct stack_tree *t, const uint64_t *pk)
{
	b->cap = 16;
	while (b->cap < 2 * t->n)
		b->cap *= 2;
	b->key = xmalloc(b->cap * sizeof *b->key);
	b->total = xmalloc(b->cap * sizeof *b->total);
	memset(b->key, 0, b->cap * sizeof *b->key);
	for (size_t i = 1; i < t->n; i++) {
		uint64_t k = pk[i] ? pk[i] : 1;
		size_t j = k & (b->cap - 1);
		while (b->key[j] && b->key[j] != k)
			j = (j + 1) & (b->cap - 1);
		if (!b->key[j]) {
			b->key[j] = k;
			b->total[j] = 0;
		}
		b->total[j] += t->v[i].total;
	}
}

static uint64_t base_total(const struct base_paths *b, uint64_t k)
{
	k = k ? k : 1;
	for (size_t j = k & (b->cap - 1); b->key[j]; j = (j + 1) & (b->cap - 1))
		if (b->key[j] == k)
			return b->total[j];
	return 0;
}

/* The next node of a preorder walk from i, or STACK_NONE. */
static size_t next_node(const struct stack_tree *t, size_t i, int descend)
{
	if (descend && t->v[i].child != STACK_NONE)
		return t->v[i].child;
	while (i != 0 && t->v[i].next == STACK_NONE)
		i = t->v[i].parent;
	return i == 0 ? STACK_NONE : t->v[i].next;
}

static void draw(FILE *f, const struct stacks *s, const struct stack_tree *t, const uint64_t *pk,
		 const struct base_paths *b, uint64_t base_samples)
{
	const double scale = WIDTH / (double)t->v[0].total;
	double *x = xmalloc((t->n + 1) * sizeof *x);
	size_t *depth = xmalloc((t->n + 1) * sizeof *depth);
	double most = 0;	/* the largest change drawn, in points */
	size_t levels = 0;
	/* Two walks: the first for the scale of the colours and the height. */
	for (int pass = 0; pass < 2; pass++) {
		size_t drawn = 0;
		x[0] = 0;
		depth[0] = 0;
		for (size_t i = t->v[0].child; i != STACK_NONE;) {
			const struct stack_node *n = &t->v[i];
			if (i == t->v[n->parent].child)	/* else its elder sibling set it */
				x[i] = x[n->parent];
			depth[i] = depth[n->parent] + 1;
			double w = (double)n->total * scale;
			if (n->next != STACK_NONE)
				x[n->next] = x[i] + w;
			int shown = w >= 1.0 && drawn < MAX_FRAMES;
			if (shown) {
				drawn++;
				double now = 100.0 * (double)n->total / (double)t->v[0].total;
				double was = base_samples ? 100.0 * (double)base_total(b, pk[i])
								    / (double)base_samples : 0;
				double d = now - was;
				if (pass == 0) {
					most = fabs(d) > most ? fabs(d) : most;
					levels = depth[i] > levels ? depth[i] : levels;
				} else {
					/* light grey for no change, to red or to blue
					   for the largest, light enough for the names */
					double a = most > 0 ? fabs(d) / most : 0;
					const int *to = d > 0 ? grew : fell;
					int r = (int)lround(GREY + a * (to[0] - GREY));
					int g = (int)lround(GREY + a * (to[1] - GREY));
					int bl = (int)lround(GREY + a * (to[2] - GREY));
					const struct stack_func *fn = &s->funcs[n->func];
					fprintf(f, "<g><title>");
					html_escape(f, fn->name, 4096);
					if (fn->object) {
						fputs(" (", f);
						html_escape(f, file_name(fn->object->path), 4096);
						fputc(')', f);
					}
					fprintf(f, ": new %.2f%%, base %.2f%%, %+.2f points</title>"
						"<rect x=\"%.1f\" y=\"%zu\" width=\"%.1f\" height=\"%d\" "
						"fill=\"rgb(%d,%d,%d)\"/>",
						now, was, d, x[i], (depth[i] - 1) * LEVEL, w, LEVEL - 1, r,
						g, bl);
					size_t chars = w > 20 ? (size_t)((w - 6) / 7) : 0;
					if (chars >= 3) {
						fprintf(f, "<text x=\"%.1f\" y=\"%zu\">", x[i] + 3,
							(depth[i] - 1) * LEVEL + 12);
						size_t len = strlen(fn->name);
						html_escape(f, fn->name, len > chars ? chars - 2 : len);
						if (len > chars)
							fputs("..", f);
						fputs("</text>", f);
					}
					fputs("</g>\n", f);
				}
			}
			i = next_node(t, i, shown);
		}
		if (pass == 0)
			fprintf(f, "<svg id=\"flame\" xmlns=\"http://www.w3.org/2000/svg\" "
				"width=\"%.0f\" height=\"%zu\" font-family=\"monospace\" "
				"font-size=\"11\">\n", WIDTH, levels * LEVEL + 2);
	}
	fputs("</svg>\n", f);
	free(depth);
	free(x);
}

void diff_flame(FILE *f, const struct model *base, struct symbols **base_syms,
		const struct model *new, struct symbols **new_syms)
{
	fputs("<h2>Differential flame graph</h2>\n", f);
	if (!stacks_present(base) || !stacks_present(new)) {
		fprintf(f, "<p>None: %s profile was recorded without call stacks.</p>\n",
			!stacks_present(new) ? "the new" : "the base");
		return;
	}
	stacks_open_symbols(base, base_syms);
	stacks_open_symbols(new, new_syms);
	struct stacks bs, ns;
	stacks_build(&bs, base, base_syms);
	stacks_build(&ns, new, new_syms);
	struct stack_tree bt, nt;
	stacks_tree(&bs, STACK_ALL_THREADS, 0, &bt);
	stacks_tree(&ns, STACK_ALL_THREADS, 0, &nt);
	if (!nt.v[0].total || !bt.v[0].total) {
		fputs("<p>None: a profile has no samples with a stack.</p>\n", f);
	} else {
		fputs("<p>The new profile's call stacks, the outermost frame at the top, each "
		      "frame as wide as its share of the new samples; redder where that share "
		      "grew since the base, bluer where it fell, the deepest colour the largest "
		      "change.  A frame's title gives both shares.</p>\n", f);
		uint64_t *bk = func_keys(&bs), *nk = func_keys(&ns);
		uint64_t *bp = path_keys(&bt, bk), *np = path_keys(&nt, nk);
		struct base_paths b;
		base_paths_make(&b, &bt, bp);
		draw(f, &ns, &nt, np, &b, bt.v[0].total);
		free(b.key);
		free(b.total);
		free(bp);
		free(np);
		free(bk);
		free(nk);
	}
	stack_tree_free(&bt);
	stack_tree_free(&nt);
	stacks_free(&bs);
	stacks_free(&ns);
}
